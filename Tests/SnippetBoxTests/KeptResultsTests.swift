import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// The pages an app answers from what it keeps between requests (counts and key sets brought up
/// to date by each save, kept search ranks and hit features, kept rows, rendered sidebars and forms)
/// against the same pages of an app that opens a copy of the library afresh and computes everything
/// from the rows. Random writes come between: through the app's own container, through its forms, as a
/// user's saves do, and through a second container on the same file, as another process's would.
final class KeptResultsTests: AppTestCase {
    /// The words the generated texts are made of; the first three are common, the last two rare.
    static let words = ["fetch", "cache", "parse", "render", "merge", "token", "stream", "socket", "quartz", "zephyr"]
    static let languages: [CodingLanguage] = [.swift, .python, .sql, .shell, .javascript]
    static let firstCreated = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01

    /// `KEPT_RESULTS_SEED` and `KEPT_RESULTS_ROUNDS` run other writes, or more of them, when hunting.
    func testPagesAfterRandomWritesMatchAFreshCopyOfTheLibrary() async throws {
        let environment = ProcessInfo.processInfo.environment
        var random = SplitMix(seed: environment["KEPT_RESULTS_SEED"].flatMap { UInt64($0) } ?? 0x4B45_5054)
        let account = try XCTUnwrap(app.accounts.account(username: "tester"))
        let own = try library()
        let stranger = try SnippetStore.openContainer(at: app.libraries.url(of: account))
        try Self.fill(own, random: &random)

        let rounds = environment["KEPT_RESULTS_ROUNDS"].flatMap { Int($0) } ?? 28
        for round in 0..<rounds {
            let urls = try Self.listURLs(in: own)
            // Every URL once before the write, so that the write has kept results to bring up to date.
            for url in urls { _ = try await page(url) }
            let label: String
            switch round % 4 {
            case 1:
                label = "round \(round), the app's forms: " + (try await postRandomForm(library: own, random: &random))
                // The page after a form shows its flash message, which the fresh app has no reason to.
                _ = try await page("/folders")
            case 3:
                label = "round \(round), another container: " + (try RandomWrite(random: &random).apply(in: ModelContext(stranger)))
            default:
                label = "round \(round), the app's container: " + (try RandomWrite(random: &random).apply(in: ModelContext(own)))
            }

            let fresh = try await FreshApp(copying: dataDirectory, test: self)
            do {
                for url in urls {
                    // A folder or tag the write deleted is "not found" in both, which is right too.
                    let kept = Self.normalized(try await answer(app, url, session), token: session.csrf)
                    let computed = Self.normalized(try await answer(fresh.app, url, fresh.session), token: fresh.session.csrf)
                    if let difference = Self.firstDifference(kept, computed) {
                        XCTFail("\(label)\n\(url) differs from a fresh copy's:\n\(difference)")
                    }
                }
            } catch {
                try await fresh.close()
                throw error
            }
            try await fresh.close()
        }
    }

    // MARK: Writes

