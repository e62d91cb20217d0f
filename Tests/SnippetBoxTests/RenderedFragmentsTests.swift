import Foundation
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
