import Foundation
@testable import ObjectGraph
import GRDB
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest
import ZIPFoundation

/// Export, import, backup, restore and the scheduled housekeeping.
final class ExportAndBackupTests: AppTestCase {
    /// A library with a bit of everything: folders, tags, an image, notes, a favourite, a trashed
    /// snippet and a saved search.
    private func fillLibrary() async throws {
        try await createSnippet(SnippetUpload(title: "Decode JSON", language: "swift", newFolder: "Work", newTags: "swift, json",
                                              code: "let x = 1\n", notes: "Uses **Codable**.", image: File(data: ByteBuffer(data: tinyPNG), filename: "a.png"),
                                              isFavorite: "1"))
        try await createSnippet(SnippetUpload(title: "List files", language: "shell", newFolder: "Ops", newTags: "cli", code: "ls -la"))
        try await createSnippet(SnippetUpload(title: "Same title", language: "python", code: "print(1)"))
        try await createSnippet(SnippetUpload(title: "Same title", language: "python", code: "print(2)"))
        let binned = try await createSnippet(SnippetUpload(title: "In the bin", code: "old"))
        try await send(.POST, "/snippets/\(binned)/delete")
        try await send(.POST, "/searches", beforeRequest: { req async throws in
            try req.content.encode(["name": "Swift things", "query": "q=swift"], as: .urlEncodedForm)
        }, afterResponse: { _ in })
    }

    private func download(_ path: String, as session: TestSession? = nil) async throws -> (HTTPResponseHeaders, Data) {
        var result = (HTTPHeaders(), Data())
        try await send(.GET, path, as: session) { response async throws in
            XCTAssertEqual(response.status, .ok, path)
            result = (response.headers, Data(buffer: response.body))
        }
        return result
    }

    typealias HTTPResponseHeaders = HTTPHeaders

    private func importFile(_ data: Data, named fileName: String = "export.json", as session: TestSession? = nil) async throws -> (HTTPStatus, String) {
        var result: (HTTPStatus, String) = (.ok, "")
        struct Upload: Content { var file: File }
        try await send(.POST, "/data/import", as: session, beforeRequest: { req async throws in
            try req.content.encode(Upload(file: File(data: ByteBuffer(data: data), filename: fileName)), as: .formData)
        }, afterResponse: { response async throws in
            result = (response.status, response.body.string)
        })
        return result
    }

    /// An export without its time stamp, to compare two of them.
    private func comparable(_ data: Data) throws -> LibraryExport {
        var export = try LibraryExport.read(data)
        export.exportedAt = Date(timeIntervalSince1970: 0)
        return export
    }

    func testExportThenImportIntoAnotherAccountGivesTheSameLibrary() async throws {
        try await fillLibrary()
        let (headers, json) = try await download("/data/export.json")
        XCTAssertTrue(headers.first(name: .contentDisposition)?.contains("attachment") == true)
        let export = try comparable(json)
        XCTAssertEqual(export.snippets.count, 5)
        XCTAssertEqual(export.snippets.first { $0.title == "Decode JSON" }?.image?.data, tinyPNG)
        XCTAssertTrue(String(decoding: json, as: UTF8.self).contains(tinyPNG.base64EncodedString()), "images inline as base64")

        try await addAccount("copy")
        let copy = try await logIn("copy")
        let (status, body) = try await importFile(json, as: copy)
        expectStatus(.ok, status)
        XCTAssertTrue(body.contains("5 added, 0 updated, 0 already here, 0 skipped."), body)
        let (_, copied) = try await download("/data/export.json", as: copy)
        XCTAssertEqual(try comparable(copied), export)
        let trashPage = try await page("/trash")
        XCTAssertTrue(trashPage.contains("In the bin"))

        // Importing the same file again changes nothing.
        let (_, again) = try await importFile(json, as: copy)
        XCTAssertTrue(again.contains("0 added, 0 updated, 5 already here, 0 skipped."), again)
        let (_, unchanged) = try await download("/data/export.json", as: copy)
        XCTAssertEqual(try comparable(unchanged), export)
    }