    /// Posts one of the app's forms, chosen at random, as a user would: a new snippet, an edited one, a
    /// folder deleted (its snippets kept or trashed), a tag merged into another or deleted, the trash
    /// emptied. Says what it posted.
    private func postRandomForm(library: ModelContainer, random: inout SplitMix) async throws -> String {
        let context = ModelContext(library)
        let snippets = try context.fetch(FetchDescriptor<Snippet>(predicate: Snippet.inLibrary, sortBy: [SortDescriptor(\.createdAt)]))
        let folders = try context.fetch(FetchDescriptor<Folder>(sortBy: [SortDescriptor(\.name)])).map(\.uuid.uuidString)
        let tags = try context.fetch(FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.normalizedName)])).map(\.uuid.uuidString)
        let pick = Int.random(in: 0..<1_000, using: &random)
        var form = SnippetUpload(title: Self.text(1...3, &random), language: Self.languages[pick % Self.languages.count].rawValue)
        form.code = Self.text(1...6, &random)
        form.folder = folders.isEmpty || pick % 3 == 0 ? "" : folders[pick % folders.count]
        form.tags = tags.filter { _ in Int.random(in: 0..<3, using: &random) == 0 }
        form.isFavorite = pick % 2 == 0 ? "on" : nil
        func post(_ path: String, _ fields: [String: String]) async throws {
            try await send(.POST, path, beforeRequest: { req async throws in
                try req.content.encode(fields, as: .urlEncodedForm)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status, .seeOther, "\(path): \(response.body.string)")
            })
        }
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            form.newTags = pick % 2 == 0 ? "brand\(pick % 5)" : ""
            try await createSnippet(form)
            return "snippet “\(form.title)” created"
        case 1 where !snippets.isEmpty:
            let id = snippets[pick % snippets.count].uuid.uuidString
            try await send(.POST, "/snippets/\(id)", beforeRequest: { req async throws in
                try req.content.encode(form, as: .formData)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status, .seeOther, response.body.string)
            })
            return "snippet edited to “\(form.title)”"
        case 2 where !folders.isEmpty:
            let mode = pick % 2 == 0 ? "move" : "delete"
            try await post("/folders/\(folders[pick % folders.count])/delete", ["snippets": mode])
            return "a folder deleted, its snippets: \(mode)"
        case 3 where tags.count > 1:
            try await post("/tags/\(tags[pick % tags.count])/merge", ["into": tags[(pick + 1) % tags.count]])
            return "a tag merged into another"
        case 4 where !tags.isEmpty:
            try await post("/tags/\(tags[pick % tags.count])/delete", [:])
            return "a tag deleted"
        default:
            // `asked` answers the confirmation: the trash as it is.
            let trashed = try ModelContext(library).fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.deletedAt != nil }))
            try await post("/trash/empty", ["asked": TrashController.contentsDigest(trashed.map(\.uuid))])
            return "the trash emptied"
        }
    }

    // MARK: The library

    /// 48 snippets in three folders and unfiled, with up to three of five tags, texts of the words above.
    static func fill(_ container: ModelContainer, random: inout SplitMix) throws {
        let context = ModelContext(container)
        let folders = ["Work", "Home", "Scratch"].map { Folder(name: $0) }
        let tags = ["swift", "sql", "web", "tools", "old"].enumerated().map {
            Tag(name: $0.element, color: ColorData.palette[$0.offset % ColorData.palette.count])
        }
        folders.forEach(context.insert)
        tags.forEach(context.insert)
        for index in 0..<48 {
            let snippet = Snippet(title: text(2...3, &random), code: text(3...8, &random), notes: text(0...4, &random),
                                  language: languages[Int.random(in: 0..<languages.count, using: &random)])
            context.insert(snippet)
            let folder = Int.random(in: 0...folders.count, using: &random)
            snippet.folder = folder < folders.count ? folders[folder] : nil
            snippet.tags = tags.filter { _ in Int.random(in: 0..<3, using: &random) == 0 }
            snippet.isFavorite = Int.random(in: 0..<4, using: &random) == 0
            if Int.random(in: 0..<6, using: &random) == 0 {
                snippet.imageData = tinyPNG
                snippet.imageContentType = "image/png"
            }
            snippet.createdAt = firstCreated.addingTimeInterval(Double(index) * 3_600)
            snippet.updatedAt = firstCreated.addingTimeInterval(Double(index) * 5_400)
            snippet.refreshSearchKeywords()
        }
        try context.save()
    }

    /// Words drawn so that the first ones are far more frequent than the last.
    static func text(_ count: ClosedRange<Int>, _ random: inout SplitMix) -> String {
        (0..<Int.random(in: count, using: &random)).map { _ in
            let a = Int.random(in: 0..<words.count, using: &random), b = Int.random(in: 0..<words.count, using: &random)
            return words[min(a, b)]
        }.joined(separator: " ")
    }

    /// The URLs checked each round: the list with each filter, a few combined, searches, orders and
    /// pages; the trash, the tags and folders with their counts, and a snippet opened from a search.
    static func listURLs(in container: ModelContainer) throws -> [String] {
        let context = ModelContext(container)
        let folders = try context.fetch(FetchDescriptor<Folder>(sortBy: [SortDescriptor(\.createdAt), SortDescriptor(\.name)]))
        let tags = try context.fetch(FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.normalizedName)]))
        let folder = folders.first.map { $0.uuid.uuidString } ?? "unfiled"
        let tag = tags.map { $0.uuid.uuidString } + Array(repeating: "", count: 3)
        var first = FetchDescriptor<Snippet>(predicate: Snippet.inLibrary, sortBy: [SortDescriptor(\.createdAt)])
        first.fetchLimit = 1
        let snippet = try context.fetch(first).first.map { ["/snippets/\($0.uuid.uuidString)?q=fetch"] } ?? []
        return snippet + ["/tags", "/folders"] + [
            "/snippets", "/snippets?favorites=1", "/snippets?image=1", "/snippets?folder=unfiled", "/snippets?folder=\(folder)",
            "/snippets?tag=\(tag[0])", "/snippets?tag=\(tag[0])&tag=\(tag[1])&tagMode=all",
            "/snippets?tag=\(tag[1])&tag=\(tag[2])&tagMode=any", "/snippets?tag=\(tag[0])&tagMode=none",
            "/snippets?language=swift", "/snippets?q=fetch", "/snippets?q=fetch&size=10&page=2", "/snippets?q=cache&folder=\(folder)",
            "/snippets?q=parse&tag=\(tag[0])&favorites=1", "/snippets?q=zephyr", "/snippets?q=render+merge",
            "/snippets?q=fetch&language=python", "/snippets?q=%22fetch+cache%22", "/snippets?q=fetch+-cache",
            "/snippets?sort=title&order=asc&size=10&page=2", "/snippets?sort=language&size=10",
            "/snippets?createdFrom=2024-01-02&tag=\(tag[1])", "/trash",
        ]
    }

    // MARK: Comparing pages

    /// The status and text of `app`'s answer to a GET of `path` in `session`.
    func answer(_ app: Application, _ path: String, _ session: TestSession) async throws -> String {
        var answer = ""
        try await app.test(.GET, path, headers: session.headers) { response async throws in
            answer = "\(response.status.code)\n" + response.body.string
        }
        return answer
    }

    /// The page with its session's CSRF token taken out: the only part two sessions' pages may differ in.
    static func normalized(_ html: String, token: String) -> String {
        token.isEmpty ? html : html.replacingOccurrences(of: token, with: "CSRF")
    }

    /// The first line where the pages differ, with the lines around it, or nil if they are the same.
    static func firstDifference(_ kept: String, _ computed: String) -> String? {
        guard kept != computed else { return nil }
        let keptLines = kept.components(separatedBy: "\n"), computedLines = computed.components(separatedBy: "\n")
        let line = zip(keptLines, computedLines).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            ?? min(keptLines.count, computedLines.count)
        let window = max(0, line - 2)..<(line + 3)
        func excerpt(_ lines: [String]) -> String {
            lines[window.clamped(to: 0..<lines.count)].map { "    " + $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\n")
        }
        return "  line \(line + 1), kept:\n\(excerpt(keptLines))\n  fresh:\n\(excerpt(computedLines))"
    }
}

