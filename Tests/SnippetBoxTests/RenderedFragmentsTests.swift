import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTest

/// The sidebar and the list page's filter form are rendered once and kept while what they show stays
/// the same; a change to the library changes their counts, hence their key, and they render afresh.
final class RenderedFragmentsTests: AppTestCase {
    func testTheSidebarAndFormAreKeptUntilWhatTheyShowChanges() async throws {
        try await createSnippet(SnippetUpload(title: "First"))
        let first = try await page("\(basePath)/snippets")
        XCTAssertTrue(first.contains(#"All <span class="count">1</span>"#), first)
        XCTAssertTrue(first.contains(#"<option value="swift" >Swift (1)</option>"#), first)
        let kept = app.renderedFragments.count

        let again = try await page("\(basePath)/snippets")
        XCTAssertTrue(again.contains(#"All <span class="count">1</span>"#), again)
        XCTAssertEqual(app.renderedFragments.count, kept, "the same sidebar and form are not rendered again")

        try await createSnippet(SnippetUpload(title: "Second"))
        let after = try await page("\(basePath)/snippets")
        XCTAssertTrue(after.contains(#"All <span class="count">2</span>"#), after)
        XCTAssertTrue(after.contains(#"<option value="swift" >Swift (2)</option>"#), after)
        XCTAssertTrue(after.contains("Second"), "the new row is listed")
        XCTAssertEqual(app.renderedFragments.count, kept + 3, "a new sidebar, form and rows, with the new counts")
    }

    /// A fragment's key hashes only its counts, selections, keys and lengths: a change that leaves
    /// all of them as they were (a folder and a tag renamed to names as long, a tag's colour, a title
    /// of the same length) hashes alike, and is still told apart and rendered afresh.
    func testAChangeThatKeepsEveryCountAndLengthStillRendersAfresh() async throws {
        try await createSnippet(SnippetUpload(title: "First", newFolder: "Alpha", newTags: "red-tag"))
        let before = try await page("\(basePath)/snippets")
        XCTAssertTrue(before.contains("Alpha") && before.contains("red-tag") && before.contains("First"), before)
        let colorBefore = try withContext { context in try XCTUnwrap(context.fetch(FetchDescriptor<Tag>()).first).color.hex }
        let kept = app.renderedFragments.count

        try withContext { context in
            let folder = try XCTUnwrap(context.fetch(FetchDescriptor<Folder>()).first)
            folder.name = "Omega"
            let tag = try XCTUnwrap(context.fetch(FetchDescriptor<Tag>()).first)
            tag.rename(to: "big-tag")
            tag.color = ColorData(hex: colorBefore == "#112233" ? "#445566" : "#112233") ?? tag.color
            let snippet = try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>()).first)
            snippet.retitle("Fresh")
            snippet.refreshSearchKeywords()
            try context.save()
        }
        let colorAfter = try withContext { context in try XCTUnwrap(context.fetch(FetchDescriptor<Tag>()).first).color.hex }
        XCTAssertNotEqual(colorAfter, colorBefore)
        let after = try await page("\(basePath)/snippets")
        for shown in ["Omega", "big-tag", "Fresh", colorAfter] { XCTAssertTrue(after.contains(shown), "\(shown) in \(after)") }
        for gone in ["Alpha", "red-tag", "First"] { XCTAssertFalse(after.contains(gone), "\(gone) in \(after)") }
        XCTAssertEqual(app.renderedFragments.count, kept + 3, "a new sidebar, form and rows")
    }

    /// The kept HTML stays under its byte bound: beyond it the cache starts over.
    func testTheKeptHTMLStaysUnderItsBound() async throws {
        let fragments = RenderedFragments(maximumBytes: 30_000)
        app.renderedFragments = fragments
        for index in 0..<12 {
            try await createSnippet(SnippetUpload(title: "Snippet \(index) " + String(repeating: "x", count: 120)))
            _ = try await page("\(basePath)/snippets")
            XCTAssertLessThanOrEqual(fragments.bytes, 30_000)
            XCTAssertGreaterThan(fragments.count, 0)
        }
    }

    func testNothingIsKeptWhileTemplatesAreReread() async throws {
        let fragments = RenderedFragments(isEnabled: false)
        app.renderedFragments = fragments
        try await createSnippet(SnippetUpload(title: "First"))
        _ = try await page("\(basePath)/snippets")
        XCTAssertEqual(fragments.count, 0)
    }
}
