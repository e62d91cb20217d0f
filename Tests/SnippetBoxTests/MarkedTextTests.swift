@testable import ObjectGraph
@testable import SnippetBox
import XCTest

/// Search matches reach the list page as HTML written with `#unsafeHTML`: only the `<mark>` tags may
/// be markup, every character of the snippet's own text is escaped.
final class MarkedTextTests: XCTestCase {
    func testMatchesAreMarkedAndEverythingElseEscaped() {
        let html = MarkedText.html([
            TextFragment(text: "<script>alert('x')</script> & ", isMatch: false),
            TextFragment(text: "\"fetch\"", isMatch: true),
            TextFragment(text: " rows", isMatch: false),
        ])
        XCTAssertEqual(html, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; <mark>&quot;fetch&quot;</mark> rows")
    }

    func testExcerptsStayOnOneLineAndKeepTheirCharacters() {
        let html = MarkedText.html([TextFragment(text: "let a = 1\nlet b = \"ü→😀\"\r", isMatch: false)])
        XCTAssertEqual(html, "let a = 1 ⏎ let b = &quot;ü→😀&quot;&#13;")
    }

    func testPlainTextIsEscapedWithoutMarks() {
        XCTAssertEqual(MarkedText.html(plain: "a < b && c > d"), "a &lt; b &amp;&amp; c &gt; d")
        XCTAssertEqual(MarkedText.html(plain: ""), "")
    }
}