/// One write a user or another process might make, chosen at random: a favourite, text, tags, folder,
/// language, image, the trash, a new snippet, one deleted for good, a renamed tag or folder, a new folder.
private struct RandomWrite {
    let kind: Int
    let pick: Int
    let other: Int
    let title: String
    let code: String

    init(random: inout SplitMix) {
        kind = Int.random(in: 0..<12, using: &random)
        pick = Int.random(in: 0..<1_000, using: &random)
        other = Int.random(in: 0..<1_000, using: &random)
        title = KeptResultsTests.text(1...3, &random)
        code = KeptResultsTests.text(1...6, &random)
    }

    /// Makes the write, saves it, and says what it was.
    func apply(in context: ModelContext) throws -> String {
        let snippets = try context.fetch(FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.createdAt)]))
        let folders = try context.fetch(FetchDescriptor<Folder>(sortBy: [SortDescriptor(\.name)]))
        let tags = try context.fetch(FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.normalizedName)]))
        guard !snippets.isEmpty, !tags.isEmpty else { return "nothing (no snippet or tag left)" }
        let snippet = snippets[pick % snippets.count]
        let name = "“\(snippet.title)”"
        // A later time on each write, so that the order by update moves.
        let later = (snippets.map(\.updatedAt).max() ?? KeptResultsTests.firstCreated).addingTimeInterval(60)
        let description: String
        switch kind {
        case 0:
            snippet.isFavorite.toggle()
            description = "favourite of \(name) toggled"
        case 1:
            snippet.retitle(title)
            snippet.code = code
            snippet.updatedAt = later
            description = "\(name) retitled “\(title)”, code “\(code)”"
        case 2:
            let tag = tags[other % tags.count]
            if let position = snippet.tags.firstIndex(where: { $0 === tag }) {
                snippet.tags.remove(at: position)
            } else {
                snippet.tags.append(tag)
            }
            snippet.refreshSearchKeywords()
            description = "tag \(tag.name) toggled on \(name)"
        case 3:
            let folder = other % (folders.count + 1) < folders.count ? folders[other % (folders.count + 1)] : nil
            snippet.folder = folder
            snippet.refreshSearchKeywords()
            description = "\(name) moved to \(folder?.name ?? "unfiled")"
        case 4:
            snippet.deletedAt = snippet.deletedAt == nil ? Date.now : nil
            description = "\(name) \(snippet.deletedAt == nil ? "restored" : "trashed")"
        case 5:
            snippet.language = KeptResultsTests.languages[other % KeptResultsTests.languages.count]
            snippet.updatedAt = later
            description = "\(name) now \(snippet.language.rawValue)"
        case 6:
            let hadImage = snippet.imageContentType != nil
            snippet.imageData = hadImage ? nil : tinyPNG
            snippet.imageContentType = hadImage ? nil : "image/png"
            description = "image of \(name) \(hadImage ? "removed" : "added")"
        case 7:
            let new = Snippet(title: title, code: code, notes: "", language: KeptResultsTests.languages[other % KeptResultsTests.languages.count])
            context.insert(new)
            new.folder = folders.isEmpty ? nil : folders[other % folders.count]
            new.tags = [tags[pick % tags.count]]
            new.createdAt = later
            new.updatedAt = later
            new.refreshSearchKeywords()
            description = "new snippet “\(title)”"
        case 8:
            context.delete(snippet)
            description = "\(name) deleted for good"
        case 9:
            let tag = tags[other % tags.count]
            let newName = "\(tag.name)x"
            tag.rename(to: newName)
            for tagged in tag.snippets { tagged.refreshSearchKeywords() }
            description = "tag renamed \(newName)"
        case 10 where !folders.isEmpty:
            let folder = folders[other % folders.count]
            folder.name = "\(folder.name)y"
            for filed in folder.snippets { filed.refreshSearchKeywords() }
            description = "folder renamed \(folder.name)"
        default:
            let folder = Folder(name: "New \(other)")
            context.insert(folder)
            snippet.folder = folder
            snippet.refreshSearchKeywords()
            description = "\(name) moved to a new folder"
        }
        try context.save()
        return description
    }
}

/// An app on a copy of the test's data directory, logged in as the test's account: it opens the
/// library afresh and so computes every count and rank from the rows.
private struct FreshApp {
    let app: Application
    let session: TestSession
    let directory: URL

    init(copying dataDirectory: URL, test: AppTestCase) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("snippetbox-fresh-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: dataDirectory, to: directory)
        // Without the shared-memory index, SQLite rebuilds it from the log: a copy of one would describe
        // the original's log, which this copy must not trust.
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            if file.lastPathComponent.hasSuffix("-shm") { try FileManager.default.removeItem(at: file) }
        }
        var settings = try XCTUnwrap(test.settings)
        settings.dataDirectory = directory
        app = try await Application.make(.testing)
        do {
            try configure(app, settings: settings)
            session = try await test.logIn("tester", on: app)
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
    }

    func close() async throws {
        try await app.asyncShutdown()
        try? FileManager.default.removeItem(at: directory)
    }
}
