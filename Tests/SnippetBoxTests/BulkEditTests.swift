import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// "Select snippets on this page…": many snippets starred, moved, tagged, untagged or trashed at once.
final class BulkEditTests: AppTestCase {
    /// Posts the bulk form as the browser sends it, and returns the status, where it led, and the flash
    /// shown on the page it led to.
    private func bulk(
        _ ids: [String], _ action: String, query: String = "", wholeList: Bool = false
    ) async throws -> (status: HTTPStatus, location: String, flash: String) {
        let fields = ids.map { "ids%5B%5D=\($0)" } + ["action=\(action.urlQueryEscaped)"] + (wholeList ? ["scope=all"] : [])
        var result: (HTTPStatus, String) = (.ok, "")
        try await send(.POST, "/snippets/bulk\(query)", headers: ["Content-Type": "application/x-www-form-urlencoded"], beforeRequest: { req async throws in
            req.body = ByteBuffer(string: fields.joined(separator: "&"))
        }, afterResponse: { response async throws in
            result = (response.status, self.location(response) ?? response.body.string)
        })
        guard result.0 == .seeOther else { return (result.0, result.1, "") }
        // The list may send on once more (to itself without a folder or tag that is gone).
        var shown = ""
        var next: String? = result.1
        for _ in 0..<3 {
            guard let path = next else { break }
            next = nil
            try await send(.GET, path) { response async throws in
                if response.status == .seeOther { next = self.location(response) } else { shown = response.body.string }
            }
        }
        let flash = shown.range(of: #"(?s)class="flash[^"]*"[^>]*>(.*?)</"#, options: .regularExpression).map { String(shown[$0]) } ?? ""
        return (result.0, result.1, flash)
    }

    private func snippets() throws -> [Snippet] {
        try withContext { try $0.fetch(FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.title)])) }
    }

    /// Bulk changes reached only the page shown (100 snippets at most): "all N snippets in this
    /// list" changes every snippet of the list, on every page, a search's hits included.
    func testEverySnippetOfAListChangesAtOnce() async throws {
        for number in 0..<12 {
            _ = try await createSnippet(SnippetUpload(title: "Py \(number)", language: "python", code: "print(\(number))"))
        }
        for number in 0..<3 {
            _ = try await createSnippet(SnippetUpload(title: "Sw \(number)", language: "swift", code: "let a = \(number)"))
        }
        let select = try await page("/snippets/select?language=python&size=10")
        XCTAssertTrue(select.contains("all 12 snippets in this list, on every page"), select)
        XCTAssertEqual(select.components(separatedBy: "name=\"ids[]\"").count - 1, 10, "the page's own ten to check")
        let whole = try await page("/snippets/select?language=swift")
        XCTAssertFalse(whole.contains("snippets in this list, on every page"), "a page holding the whole list offers no more")

        var outcome = try await bulk([], "favorite", query: "?language=python&size=10", wholeList: true)
        XCTAssertEqual(outcome.location, "/snippets?language=python&size=10")
        XCTAssertTrue(outcome.flash.contains("Added 12 snippets to favorites."), outcome.flash)
        XCTAssertEqual(try snippets().filter(\.isFavorite).map(\.title).sorted(), (0..<12).map { "Py \($0)" }.sorted())

        outcome = try await bulk([], "trash", query: "?q=print&size=10&page=2", wholeList: true)
        XCTAssertTrue(outcome.flash.contains("Moved 12 snippets to the trash."), outcome.flash)
        XCTAssertEqual(try snippets().filter { $0.deletedAt == nil }.map(\.title), ["Sw 0", "Sw 1", "Sw 2"])

        // More than the limit changes nothing, and says so.
        var swiftOnly = ListQuery()
        swiftOnly.language = .swift
        let refused = try withContext { context in
            try BulkEditController.applyToWholeList(.favorite, query: swiftOnly, in: context, limit: 2)
        }
        XCTAssertTrue(refused.contains("more than 2 snippets, too many to change at once"), refused)
        XCTAssertEqual(try snippets().filter { $0.language == .swift && $0.isFavorite }.count, 0)
        outcome = try await bulk([], "favorite", query: "?q=nothing-matches-this", wholeList: true)
        XCTAssertTrue(outcome.flash.contains("This list holds no snippets now"), outcome.flash)
    }

    /// "All in this list" for a list whose folder or tag is gone (deleted after the form was shown, or
    /// another account's) ran on the list without it: the whole library was trashed or starred. It
    /// changes nothing now, and the select page offers it only for the list asked for. And a change of
    /// checked snippets, redirected to such a list, kept its outcome in the flash (the list's own
    /// notice replaced it, so the user never learnt what was done).
    func testAListNamingAGoneFolderOrTagChangesNothingAtOnce() async throws {
        for number in 0..<12 {
            _ = try await createSnippet(SnippetUpload(title: "In \(number)", newFolder: "Doomed", newTags: "doomed-tag"))
        }
        let outside = try await createSnippet(SnippetUpload(title: "Outside"))
        let (folderID, tagID) = try withContext { context in
            (try XCTUnwrap(context.fetch(FetchDescriptor<Folder>()).first).uuid.idString,
             try XCTUnwrap(context.fetch(FetchDescriptor<Tag>()).first).uuid.idString)
        }
        let offered = try await page("/snippets/select?folder=\(folderID)&size=10")
        XCTAssertTrue(offered.contains("all 12 snippets in this list, on every page"), offered)

        try withContext { context in
            for folder in try context.fetch(FetchDescriptor<Folder>()) { context.delete(folder) }
            for tag in try context.fetch(FetchDescriptor<Tag>()) { context.delete(tag) }
            try context.save()
        }
        for query in ["?folder=\(folderID)&size=10", "?tag=\(tagID)&size=10"] {
            let outcome = try await bulk([], "trash", query: query, wholeList: true)
            XCTAssertTrue(outcome.flash.contains("Nothing was changed: a folder or tag this list named is not in your library any more"),
                          outcome.flash)
            XCTAssertEqual(try snippets().filter { $0.deletedAt != nil }.count, 0, query)
            let select = try await page("/snippets/select\(query)")
            XCTAssertFalse(select.contains("snippets in this list, on every page"), "the wider list is not offered: \(select)")
        }
        let checked = try await bulk([outside], "favorite", query: "?folder=\(folderID)")
        XCTAssertTrue(checked.flash.contains("Added 1 snippet to favorites."), "the outcome is kept: \(checked.flash)")
        XCTAssertTrue(checked.flash.contains("The folder this list named is not in your library"), checked.flash)
    }

    func testTheCheckedSnippetsAreMovedTaggedStarredAndTrashed() async throws {
        let first = try await createSnippet(SnippetUpload(title: "A first", newFolder: "Work", newTags: "keep"))
        let second = try await createSnippet(SnippetUpload(title: "B second"))
        let third = try await createSnippet(SnippetUpload(title: "C third", code: "untouched"))
        let (folderID, tagID) = try withContext { context in
            (try XCTUnwrap(context.fetch(FetchDescriptor<Folder>()).first).uuid.idString,
             try XCTUnwrap(context.fetch(FetchDescriptor<Tag>()).first).uuid.idString)
        }
        let before = try snippets().map(\.updatedAt)

        // The list links to the selection page, which lists the page's snippets as checkboxes.
        try await expectPage("/snippets?language=swift", shows: "/snippets/select?language=swift")
        let selection = try await page("/snippets/select?language=swift")
        for id in [first, second, third] { XCTAssertTrue(selection.contains(#"name="ids[]" value="\#(id)""#), selection) }
        XCTAssertTrue(selection.contains(#"<option value="move:\#(folderID)">Work</option>"#), selection)
        XCTAssertTrue(selection.contains(#"<option value="tag:\#(tagID)">keep</option>"#), selection)

        var outcome = try await bulk([second, third], "move:\(folderID)", query: "?language=swift")
        XCTAssertEqual(outcome.location, "/snippets?language=swift", "back to the same list")
        XCTAssertTrue(outcome.flash.contains("Moved 2 snippets to “\u{2068}Work\u{2069}”."), outcome.flash)
        XCTAssertEqual(try snippets().map { $0.folder?.name }, ["Work", "Work", "Work"])
        XCTAssertEqual(try snippets().map(\.searchKeywords), ["keep Work", "Work", "Work"], "the search finds them by folder")

        outcome = try await bulk([first, second], "tag:\(tagID)")
        XCTAssertTrue(outcome.flash.contains("Tagged 2 snippets “\u{2068}keep\u{2069}”."), outcome.flash)
        XCTAssertEqual(try snippets().map { $0.tags.map(\.name) }, [["keep"], ["keep"], []], "no tag twice")

        outcome = try await bulk([first, third], "untag:\(tagID)")
        XCTAssertTrue(outcome.flash.contains("Removed the tag “\u{2068}keep\u{2069}” from 2 snippets."), outcome.flash)
        XCTAssertEqual(try snippets().map { $0.tags.map(\.name) }, [[], ["keep"], []])

        outcome = try await bulk([first, third], "favorite")
        XCTAssertTrue(outcome.flash.contains("Added 2 snippets to favorites."), outcome.flash)
        XCTAssertEqual(try snippets().map(\.isFavorite), [true, false, true])
        outcome = try await bulk([first], "unfavorite")
        XCTAssertEqual(try snippets().map(\.isFavorite), [false, false, true])

        outcome = try await bulk([first, second, "not-an-id"], "move:unfiled")
        XCTAssertTrue(outcome.flash.contains("Moved 2 snippets to Unfiled."), outcome.flash)
        let edited = try snippets()
        XCTAssertEqual(edited.map { $0.folder?.name }, [nil, nil, "Work"])
        XCTAssertEqual(edited[2].code, "untouched")
        for (after, previous) in zip(edited.map(\.updatedAt), before) { XCTAssertGreaterThan(after, previous, "a move or a tag is an edit") }

        outcome = try await bulk([second, third], "trash")
        XCTAssertTrue(outcome.flash.contains("Moved 2 snippets to the trash."), outcome.flash)
        XCTAssertEqual(try snippets().map { $0.deletedAt == nil }, [true, false, false])
        // Trashed since: left out, and said so.
        outcome = try await bulk([first, second], "favorite")
        XCTAssertTrue(outcome.flash.contains("Added 1 snippet to favorites. 1 checked snippet was not in the library"), outcome.flash)
    }

    func testBadSelectionsChangeNothingAndSaySo() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Lonely"))
        var outcome = try await bulk([], "favorite", query: "?q=lonely")
        XCTAssertEqual(outcome.location, "/snippets/select?q=lonely")
        XCTAssertTrue(outcome.flash.contains("Check the snippets to change first"), outcome.flash)

        outcome = try await bulk([id], "explode")
        XCTAssertEqual(outcome.status, .badRequest)
        outcome = try await bulk([id], "move:\(UUID().uuidString)")
        XCTAssertTrue(outcome.flash.contains("That folder was deleted meanwhile, so nothing was moved."), outcome.flash)
        outcome = try await bulk(Array(repeating: id, count: BulkEditController.maximumSelection + 1), "favorite")
        XCTAssertEqual(outcome.status, .badRequest)
        XCTAssertEqual(try snippets().map(\.isFavorite), [false])

        // Another account's snippet is not this library's: left out.
        try await addAccount("second")
        let second = try await logIn("second")
        var othersID = ""
        try await send(.POST, "/snippets", as: second, beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "Not yours"), as: .formData)
        }, afterResponse: { response async throws in
            othersID = String(self.location(response)?.split(separator: "/").last ?? "")
        })
        outcome = try await bulk([othersID], "trash")
        XCTAssertTrue(outcome.flash.contains("Moved 0 snippets to the trash. 1 checked snippet was not in the library"), outcome.flash)
        let theirs = try ModelContext(try library(of: "second")).fetch(FetchDescriptor<Snippet>())
        XCTAssertEqual(theirs.map { $0.deletedAt == nil }, [true])
    }

    func testTheBulkFormNeedsItsToken() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Guarded"))
        var headers = session.headers
        headers.remove(name: "X-CSRF-Token")
        headers.replaceOrAdd(name: .contentType, value: "application/x-www-form-urlencoded")
        try await app.test(.POST, "/snippets/bulk", headers: headers, beforeRequest: { req async throws in
            req.body = ByteBuffer(string: "ids%5B%5D=\(id)&action=trash")
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .forbidden)
        })
        XCTAssertEqual(try snippets().map { $0.deletedAt == nil }, [true])
    }
}