    func testImportUpdatesChangedSnippetsAndSkipsInvalidOnes() async throws {
        try await fillLibrary()
        let (_, json) = try await download("/data/export.json")
        var export = try LibraryExport.read(json)
        let index = try XCTUnwrap(export.snippets.firstIndex { $0.title == "List files" })
        export.snippets[index].code = "ls -lah"
        export.snippets[index].title = "Äll files, listed"
        export.snippets[index].updatedAt = export.snippets[index].updatedAt.addingTimeInterval(60)
        var bad = export.snippets[index]
        bad.uuid = UUID()
        bad.language = "klingon"
        var fake = export.snippets[index]
        fake.uuid = UUID()
        fake.title = "Fake image"
        fake.image = .init(contentType: "image/png", data: Data("not a png".utf8))
        export.snippets += [bad, fake]
        let (status, body) = try await importFile(try LibraryExport.encoder().encode(export))
        expectStatus(.ok, status)
        XCTAssertTrue(body.contains("0 added, 1 updated, 4 already here, 2 skipped."), body)
        XCTAssertTrue(body.contains("unknown language"))
        XCTAssertTrue(body.contains("is not the PNG, JPEG, GIF or WebP it claims to be"))
        let updated = try withContext { try $0.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.title == "Äll files, listed" })).first }
        XCTAssertEqual(updated?.code, "ls -lah")
        XCTAssertEqual(updated?.titleSortKey, "all files, listed", "the new title's sort key came with it")
    }

    /// An import replaced a snippet with the file's record even when the library's copy was edited
    /// after the export was made: an old file undid newer work. The newer copy is kept.
    func testAnImportKeepsASnippetEditedAfterTheFile() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Deploy", code: "v1"))
        let (_, json) = try await download("/data/export.json")
        try withContext { context in
            let snippet = try XCTUnwrap(try Lookup.snippet(try XCTUnwrap(UUID(uuidString: id)), in: context))
            snippet.code = "v2, edited after the export"
            snippet.updatedAt = snippet.updatedAt.addingTimeInterval(60)
            try context.save()
        }
        let (status, body) = try await importFile(json)
        expectStatus(.ok, status)
        XCTAssertTrue(body.contains("0 added, 0 updated, 0 already here, 1 skipped."), body)
        XCTAssertTrue(body.contains("“\u{2068}Deploy\u{2069}”: the library&#39;s copy was edited after the file&#39;s, so it was kept"), body)
        let code = { try self.withContext { try $0.fetch(FetchDescriptor<Snippet>()).map(\.code) } }
        XCTAssertEqual(try code(), ["v2, edited after the export"])

        // A file whose record is the newer one still updates the snippet.
        var newer = try LibraryExport.read(json)
        newer.snippets[0].code = "v3, from the file"
        newer.snippets[0].updatedAt = newer.snippets[0].updatedAt.addingTimeInterval(120)
        let (_, again) = try await importFile(try LibraryExport.encoder().encode(newer))
        XCTAssertTrue(again.contains("0 added, 1 updated, 0 already here, 0 skipped."), again)
        XCTAssertEqual(try code(), ["v3, from the file"])
    }

    /// An old export's trashed snippets kept their dates: one trashed more than 30 days before the import
    /// was purged at the next visit of the trash, though the import said "added"; and a record trashed
    /// in the file put the library's live snippet back in the trash, with its old date, to be purged too.
    func testAnImportPurgesNothingAndTrashesNothingLive() async throws {
        try await createSnippet(SnippetUpload(title: "Live here", code: "kept"))
        let (_, json) = try await download("/data/export.json")
        var export = try LibraryExport.read(json)
        let longAgo = Date.now.addingTimeInterval(-40 * 86_400)
        export.snippets[0].deletedAt = longAgo
        var old = export.snippets[0]
        old.uuid = UUID()
        old.title = "Trashed long ago"
        export.snippets.append(old)
        let (status, body) = try await importFile(try LibraryExport.encoder().encode(export))
        expectStatus(.ok, status)
        XCTAssertTrue(body.contains("1 added, 0 updated, 1 already here, 0 skipped."), body)

        _ = try await page("/trash")
        try withContext { context in
            let snippets = try context.fetch(FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.title)]))
            XCTAssertEqual(snippets.map(\.title), ["Live here", "Trashed long ago"], "nothing purged")
            guard snippets.count == 2 else { return }
            XCTAssertNil(snippets[0].deletedAt, "the live snippet stays out of the trash")
            let trashed = try XCTUnwrap(snippets[1].deletedAt)
            XCTAssertGreaterThan(trashed, Date.now.addingTimeInterval(LibraryImporter.trashStayAfterImport - Snippet.trashRetention - 60))
        }
        let (again, second) = try await importFile(try LibraryExport.encoder().encode(export))
        expectStatus(.ok, again)
        XCTAssertTrue(second.contains("0 added, 0 updated, 2 already here, 0 skipped."), second)
    }

    /// Importing an export made before a snippet went to the trash took it out again, reported as
    /// "updated": moving it to the trash does not change its date of edit, so the file's copy did not
    /// look older. The trash is kept unless the file's copy was edited after the snippet was trashed.
    func testAnImportOfAnEarlierExportLeavesATrashedSnippetInTheTrash() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Trashed after the export", code: "old"))
        let (_, json) = try await download("/data/export.json")
        try await send(.POST, "/snippets/\(id)/delete")
        let trashedAt = { try self.withContext { try $0.fetch(FetchDescriptor<Snippet>()).first?.deletedAt } }
        let trashed = try XCTUnwrap(try trashedAt())

        let (status, body) = try await importFile(json)
        expectStatus(.ok, status)
        XCTAssertTrue(body.contains("0 added, 0 updated, 1 already here, 0 skipped."), body)
        XCTAssertEqual(try trashedAt(), trashed, "still in the trash, since the same time")

        // A copy edited after the snippet was trashed here is newer work: it comes back with it.
        var edited = try LibraryExport.read(json)
        edited.snippets[0].code = "edited elsewhere after the trashing"
        edited.snippets[0].updatedAt = trashed.addingTimeInterval(60)
        let (_, again) = try await importFile(try LibraryExport.encoder().encode(edited))
        XCTAssertTrue(again.contains("0 added, 1 updated, 0 already here, 0 skipped."), again)
        XCTAssertNil(try trashedAt())
    }

    /// A record trashed at a date still to come stayed in the trash for ever ("deleted" years ahead,
    /// never purged), and outlived any "Empty the trash" asked before it: it counts as trashed now.
    func testAnImportTrashesNothingInTheFuture() async throws {
        try await createSnippet(SnippetUpload(title: "Will be exported"))
        let (_, json) = try await download("/data/export.json")
        var export = try LibraryExport.read(json)
        export.snippets[0].uuid = UUID()
        export.snippets[0].title = "Trashed ahead"
        export.snippets[0].deletedAt = Date.now.addingTimeInterval(5 * 365 * 86_400)
        let (status, body) = try await importFile(try LibraryExport.encoder().encode(export))
        expectStatus(.ok, status)
        XCTAssertTrue(body.contains("1 added"), body)
        let trashedAt = try withContext { context in
            try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.title == "Trashed ahead" })).first?.deletedAt)
        }
        XCTAssertLessThanOrEqual(trashedAt, Date.now)
        let (_, second) = try await importFile(try LibraryExport.encoder().encode(export))
        XCTAssertTrue(second.contains("0 added, 0 updated, 1 already here, 0 skipped."), second)
    }

    /// A file listing only snippets, whose folder and tags are the library's own: they were dropped
    /// from the snippet (Unfiled, untagged) and the report said "updated".
    func testAnImportKeepsTheLibrarysFolderAndTagsNamedById() async throws {
        try await createSnippet(SnippetUpload(title: "Filed", newFolder: "Keep", newTags: "keeptag"))
        let (_, json) = try await download("/data/export.json")
        var export = try LibraryExport.read(json)
        export.folders = []
        export.tags = []
        var titled = export.snippets[0]
        titled.uuid = UUID()
        titled.title = "Two\nlines"
        export.snippets.append(titled)
        let (status, body) = try await importFile(try LibraryExport.encoder().encode(export))
        expectStatus(.ok, status)
        XCTAssertTrue(body.contains("0 added, 0 updated, 1 already here, 1 skipped."), body)
        XCTAssertTrue(body.contains("the title is not one line of text"), body)
        try withContext { context in
            let snippet = try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>()).first)
            XCTAssertEqual(snippet.folder?.name, "Keep")
            XCTAssertEqual(snippet.tags.map(\.name), ["keeptag"])
        }
    }

    /// A date past Int's range in seconds made every page that showed it trap (the server with it).
    func testImportRefusesDatesPagesCannotShow() async throws {
        try await fillLibrary()
        let (_, json) = try await download("/data/export.json")
        var export = try LibraryExport.read(json)
        var late = try XCTUnwrap(export.snippets.first)
        late.uuid = UUID()
        late.title = "From far ahead"
        late.createdAt = Date(timeIntervalSince1970: 1e300)
        late.updatedAt = late.createdAt
        var early = late
        early.uuid = UUID()
        early.title = "From before year one"
        early.createdAt = Date(timeIntervalSince1970: -1e12)
        early.updatedAt = .now
        var binned = late
        binned.uuid = UUID()
        binned.title = "Binned far ahead"
        binned.createdAt = .now
        binned.updatedAt = .now
        binned.deletedAt = Date(timeIntervalSince1970: 1e19)
        export.snippets = [late, early, binned]
        export.folders = [.init(uuid: UUID(), name: "Timeless", createdAt: Date(timeIntervalSince1970: 1e19))]
        export.savedSearches = [.init(uuid: UUID(), name: "Forever", query: "q=x", createdAt: Date(timeIntervalSince1970: 1e300))]
        let (status, body) = try await importFile(try LibraryExport.encoder().encode(export))
        expectStatus(.ok, status)
        XCTAssertTrue(body.contains("0 added, 0 updated, 0 already here, 5 skipped."), body)
        XCTAssertEqual(body.components(separatedBy: "a date outside the years 1 to 9999").count - 1, 4, body)
        XCTAssertTrue(body.contains("saved search “\u{2068}Forever\u{2069}”: not valid"), body)
        try withContext { context in
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<Snippet>()), 5)
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<Folder>(predicate: #Predicate { $0.name == "Timeless" })), 0)
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<SavedSearch>(predicate: #Predicate { $0.name == "Forever" })), 0)
        }
    }

    /// A file that names a snippet, a tag or a folder twice gets one of each, and says so; one whose
    /// title has spaces around it is the same snippet when imported again.
    func testImportKeepsOneOfEachIdAndName() async throws {
        try await fillLibrary()
        let (_, json) = try await download("/data/export.json")
        var export = try LibraryExport.read(json)
        let template = try XCTUnwrap(export.snippets.first { $0.deletedAt == nil })
        var first = template
        first.uuid = UUID()
        first.title = "first copy"
        var second = first
        second.title = "second copy"
        let red = LibraryExport.TagRecord(uuid: UUID(), name: "Zz", color: "#ff0000")
        let green = LibraryExport.TagRecord(uuid: UUID(), name: "zz", color: "#00ff00")
        let upper = LibraryExport.FolderRecord(uuid: UUID(), name: "Proj", createdAt: .now)
        let lower = LibraryExport.FolderRecord(uuid: UUID(), name: "proj", createdAt: .now)
        var tagged = template
        tagged.uuid = UUID()
        tagged.title = "  padded  "
        tagged.tags = [green.uuid]
        tagged.folder = lower.uuid
        export.tags = [red, green]
        export.folders = [upper, lower]
        export.snippets = [first, second, tagged]
        export.savedSearches = []
        let file = try LibraryExport.encoder().encode(export)
        let (status, body) = try await importFile(file)
        expectStatus(.ok, status)
        XCTAssertTrue(body.contains("2 added, 0 updated, 0 already here, 1 skipped."), body)
        XCTAssertTrue(body.contains("its id is also an earlier snippet"), body)
        try withContext { context in
            let id = first.uuid
            XCTAssertEqual(try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.uuid == id })).map(\.title), ["first copy"])
            let tags = try context.fetch(FetchDescriptor<Tag>(predicate: #Predicate { $0.normalizedName == "zz" }))
            XCTAssertEqual(tags.map(\.uuid), [red.uuid], "the first of the two names, with its id and colour")
            let paddedID = tagged.uuid
            let padded = try XCTUnwrap(try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.uuid == paddedID })).first)
            XCTAssertEqual(padded.title, "padded")
            XCTAssertEqual(padded.tags.map(\.uuid), [red.uuid])
            XCTAssertEqual(padded.folder?.uuid, upper.uuid)
            XCTAssertEqual(try context.fetch(FetchDescriptor<Folder>()).filter { $0.name.lowercased() == "proj" }.count, 1)
        }
        let (_, again) = try await importFile(file)
        XCTAssertTrue(again.contains("0 added, 0 updated, 2 already here, 1 skipped."), again)
    }

    /// Saved searches in a file were taken as they came: one id twice kept the second, a name was
    /// neither trimmed nor compared with the library's (two sidebar entries of one name), and none
    /// was reported. They now pass the save-search form's checks and are listed.
    func testImportChecksSavedSearchesAsTheFormDoes() async throws {
        try await send(.POST, "/searches", beforeRequest: { req async throws in
            try req.content.encode(["name": "Swift things", "query": "q=swift"], as: .urlEncodedForm)
        }, afterResponse: { _ in })
        let (_, json) = try await download("/data/export.json")
        var export = try LibraryExport.read(json)
        func search(_ name: String, _ query: String, id: UUID = UUID()) -> LibraryExport.SavedSearchRecord {
            LibraryExport.SavedSearchRecord(uuid: id, name: name, query: query, createdAt: .now)
        }
        let padded = search("  Padded  ", "?q=go&page=3")
        export.savedSearches += [
            padded,
            search("Other", "q=other", id: padded.uuid),
            search("swift THINGS", "q=kotlin"),
            search("PADDED", "q=rust"),
            search("Swift things", "q=swift"),
        ]
        let file = try LibraryExport.encoder().encode(export)
        let (status, body) = try await importFile(file)
        expectStatus(.ok, status)
        XCTAssertTrue(body.contains("Saved searches added</h3><ul><li>Padded</li></ul>"), body)
        XCTAssertTrue(body.contains("saved search “\u{2068}Other\u{2069}”: its id is also an earlier saved search"), body)
        XCTAssertTrue(body.contains("saved search “\u{2068}swift THINGS\u{2069}”: there is already a saved search of that name"), body)
        XCTAssertTrue(body.contains("saved search “\u{2068}PADDED\u{2069}”: there is already a saved search of that name"), body)
        XCTAssertFalse(body.contains("saved search “Swift things”"), "the library's own search, same query: already here")
        let stored = { () throws -> [String] in
            try self.withContext { context in
                try context.fetch(FetchDescriptor<SavedSearch>(sortBy: [SortDescriptor(\.name)])).map { "\($0.name) \($0.query)" }
            }
        }
        XCTAssertEqual(try stored(), ["Padded q=go", "Swift things q=swift"])

        let (_, again) = try await importFile(file)
        XCTAssertFalse(again.contains("Saved searches added"), again)
        XCTAssertEqual(try stored(), ["Padded q=go", "Swift things q=swift"])
    }

    /// A date SnippetBox would not store, written into the store by another program: every page
    /// that shows it answers (each of these trapped).
    func testPagesAnswerForADateOutOfRangeInTheStore() async throws {
        try await fillLibrary()
        let (_, json) = try await download("/data/export.json")
        let pictured = try XCTUnwrap(LibraryExport.read(json).snippets.first { $0.image != nil }).uuid
        try withContext { context in
            for snippet in try context.fetch(FetchDescriptor<Snippet>()) {
                snippet.createdAt = Date(timeIntervalSince1970: 1e19)
                snippet.updatedAt = Date(timeIntervalSince1970: 1e300)
                if snippet.deletedAt != nil { snippet.deletedAt = Date(timeIntervalSince1970: -1e300) }
            }
            try context.save()
        }
        let list = try await page("/snippets")
        XCTAssertTrue(list.contains("an unreadable date"), list)
        let detail = try await page("/snippets/\(pictured.idString)")
        XCTAssertTrue(detail.contains("Decode JSON"), detail)
        _ = try await download("/snippets/\(pictured.idString)/image")
        _ = try await page("/trash")
        _ = try await download("/data/export.zip")
    }

    func testImportingSomethingElseSaysSoAndChangesNothing() async throws {
        try await fillLibrary()
        for junk in [Data("not json".utf8), Data(#"{"format":"other"}"#.utf8), Data(#"{"format":"snippetbox-export","version":99,"exportedAt":0,"folders":[],"tags":[],"snippets":[],"savedSearches":[]}"#.utf8)] {
            let (status, body) = try await importFile(junk)
            expectStatus(.unprocessableEntity, status)
            XCTAssertTrue(body.contains("Nothing was imported."), body)
        }
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Snippet>()) }, 5)
        let (_, body) = try await importFile(Data("not json".utf8))
        XCTAssertTrue(body.contains("This is neither a SnippetBox export nor a VS Code snippets file"), body)
    }

    /// A VS Code snippets file (comments, trailing commas, bodies as lines or one string, prefixes,
    /// scopes) is imported: each snippet once, its language from its scope or the file's name.
    func testAVSCodeSnippetsFileIsImportedOnce() async throws {
        let file = Data("""
            {
              // Place your snippets for Swift here.
              "Guard let": {
                "prefix": ["gl", "guardlet"],
                "body": "guard let ${1:value} else { return }",
              },
              "Print to console": {
                "scope": "typescriptreact,javascript",
                "prefix": "log",
                "body": ["console.log('$1');", "$2"],
                "description": "Log output to the console",
              },
            }
            """.utf8)
        let (status, body) = try await importFile(file, named: "swift.json")
        expectStatus(.ok, status)
        XCTAssertTrue(body.contains("2 added, 0 updated, 0 already here, 0 skipped."), body)
        let snippets = { try self.withContext { try $0.fetch(FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.title)])) } }
        let imported = try snippets()
        XCTAssertEqual(imported.map(\.title), ["Guard let", "Print to console"])
        XCTAssertEqual(imported.map(\.code), ["guard let ${1:value} else { return }", "console.log('$1');\n$2"])
        XCTAssertEqual(imported.map(\.language), [.swift, .typescript], "the file's name, then the scope's first known language")
        XCTAssertEqual(imported.map(\.notes), ["VS Code prefix: `gl`, `guardlet`", "Log output to the console\n\nVS Code prefix: `log`"])

        // Edited here, then the same file again: nothing is added or changed.
        try withContext { context in
            try XCTUnwrap(try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.title == "Guard let" })).first).code = "edited"
            try context.save()
        }
        let (_, again) = try await importFile(file, named: "swift.json")
        XCTAssertTrue(again.contains("0 added, 0 updated, 2 already here, 0 skipped."), again)
        XCTAssertEqual(try snippets().map(\.code), ["edited", "console.log('$1');\n$2"])
    }

    func testTheZipHasAFolderPerFolderWithCodeNotesAndImages() async throws {
        try await fillLibrary()
        let (headers, zip) = try await download("/data/export.zip")
        XCTAssertEqual(headers.first(name: .contentType), "application/zip")
        let archive = try Archive(data: zip, accessMode: .read)
        let paths = Set(archive.map(\.path))
        XCTAssertEqual(paths, ["Work/Decode JSON.swift", "Work/Decode JSON.notes.md", "Work/Decode JSON.png", "Ops/List files.sh",
                               "Unfiled/Same title.py", "Unfiled/Same title (2).py"])
        var code = Data()
        _ = try archive.extract(try XCTUnwrap(archive["Ops/List files.sh"])) { code.append($0) }
        XCTAssertEqual(String(decoding: code, as: UTF8.self), "ls -la")
        XCTAssertEqual(FolderArchive.safeName("../../etc/passwd"), "-..-etc-passwd")
        XCTAssertEqual(FolderArchive.safeName(".hidden\u{0}name"), "hidden-name")
    }

    /// A snippet's notes go beside its code as `<title>.notes.md`, which is also where a Markdown
    /// snippet titled `<title>.notes` goes: the ZIP held two entries of one path, and unpacking kept one.
    func testTheZipNeverWritesTwoEntriesOfOnePath() async throws {
        try await createSnippet(SnippetUpload(title: "setup", language: "shell", code: "sudo make install", notes: "Run as root"))
        try await createSnippet(SnippetUpload(title: "setup.notes", language: "markdown", code: "# My separate doc"))
        let (_, zip) = try await download("/data/export.zip")
        let archive = try Archive(data: zip, accessMode: .read)
        let paths = archive.map(\.path)
        XCTAssertEqual(paths.count, Set(paths).count, "\(paths)")
        XCTAssertEqual(paths.count, 3, "the code and notes of one, the code of the other: \(paths)")
    }

    /// A ZIP entry's name holds at most 65,535 bytes, and ZIPFoundation trapped (the server died) on a
    /// title or folder name of one character and 70,000 combining marks. Names are cut to 120 bytes.
    func testTheZipsNamesFitWhateverTheTitle() throws {
        let long = "F" + String(repeating: "\u{301}", count: 70_000)
        let folder = LibraryExport.FolderRecord(uuid: UUID(), name: long, createdAt: .now)
        let snippet = LibraryExport.SnippetRecord(
            uuid: UUID(), title: long, code: "x", notes: "n", language: "swift", isFavorite: false, createdAt: .now,
            updatedAt: .now, deletedAt: nil, folder: folder.uuid, tags: [], image: nil)
        let zip = try FolderArchive.make(LibraryExport(exportedAt: .now, folders: [folder], tags: [], snippets: [snippet], savedSearches: []))
        let paths = try Archive(data: zip, accessMode: .read).map(\.path)
        XCTAssertEqual(paths.count, 2, "\(paths.map { $0.prefix(20) })")
        for path in paths { XCTAssertLessThanOrEqual(path.utf8.count, 2 * FolderArchive.maximumNameBytes + 20) }
        XCTAssertLessThanOrEqual(FolderArchive.safeName(long).utf8.count, FolderArchive.maximumNameBytes)
    }

    /// Deletes the one image file beside the stores, as damage behind the app's back would.
    /// Deletes every image file in the data directory, as a backup restored without them leaves it,
    /// after checking there are `count` of them.
    private func loseTheImageFiles(count: Int = 1) throws {
        let files = FileManager.default.enumerator(at: dataDirectory, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }
            .filter { $0.deletingLastPathComponent().lastPathComponent.hasSuffix(".external") && !$0.lastPathComponent.hasPrefix(".") } ?? []
        XCTAssertEqual(files.count, count, "images this large are files of their own")
        for file in files { try FileManager.default.removeItem(at: file) }
    }

    func testAnExportStopsWhenAnImageFileCannotBeRead() async throws {
        let id = try await createSnippet(SnippetUpload(
            title: "Big image", image: File(data: ByteBuffer(data: tinyPNG + Data(count: 200_000)), filename: "b.png")))
        _ = try await download("/data/export.json")
        try loseTheImageFiles()

        try await send(.GET, "/data/export.json") { response async throws in
            XCTAssertEqual(response.status, .conflict, "an export without the image would look complete")
            XCTAssertFalse(response.body.string.contains("Server error"), "the library's state, which the user can mend: \(response.body.string)")
            XCTAssertTrue(response.body.string.contains("The export stopped: the image of “\u{2068}Big image\u{2069}” cannot be read from the data folder"),
                          "the reason is shown, not only logged: \(response.body.string)")
        }
        try await send(.GET, "/snippets/\(id)/image") { response async throws in
            XCTAssertEqual(response.status, .internalServerError, "damage, not a snippet without an image")
        }
    }

    /// `check --repair` beside a server: a snippet found without its file (the server had replaced
    /// its image and removed the old file) and edited again before the repair cleared it lost its new
    /// image, reported as missing.
    func testARepairLeavesAnImageReplacedWhileItLooked() async throws {
        let replaced = try await createSnippet(SnippetUpload(
            title: "Replaced meanwhile", image: File(data: ByteBuffer(data: tinyPNG + Data(count: 200_000)), filename: "a.png")))
        _ = try await createSnippet(SnippetUpload(
            title: "Truly lost", image: File(data: ByteBuffer(data: tinyPNG + Data(count: 200_001)), filename: "b.png")))
        try loseTheImageFiles(count: 2)
        let container = try library()
        let newImage = tinyPNG + Data(count: 150_000)
        let titles = try Maintenance.forgetMissingImages(in: container) {
            // The server's edit, between the repair's look and its clearing.
            let context = ModelContext(container)
            let uuid = try XCTUnwrap(UUID(uuidString: replaced))
            let snippet = try XCTUnwrap(try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.uuid == uuid })).first)
            snippet.imageData = newImage
            snippet.updatedAt = .now
            try context.save()
        }
        XCTAssertEqual(titles, ["Truly lost"])
        let images = try withContext { context in
            try context.fetch(FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.title)])).map { ($0.title, $0.imageData) }
        }
        XCTAssertEqual(images.map(\.0), ["Replaced meanwhile", "Truly lost"])
        XCTAssertEqual(images[0].1, newImage, "the new image stays")
        XCTAssertNil(images[1].1)
    }

    /// A library restored from a backup that lacked image files (or whose files were lost) could not
    /// be exported at all, and nothing but a file put back made it whole: the snippet's edit form
    /// and `snippetbox check --repair` now take away an image whose file is gone.
    func testAnImageWhoseFileIsGoneCanBeTakenAway() async throws {
        let first = try await createSnippet(SnippetUpload(
            title: "First image", code: "one", image: File(data: ByteBuffer(data: tinyPNG + Data(count: 200_000)), filename: "a.png")))
        let second = try await createSnippet(SnippetUpload(
            title: "Second image", code: "two", image: File(data: ByteBuffer(data: tinyPNG + Data(count: 200_001)), filename: "b.png")))
        _ = try await createSnippet(SnippetUpload(title: "No image", code: "three"))
        try loseTheImageFiles(count: 2)

        try await send(.GET, "/data/export.json") { response async throws in
            XCTAssertEqual(response.status, .conflict)
            XCTAssertTrue(response.body.string.contains("the image of “\u{2068}First image\u{2069}” (and of “\u{2068}Second image\u{2069}”) cannot be read"), response.body.string)
            XCTAssertTrue(response.body.string.contains("Remove the image in the snippet&#39;s edit form")
                || response.body.string.contains("Remove the image in the snippet's edit form"), response.body.string)
            XCTAssertTrue(response.body.string.contains("restore a snippet from the trash first"), response.body.string)
        }
        // Its other values still change (any change read the file, and failed, before).
        try await send(.POST, "/snippets/\(second)/favorite") { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        }
        // The edit form takes the first away.
        let editForm = try await page("/snippets/\(first)/edit")
        XCTAssertTrue(editForm.contains("value=\"First image\""))
        try await send(.POST, "/snippets/\(first)", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "First image", code: "one", removeImage: "1"), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        try await send(.GET, "/data/export.json") { response async throws in
            XCTAssertTrue(response.body.string.contains("the image of “\u{2068}Second image\u{2069}” cannot be read"), response.body.string)
        }

        var lines: [String] = []
        XCTAssertFalse(try Maintenance.check(settings) { lines.append($0) }, "\(lines)")
        XCTAssertFalse(lines.contains { $0.contains("removed") }, "a check alone changes nothing: \(lines)")
        lines = []
        XCTAssertTrue(try Maintenance.check(settings, repair: true) { lines.append($0) }, "\(lines)")
        XCTAssertEqual(lines.filter { $0.contains("removed the missing image") }.count, 1, "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasSuffix(": removed the missing image of “Second image”") }, "\(lines)")
        lines = []
        XCTAssertTrue(try Maintenance.check(settings, repair: true) { lines.append($0) }, "\(lines)")
        XCTAssertFalse(lines.contains { $0.contains("removed") }, "\(lines)")

        let (_, export) = try await download("/data/export.json")
        let snippets = try comparable(export).snippets
        XCTAssertEqual(snippets.map(\.title), ["First image", "Second image", "No image"])
        XCTAssertEqual(snippets.map(\.code), ["one", "two", "three"], "only the images went")
        XCTAssertEqual(snippets.map(\.isFavorite), [false, true, false])
        XCTAssertTrue(snippets.allSatisfy { $0.image == nil })
        try await send(.GET, "/snippets/\(second)/image") { response async throws in
            XCTAssertEqual(response.status, .notFound)
        }
    }

    func testABackupRestoresEveryAccountWithImages() async throws {
        try await fillLibrary()
        try await addAccount("second")
        let second = try await logIn("second")
        try await send(.POST, "/snippets", as: second, beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "Second's big image", image: File(data: ByteBuffer(data: tinyPNG + Data(count: 200_000)), filename: "b.png")), as: .formData)
        }, afterResponse: { _ in })
        let (_, firstBefore) = try await download("/data/export.json")
        let (_, secondBefore) = try await download("/data/export.json", as: second)

        // The admin's button writes an archive into backups/ and sends it.
        var archive = Data()
        try await send(.POST, "/data/backup") { response async throws in
            XCTAssertEqual(response.status, .ok)
            archive = Data(buffer: response.body)
        }
        try await send(.POST, "/data/backup", as: second) { response async throws in
            XCTAssertEqual(response.status, .forbidden, "only an administrator backs up everything")
        }
        let saved = BackupArchive.list(in: settings.backupDirectory)
        XCTAssertEqual(saved.count, 1)
        XCTAssertEqual(try Data(contentsOf: saved[0]), archive)

        // Restore it into a new data directory and serve that.
        let restoredDirectory = dataDirectory.appendingPathComponent("restored")
        try BackupArchive.restore(saved[0], to: restoredDirectory)
        let restored = try await Application.make(.testing)
        try configure(restored, settings: AppSettings(dataDirectory: restoredDirectory, passwordHashCost: 4))
        defer { Task { try? await restored.asyncShutdown() } }
        for (name, before) in [("tester", firstBefore), ("second", secondBefore)] {
            let account = try XCTUnwrap(restored.accounts.account(username: name))
            let container = try restored.libraries.store(for: account).container
            let after = try LibraryExport.encoder().encode(try LibraryExport(from: ModelContext(container)))
            XCTAssertEqual(try comparable(after), try comparable(before), name)
            XCTAssertTrue(try container.checkIntegrity().isOK)
        }
        XCTAssertTrue(try Maintenance.check(AppSettings(dataDirectory: restoredDirectory)) { _ in })
    }

    /// A backup of a library whose image file was gone succeeded without a word, and its restore
    /// then refused the whole archive ("missing external files"): every account's data in it was
    /// unrestorable. The backup now says what it lacks, and the restore brings back everything else.
    func testABackupMissingAnImageSaysSoAndRestoresEverythingElse() async throws {
        try await fillLibrary()
        _ = try await createSnippet(SnippetUpload(
            title: "Big image", image: File(data: ByteBuffer(data: tinyPNG + Data(count: 200_000)), filename: "b.png")))
        try await addAccount("second")
        let second = try await logIn("second")
        try await send(.POST, "/snippets", as: second, beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "Second's own", code: "2"), as: .formData)
        }, afterResponse: { _ in })
        try loseTheImageFiles()
        let (_, secondBefore) = try await download("/data/export.json", as: second)

        try await send(.POST, "/data/backup") { response async throws in
            XCTAssertEqual(response.status, .ok)
        }
        // The archive is a download; the next page says what it lacks.
        try await send(.GET, "/data") { response async throws in
            XCTAssertTrue(response.body.string.contains("The backup was written, but it is not whole."), response.body.string)
            XCTAssertTrue(response.body.string.contains("1 image file its snippets name could not be found"), response.body.string)
        }
        let (commandLineArchive, commandLineWarnings) = try Maintenance.backup(settings)
        XCTAssertEqual(commandLineWarnings.count, 1, "\(commandLineWarnings)")
        XCTAssertTrue(commandLineWarnings.first?.contains("(the library of tester)") == true, "\(commandLineWarnings)")

        for archive in [try XCTUnwrap(BackupArchive.list(in: settings.backupDirectory).last), commandLineArchive] {
            let restoredDirectory = dataDirectory.appendingPathComponent("restored-\(archive.lastPathComponent)")
            let restored = try BackupArchive.restore(archive, to: restoredDirectory)
            XCTAssertEqual(restored.warnings.count, 1, "\(restored.warnings)")
            XCTAssertTrue(restored.warnings.first?.contains("1 image file its snippets name is not in the archive") == true, "\(restored.warnings)")
            let accounts = try AccountStore(dataDirectory: restoredDirectory, threadPool: .singleton)
            let libraries = accounts.libraryFiles(in: restoredDirectory)
            func library(of username: String) throws -> ModelContainer {
                let file = try XCTUnwrap(libraries.first { $0.owner?.username == username }, username)
                return try SnippetStore.openContainer(at: restoredDirectory.appendingPathComponent(file.name))
            }
            let titles = try ModelContext(try library(of: "tester")).fetch(FetchDescriptor<Snippet>()).map(\.title)
            XCTAssertEqual(Set(titles), ["Decode JSON", "List files", "Same title", "In the bin", "Big image"])
            XCTAssertEqual(titles.count, 6)
            let secondAfter = try LibraryExport(from: ModelContext(try library(of: "second")))
            XCTAssertEqual(secondAfter.snippets.map(\.title), ["Second's own"])
            XCTAssertEqual(secondAfter.snippets.map(\.title), try comparable(secondBefore).snippets.map(\.title))
        }
    }

    func testACommandLineBackupBeforeTheFirstAccountKeepsTheSnippets() throws {
        let folder = dataDirectory.appendingPathComponent("seeded")
        let seeded = AppSettings(dataDirectory: folder)
        try DemoData.fill(SnippetStore.openContainer(at: seeded.storeURL), count: 20)
        let archive = try Maintenance.backup(seeded).archive
        let restoredDirectory = dataDirectory.appendingPathComponent("seeded-restored")
        try BackupArchive.restore(archive, to: restoredDirectory)
        let count = try ModelContext(SnippetStore.openContainer(at: AppSettings(dataDirectory: restoredDirectory).storeURL))
            .fetchCount(FetchDescriptor<Snippet>())
        XCTAssertEqual(count, 20)
    }

    /// `snippetbox seed` closes the store it filled, so SQLite folds the write-ahead log into the
    /// store file: left open until the process exited, the store kept its log (13 MB at 3,000
    /// snippets) for every read of the next process to go through.
    func testSeedingClosesTheStoreWithItsLogCheckedIn() throws {
        let seeded = AppSettings(dataDirectory: dataDirectory.appendingPathComponent("seeded"))
        try DemoData.seed(storeAt: seeded.storeURL, count: 300)
        let logPath = seeded.storeURL.path + "-wal"
        let logSize = FileManager.default.fileExists(atPath: logPath)
            ? try XCTUnwrap(FileManager.default.attributesOfItem(atPath: logPath)[.size] as? Int) : 0
        XCTAssertEqual(logSize, 0, "the write-ahead log is left with \(logSize) bytes")
        let count = try ModelContext(SnippetStore.openContainer(at: seeded.storeURL)).fetchCount(FetchDescriptor<Snippet>())
        XCTAssertEqual(count, 300)
    }

    /// Seeding saves in batches, each of which adds a segment to the full-text index; the seeded store's
    /// index is left in one, which every search looks its words up in once.
    func testSeedingLeavesTheSearchIndexInOneSegment() throws {
        let seeded = AppSettings(dataDirectory: dataDirectory.appendingPathComponent("seeded"))
        try DemoData.seed(storeAt: seeded.storeURL, count: 300, batchSize: 30)
        let container = try SnippetStore.openContainer(at: seeded.storeURL)
        let segments = try container.store.read { db in
            try Int.fetchOne(db, sql: #"SELECT count(DISTINCT segid) FROM "_fts_Snippet_idx""#)
        }
        XCTAssertEqual(segments, 1)
        let context = ModelContext(container)
        let hits = try context.search(Snippet.self, for: "production", limit: 1_000).totalCount
        XCTAssertEqual(hits, try context.fetchCount(FetchDescriptor<Snippet>(predicate: #Predicate { $0.notes.contains("production") })))
        XCTAssertGreaterThan(hits, 0)
    }

    func testARestoreRefusesADamagedArchiveAndKeepsTheData() async throws {
        try await fillLibrary()
        let junk = dataDirectory.appendingPathComponent("junk.zip")
        try Data("not a zip".utf8).write(to: junk)
        let target = dataDirectory.appendingPathComponent("target")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: target.appendingPathComponent("marker"))
        XCTAssertThrowsError(try BackupArchive.restore(junk, to: target))
        XCTAssertEqual(try Data(contentsOf: target.appendingPathComponent("marker")), Data("keep".utf8))

        // An archive of files that are not SnippetBox stores is refused too.
        let other = dataDirectory.appendingPathComponent("other")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: other.appendingPathComponent("readme.txt"))
        let otherZip = dataDirectory.appendingPathComponent("other.zip")
        try FileManager.default.zipItem(at: other, to: otherZip, shouldKeepParent: false)
        XCTAssertThrowsError(try BackupArchive.restore(otherZip, to: target)) { error in
            XCTAssertTrue("\(error)".contains("not a SnippetBox backup"))
        }
        XCTAssertEqual(try Data(contentsOf: target.appendingPathComponent("marker")), Data("keep".utf8))
    }

    /// A restore beside a running server moved the data directory away under it: what the server
    /// saved afterwards went to the copy set aside. A server claims its directory; a restore, and a
    /// second server, are refused while it does.
    func testARestoreIsRefusedWhileAServerUsesTheDirectory() async throws {
        try await fillLibrary()
        let archive = try await Housekeeping.backUp(app).archive
        var server: DataDirectoryLock? = try DataDirectoryLock.claim(settings.dataDirectory)
        XCTAssertThrowsError(try DataDirectoryLock.claim(settings.dataDirectory), "a second server") { error in
            XCTAssertTrue(error is DataDirectoryLock.Taken, "\(error)")
        }
        XCTAssertThrowsError(try Maintenance.restore(archive, settings: settings)) { error in
            XCTAssertTrue("\(error)".contains("stop it first"), "\(error)")
        }
        let siblings = try FileManager.default.contentsOfDirectory(atPath: dataDirectory.deletingLastPathComponent().path)
        XCTAssertFalse(siblings.contains { $0.hasPrefix(dataDirectory.lastPathComponent + ".before-restore") }, "nothing was moved")
        XCTAssertNotNil(server)
        server = nil
        // With the server gone, the restore goes ahead.
        let previous = try XCTUnwrap(try Maintenance.restore(archive, settings: settings).previous)
        try? FileManager.default.removeItem(at: previous)
    }

    /// A restore into a data directory that did not exist kept the empty folder its own claim made,
    /// as `<name>.before-restore-<time>`, and said the data it replaced was there.
    func testARestoreIntoANewDirectoryKeepsNoBeforeRestoreFolder() async throws {
        try await fillLibrary()
        let archive = try await Housekeeping.backUp(app).archive
        let fresh = AppSettings(dataDirectory: dataDirectory.appendingPathComponent("fresh"))
        let restored = try Maintenance.restore(archive, settings: fresh)
        XCTAssertNil(restored.previous, "there was no data to replace")
        let siblings = try FileManager.default.contentsOfDirectory(atPath: dataDirectory.path)
        XCTAssertFalse(siblings.contains { $0.hasPrefix("fresh.before-restore") }, "\(siblings)")
        XCTAssertTrue(try Maintenance.check(fresh) { _ in })
    }

    /// A folder given to `restore` made ZIPFoundation search for a ZIP's end for ever.
    func testRestoringAFolderSaysItIsNotAnArchive() throws {
        let folder = dataDirectory.appendingPathComponent("not-an-archive", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let finished = DispatchSemaphore(value: 0)
        let outcome = LockedBox<String?>(nil)
        let target = dataDirectory.appendingPathComponent("target")
        Thread.detachNewThread {
            do {
                try BackupArchive.restore(folder, to: target)
                outcome.set("restored")
            } catch {
                outcome.set("\(error)")
            }
            finished.signal()
        }
        XCTAssertEqual(finished.wait(timeout: .now() + 20), .success, "restore did not return")
        XCTAssertTrue(outcome.get()?.contains("is not a backup archive") == true, outcome.get() ?? "nothing")
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path))
    }

    func testHousekeepingPurgesOldTrashAndBacksUpOnSchedule() async throws {
        try await fillLibrary()
        var scheduled = settings!
        scheduled.backupEveryHours = 6
        scheduled.backupsKept = 2
        app.appSettings = scheduled
        let start = Date.now
        try await Housekeeping.runOnce(app, now: start)
        XCTAssertEqual(BackupArchive.list(in: scheduled.backupDirectory).count, 1)
        try await Housekeeping.runOnce(app, now: start.addingTimeInterval(3_600))
        XCTAssertEqual(BackupArchive.list(in: scheduled.backupDirectory).count, 1, "not due yet")
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Snippet>()) }, 5, "the trash is younger than 30 days")

        // Backups are due by the newest archive's age; only the last two are kept.
        for hours in [7.0, 14.0] {
            for url in BackupArchive.list(in: scheduled.backupDirectory) {
                try FileManager.default.setAttributes([.modificationDate: start.addingTimeInterval(-24 * 3_600)], ofItemAtPath: url.path)
            }
            try await Housekeeping.runOnce(app, now: start.addingTimeInterval(hours * 3_600))
        }
        XCTAssertEqual(BackupArchive.list(in: scheduled.backupDirectory).count, 2)
        // A backup made by hand is not one of the scheduled ones BACKUP_KEEP counts: it stays.
        let byHand = try await Housekeeping.backUp(app, now: start.addingTimeInterval(15 * 3_600)).archive
        for url in BackupArchive.list(in: scheduled.backupDirectory) {
            try FileManager.default.setAttributes([.modificationDate: start.addingTimeInterval(-24 * 3_600)], ofItemAtPath: url.path)
        }
        try await Housekeeping.runOnce(app, now: start.addingTimeInterval(21 * 3_600))
        let kept = BackupArchive.list(in: scheduled.backupDirectory)
        XCTAssertTrue(kept.contains(byHand), "\(kept.map(\.lastPathComponent))")
        XCTAssertEqual(kept.filter { $0.lastPathComponent.hasSuffix("-scheduled.zip") }.count, 2)
        try await Housekeeping.runOnce(app, now: start.addingTimeInterval(31 * 86_400))
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Snippet>()) }, 4, "trashed for over 30 days: purged")
    }

    /// The stores' history (a row per save) is kept for a week, then deleted by the hourly round.
    func testHousekeepingDeletesHistoryOlderThanAWeek() async throws {
        try await fillLibrary()
        let all = HistoryDescriptor<DefaultHistoryTransaction>()
        let accounts = app.accounts.container
        let saved = try withContext { try $0.fetchHistory(all).count }
        XCTAssertGreaterThan(saved, 0)
        XCTAssertGreaterThan(try ModelContext(accounts).fetchHistory(all).count, 0)

        try await Housekeeping.runOnce(app, now: .now.addingTimeInterval(6 * 86_400))
        XCTAssertEqual(try withContext { try $0.fetchHistory(all).count }, saved, "younger than a week: kept")
        try await Housekeeping.runOnce(app, now: .now.addingTimeInterval(8 * 86_400))
        XCTAssertEqual(try withContext { try $0.fetchHistory(all).count }, 0, "older than a week: deleted")
        XCTAssertEqual(try ModelContext(accounts).fetchHistory(all).count, 0, "the accounts store's too")
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Snippet>()) }, 5, "the snippets stay")
    }
}
