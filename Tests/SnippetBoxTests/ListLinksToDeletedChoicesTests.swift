import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// A bookmarked list or saved search naming a folder or tag that has been deleted since.
final class ListLinksToDeletedChoicesTests: AppTestCase {
    private func post(_ path: String, _ fields: [String: String]) async throws {
        try await send(.POST, path, beforeRequest: { req async throws in try req.content.encode(fields, as: .urlEncodedForm) }) { response async throws in
            XCTAssertEqual(response.status, .seeOther, "\(path): \(response.body.string)")
        }
    }

    private func ids() throws -> (folders: [String: String], tags: [String: String]) {
        try withContext { context in
            (Dictionary(uniqueKeysWithValues: try context.fetch(FetchDescriptor<Folder>()).map { ($0.name, $0.uuid.idString) }),
             Dictionary(uniqueKeysWithValues: try context.fetch(FetchDescriptor<Tag>()).map { ($0.name, $0.uuid.idString) }))
        }
    }

    /// The redirect a GET of `path` answers with.
    private func redirect(of path: String) async throws -> String? {
        var target: String?
        try await send(.GET, path) { response async throws in
            XCTAssertEqual(response.status, .seeOther, "\(path) was not redirected: \(response.status)")
            target = location(response)
        }
        return target
    }

    func testASavedSearchWhoseFolderWasDeletedShowsTheRestOfItsFilters() async throws {
        try await createSnippet(SnippetUpload(title: "Filed in Work", language: "swift", newFolder: "Work"))
        try await createSnippet(SnippetUpload(title: "Python elsewhere", language: "python"))
        let work = try XCTUnwrap(try ids().folders["Work"])
        let saved = "folder=\(work)&language=swift"
        try await post("/searches", ["name": "Work in Swift", "query": saved])
        try await post("/folders/\(work)/delete", ["snippets": "move"])

        // It was a 404 page ("There is no such folder").
        let target = try await redirect(of: "/snippets?\(saved)")
        XCTAssertEqual(target, "/snippets?language=swift")
        let page = try await page("/snippets?language=swift")
        XCTAssertTrue(page.contains("The folder this list named is not in your library, so the list is not narrowed to it."), page)
        XCTAssertTrue(page.contains("Filed in Work"))
        XCTAssertFalse(page.contains("Python elsewhere"))
    }

    func testATagDeletedFromAnAllOfThemFilterIsLeftOut() async throws {
        try await createSnippet(SnippetUpload(title: "Tagged twice", newTags: "alpha, beta"))
        let tags = try ids().tags
        let (alpha, beta) = (try XCTUnwrap(tags["alpha"]), try XCTUnwrap(tags["beta"]))
        try await post("/tags/\(beta)/delete", [:])

        // It found nothing: no snippet has a tag that is gone.
        let target = try await redirect(of: "/snippets?tag=\(alpha)&tag=\(beta)&tagMode=all&page=3")
        XCTAssertEqual(target, "/snippets?tag=\(alpha)&tagMode=all")
        let page = try await page("/snippets?tag=\(alpha)&tagMode=all")
        XCTAssertTrue(page.contains("A tag this list named is not in your library, so the list is not narrowed to it."), page)
        XCTAssertTrue(page.contains("Tagged twice"))
    }

    func testAShownSnippetKeepsItsPlaceWhenItsListsChoicesAreGone() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Kept", newFolder: "Old", newTags: "one, two"))
        let (folders, tags) = try ids()
        let (old, one, two) = (try XCTUnwrap(folders["Old"]), try XCTUnwrap(tags["one"]), try XCTUnwrap(tags["two"]))
        try await post("/folders/\(old)/delete", ["snippets": "move"])
        try await post("/tags/\(one)/delete", [:])
        try await post("/tags/\(two)/delete", [:])

        let target = try await redirect(of: "/snippets/\(id)?folder=\(old)&tag=\(one)&tag=\(two)&language=swift")
        XCTAssertEqual(target, "/snippets/\(id)?language=swift")
        let page = try await page("/snippets/\(id)?language=swift")
        XCTAssertTrue(page.contains("The folder and 2 tags this list named are not in your library, so the list is not narrowed to them."), page)
    }

    /// A link with a lower-case id filtered the list, but its menu showed no folder chosen, so that
    /// applying the form again dropped the folder.
    func testALowerCaseIdIsTheSameChoice() async throws {
        try await createSnippet(SnippetUpload(title: "Here", newFolder: "Present", newTags: "kept"))
        let (folders, tags) = try ids()
        let (folder, tag) = (try XCTUnwrap(folders["Present"]), try XCTUnwrap(tags["kept"]))
        let page = try await page("/snippets?folder=\(folder.lowercased())&tag=\(tag.lowercased())")
        XCTAssertTrue(page.contains("<option value=\"\(folder)\" selected"), "the folder is chosen in the menu")
        XCTAssertTrue(page.contains("value=\"\(tag)\" checked"), "the tag is checked")
    }

    func testAListWhoseChoicesAllExistIsNotRedirected() async throws {
        try await createSnippet(SnippetUpload(title: "Here", newFolder: "Present", newTags: "kept"))
        let (folders, tags) = try ids()
        let page = try await page("/snippets?folder=\(try XCTUnwrap(folders["Present"]))&tag=\(try XCTUnwrap(tags["kept"]))")
        XCTAssertTrue(page.contains("Here"))
        XCTAssertFalse(page.contains("this list named"))
    }
}
