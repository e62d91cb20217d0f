import Foundation
@testable import SnippetBox
import XCTest

/// Notes that Ink 0.6.0 crashes on or never finishes rendering (`MarkdownRenderer.avoidingInkDefects`).
/// A crash here takes the test process with it; a render that never returns is waited for on another
/// thread, for a while, so that it fails rather than hangs the suite.
final class MarkdownInkDefectsTests: XCTestCase {
    /// What `MarkdownRenderer` makes of `markdown`, or a failure if it has not finished in 10 seconds.
    private func rendered(_ markdown: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        finished("rendering \(markdown.prefix(40).debugDescription)", file: file, line: line) { MarkdownRenderer().render(markdown) }
    }

    /// What `HTMLSanitizer` makes of `html`, or a failure if it has not finished in 10 seconds.
    private func sanitized(_ html: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        finished("sanitizing \(html.prefix(40).debugDescription)", file: file, line: line) { HTMLSanitizer().sanitize(html) }
    }

    private func finished(_ what: String, file: StaticString, line: UInt, _ work: @escaping @Sendable () -> String) -> String? {
        let result = LockedBox<String?>(nil)
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            result.set(work())
            finished.signal()
        }
        guard finished.wait(timeout: .now() + 10) == .success else {
            XCTFail("\(what) did not finish", file: file, line: line)
            return nil
        }
        return result.get()
    }

    /// `[a ` 3,000 times overflowed the stack of the thread rendering it (the server died for
    /// everyone), and `[a](` repeated took time growing with the square of its length in Ink: such
    /// notes are shown as their text. (Before the fix this test crashed the test process.)
    func testNotesWithTooManyBracketsAreShownAsText() {
        let renderer = MarkdownRenderer()
        XCTAssertEqual(renderer.render(String(repeating: "[a ", count: 3_000)),
                       "<p>" + String(repeating: "[a ", count: 3_000) + "</p>")
        let links = String(repeating: "[a](", count: 3_000)
        XCTAssertEqual(renderer.render("Intro <b>\n\n" + links), "<p>Intro &lt;b&gt;</p>\n<p>\(links)</p>")
        XCTAssertEqual(renderer.render(String(repeating: "![", count: 2_000)), "<p>\(String(repeating: "![", count: 2_000))</p>")
        // Notes with links and task boxes within reach are Markdown as before.
        let tasks = (1...20).map { "- [ ] task \($0) with [a link](https://example.com/\($0))" }.joined(separator: "\n")
        XCTAssertTrue(MarkdownRenderer.isWithinInksReach(tasks))
        XCTAssertTrue(renderer.render(tasks).contains(#"<a href="https://example.com/20""#), renderer.render(tasks))
    }

    /// At each `&` Ink reads on to a `;`, whitespace or the end: `&` repeated took time growing with
    /// the square of its length (more than 30 s for 20,000). Such a note is shown as its text.
    func testANoteOfAmpersandsInkWouldReadOnFromEachIsShownAsText() {
        let ampersands = String(repeating: "&", count: 20_000)
        XCTAssertFalse(MarkdownRenderer.isWithinInksReach(ampersands))
        XCTAssertEqual(rendered(ampersands), "<p>" + String(repeating: "&amp;", count: 20_000) + "</p>")
        XCTAssertFalse(MarkdownRenderer.isWithinInksReach("**a**\n\n" + String(repeating: "&x", count: 1_000)))
        // Prose, code and links with `&` are Markdown as before.
        let everyday = "Tom & Jerry: `a && b`, &amp; and <https://example.com/?a=1&b=2&c=3>\n\n"
            + String(repeating: "if a && b { c &= d }\n", count: 2_000)
        XCTAssertTrue(MarkdownRenderer.isWithinInksReach(everyday))
        XCTAssertEqual(rendered("**Tom & Jerry**"), "<p><strong>Tom &amp; Jerry</strong></p>")
        XCTAssertTrue(MarkdownRenderer.isWithinInksReach(String(repeating: "&;", count: 10_000)), "each `&` finds its `;` at once")
        // A `;` with a combining mark after it is another character to Ink, and ends nothing.
        XCTAssertFalse(MarkdownRenderer.isWithinInksReach(String(repeating: "&;\u{301}", count: 66_000)))
    }

    /// A `<` with no `>` after it is text, but Ink, and then the sanitizer, looked for its end from
    /// each one to the end of the note: 2.4 s for `x<` 8,000 times, and 100,000 never finished.
    func testLessThanSignsWithNoTagEndAfterThemAreTextAtAnyLength() {
        let angles = String(repeating: "x<", count: 100_000)
        XCTAssertFalse(MarkdownRenderer.isWithinInksReach(angles))
        XCTAssertEqual(rendered(angles), "<p>" + String(repeating: "x&lt;", count: 100_000) + "</p>")
        XCTAssertFalse(MarkdownRenderer.isWithinInksReach(String(repeating: "a<b\n", count: 5_000)))
        XCTAssertEqual(sanitized("<em>stress</em> " + String(repeating: "<", count: 200_000)),
                       "<em>stress</em> " + String(repeating: "&lt;", count: 200_000))
        XCTAssertFalse(MarkdownRenderer.isWithinInksReach(String(repeating: "<>\u{338}", count: 66_000)), "`>` and a mark are not `>`")
        // Notes comparing things, and notes with HTML, are Markdown as before: a `<` before a space is
        // given up at once.
        let comparisons = String(repeating: "Use `a < b` where <kbd>x</kbd> if a < b.\n", count: 2_000) + "Last: `i < n`"
        XCTAssertTrue(MarkdownRenderer.isWithinInksReach(comparisons))
        let pastedCode = "```go\n" + String(repeating: "for i := 0; i < n; i++ { if x < y { total += i } }\n", count: 400) + "```"
        XCTAssertTrue(MarkdownRenderer.isWithinInksReach(pastedCode))
        XCTAssertEqual(rendered("**a < b**"), "<p><strong>a &lt; b</strong></p>")
    }

    func testAFirstLineOfThreeDashesIsARuleAndHidesNothing() {
        // Each crashed the server (the note's page, where a save sends the browser next).
        XCTAssertEqual(rendered("---\nSome notes here.\n"), "<hr><p>Some notes here.</p>")
        XCTAssertEqual(rendered("---\n\n"), "<hr>")
        XCTAssertEqual(rendered("  \n---\n\nSome notes\n"), "<hr><p>Some notes</p>")
        // Read as metadata, this note's first two lines vanished.
        XCTAssertEqual(rendered("---\ntitle: x\n---\nbody"), "<hr><p>title: x</p><hr><p>body</p>")
        // Four dashes, or three with a space, were never metadata: unchanged.
        XCTAssertEqual(rendered("----\ntext"), "<hr><p>text</p>")
    }

    func testAListItemFollowedOnlyByWhitespaceRenders() {
        XCTAssertEqual(rendered("* \n\t"), "<p>*</p>")
        XCTAssertEqual(rendered("- one\n- \n  \t"), rendered("- one\n-"))
    }

    func testAParagraphElementInkCannotReadIsShownAsText() throws {
        // No `>` after the `<p`: each of these looped for ever, growing by 75 MB a second.
        XCTAssertEqual(rendered("Note: <p is a tag"), "<p>Note: &lt;p is a tag</p>")
        XCTAssertEqual(rendered("Use <pre for code blocks"), "<p>Use &lt;pre for code blocks</p>")
        XCTAssertEqual(rendered("x\n\n<p"), "<p>x</p><p>&lt;p</p>")
        XCTAssertEqual(rendered("<P class=\"x\""), "<p>&lt;P class=\"x\"</p>")
        // Escaped with a backslash, Ink refuses the element even with a `>` after it: the same loop.
        XCTAssertEqual(rendered("\\<p>"), "<p>&lt;p&gt;</p>")
        XCTAssertEqual(rendered("a\\<pre>x"), "<p>a&lt;pre&gt;x</p>")
        // An element Ink can read is left to it (and to the sanitizer), as before.
        XCTAssertEqual(rendered("<p>fine</p>"), "<p>fine</p>")
        let mixed = try XCTUnwrap(rendered("<p>kept</p>\n\nthen <pre without end"))
        XCTAssertTrue(mixed.hasPrefix("<p>kept</p>"), mixed)
        XCTAssertTrue(mixed.hasSuffix("then &lt;pre without end</p>"), mixed)
    }
}

/// The same notes through the app: the page a save sends the browser to shows them.
final class MarkdownNotesPageTests: AppTestCase {
    func testNotesInkFailedOnShowOnTheSnippetsPage() async throws {
        let ruled = try await createSnippet(SnippetUpload(title: "Ruled", notes: "---\r\nSome notes here.\r\n"))
        let ruledPage = try await page("/snippets/\(ruled)")
        XCTAssertTrue(ruledPage.contains("<hr><p>Some notes here.</p>"), ruledPage)
        let tagged = try await createSnippet(SnippetUpload(title: "Tagged", notes: "Note: <p is a tag"))
        let taggedPage = try await page("/snippets/\(tagged)")
        XCTAssertTrue(taggedPage.contains("<p>Note: &lt;p is a tag</p>"), taggedPage)
    }
}
