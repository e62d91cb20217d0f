import Foundation
@testable import SnippetBox
import XCTest

/// The server-side highlighter: exact HTML for short inputs in every language, line splitting,
/// escaping, odd input, and a property check that the output always holds the input, escaped,
/// inside well-formed spans.
final class SyntaxHighlighterTests: XCTestCase {
    // MARK: Helpers

    private func highlight(_ code: String, _ language: CodingLanguage) -> [String] {
        SyntaxHighlighter.highlight(code, as: language).lines
    }

    private func span(_ kind: String, _ html: String) -> String { "<span class=\"tok-\(kind)\">\(html)</span>" }
    private func keyword(_ html: String) -> String { span("keyword", html) }
    private func string(_ html: String) -> String { span("string", html) }
    private func comment(_ html: String) -> String { span("comment", html) }
    private func number(_ html: String) -> String { span("number", html) }
    private func type(_ html: String) -> String { span("type", html) }
    private func tag(_ html: String) -> String { span("tag", html) }
    private func attr(_ html: String) -> String { span("attr", html) }
    private func property(_ html: String) -> String { span("property", html) }
    private func builtin(_ html: String) -> String { span("builtin", html) }

    private static let tokenClasses: Set<String> = [
        "tok-keyword", "tok-string", "tok-comment", "tok-number", "tok-type", "tok-tag", "tok-attr", "tok-property",
        "tok-builtin",
    ]
    private static let entities: [(html: [UInt8], character: UInt8)] = [
        ("&amp;", 0x26), ("&lt;", 0x3C), ("&gt;", 0x3E), ("&quot;", 0x22), ("&#39;", 0x27), ("&#0;", 0x00), ("&#13;", 0x0D),
    ].map { (Array($0.0.utf8), $0.1) }
    private static let spanOpening = Array("<span class=\"".utf8)
    private static let spanClosing = Array("</span>".utf8)

    /// The text of one line of output: tags removed, entities decoded. Fails on anything that is not
    /// one of the highlighter's spans or entities, on nested, unbalanced or empty spans, and on
    /// characters that should have been escaped. Works on bytes to stay quick on long lines.
    private func text(ofLine html: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        let bytes = Array(html.utf8)
        func hasPrefix(_ prefix: [UInt8], at index: Int) -> Bool {
            index + prefix.count <= bytes.count && Array(bytes[index..<(index + prefix.count)]) == prefix
        }
        var text: [UInt8] = []
        var openSpan = false
        var spanJustOpened = false
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "<") {
                if hasPrefix(Self.spanClosing, at: index) {
                    XCTAssertTrue(openSpan, "closing a span that is not open in \(html)", file: file, line: line)
                    XCTAssertFalse(spanJustOpened, "empty span in \(html)", file: file, line: line)
                    openSpan = false
                    index += Self.spanClosing.count
                    continue
                }
                let classStart = index + Self.spanOpening.count
                guard hasPrefix(Self.spanOpening, at: index),
                      let classEnd = bytes[classStart...].firstIndex(of: UInt8(ascii: "\"")),
                      classEnd + 1 < bytes.count, bytes[classEnd + 1] == UInt8(ascii: ">")
                else {
                    XCTFail("markup that is not a highlighter span in \(html)", file: file, line: line)
                    return String(decoding: text, as: UTF8.self)
                }
                let className = String(decoding: bytes[classStart..<classEnd], as: UTF8.self)
                XCTAssertTrue(Self.tokenClasses.contains(className), "unknown class \(className)", file: file, line: line)
                XCTAssertFalse(openSpan, "nested span in \(html)", file: file, line: line)
                openSpan = true
                spanJustOpened = true
                index = classEnd + 2
                continue
            }
            spanJustOpened = false
            if byte == UInt8(ascii: "&") {
                guard let entity = Self.entities.first(where: { hasPrefix($0.html, at: index) }) else {
                    XCTFail("unknown entity or raw & in \(html)", file: file, line: line)
                    return String(decoding: text, as: UTF8.self)
                }
                text.append(entity.character)
                index += entity.html.count
                continue
            }
            XCTAssertFalse(Array(">\"'\n\r".utf8).contains(byte), "unescaped \(byte) in \(html)", file: file, line: line)
            text.append(byte)
            index += 1
        }
        XCTAssertFalse(openSpan, "span left open at the end of the line \(html)", file: file, line: line)
        return String(decoding: text, as: UTF8.self)
    }

    /// Checks that highlighting `code` gives back exactly `code` (CRLF as LF) in well-formed lines.
    private func assertRoundTrip(_ code: String, _ language: CodingLanguage, file: StaticString = #filePath, line: UInt = #line) {
        let lines = highlight(code, language)
        let decoded = lines.map { text(ofLine: $0, file: file, line: line) }.joined(separator: "\n")
        // On bytes: as a String, "\r\n" is one Character and would hide mistakes.
        let bytes = Array(code.utf8)
        var expected = bytes.indices.filter { !(bytes[$0] == 0x0D && $0 + 1 < bytes.count && bytes[$0 + 1] == 0x0A) }.map { bytes[$0] }
        if expected.last == 0x0A { expected.removeLast() }
        XCTAssertEqual(Array(decoded.utf8), expected, "\(language) changed \(code.debugDescription)", file: file, line: line)
        let expectedLineCount = expected.filter { $0 == 0x0A }.count + 1
        XCTAssertEqual(lines.count, expectedLineCount, "\(language) line count for \(code.debugDescription)", file: file, line: line)
    }

    // MARK: Line structure

    func testEmptyCodeHasOneEmptyLine() {
        for language in CodingLanguage.allCases {
            XCTAssertEqual(highlight("", language), [""], "\(language)")
        }
    }

    func testTrailingNewlineAddsNoLine() {
        XCTAssertEqual(highlight("\n", .plaintext), [""])
        XCTAssertEqual(highlight("a\n", .plaintext), ["a"])
        XCTAssertEqual(highlight("a\n\n", .plaintext), ["a", ""])
        XCTAssertEqual(highlight("a\nb", .plaintext), ["a", "b"])
        XCTAssertEqual(highlight("let a\n", .swift), [keyword("let") + " a"])
    }

    func testCRLFIsOneLineBreakAndLoneCarriageReturnStaysVisible() {
        XCTAssertEqual(highlight("a\r\nb\r\n", .plaintext), ["a", "b"])
        XCTAssertEqual(highlight("let x = 1\r\n/* a\r\nb */\r\n", .swift), [
            keyword("let") + " x = " + number("1"), comment("/* a"), comment("b */"),
        ])
        XCTAssertEqual(highlight("s = 'a'\r\n", .python), ["s = " + string("&#39;a&#39;")])
        // A lone \r is not a line break (browsers would make it one inside a line, so it is escaped).
        XCTAssertEqual(highlight("a\rb", .plaintext), ["a&#13;b"])
    }

    func testNulBytesAreEscaped() {
        XCTAssertEqual(highlight("a\u{0}b", .plaintext), ["a&#0;b"])
        XCTAssertEqual(highlight("\"a\u{0}\"", .swift), [string("&quot;a&#0;&quot;")])
    }

    // MARK: Escaping

    func testPlaintextIsOnlyEscaped() {
        XCTAssertEqual(highlight("<script>alert(1)</script>", .plaintext), ["&lt;script&gt;alert(1)&lt;/script&gt;"])
        XCTAssertEqual(highlight("let x = \"1\" // <b> & 'q'", .plaintext), ["let x = &quot;1&quot; // &lt;b&gt; &amp; &#39;q&#39;"])
    }

    func testMarkupInCodeNeverBecomesMarkup() {
        let hostile = [
            "<script>alert(1)</script>", "\"><img src=x onerror=alert(1)>", "'; alert('x'); '", "&lt;already escaped&gt;",
            "</span><span class=\"evil\">", "<!-- --><![CDATA[<x>]]>", "`<b>` *<i>*",
        ]
        for language in CodingLanguage.allCases {
            for code in hostile {
                assertRoundTrip(code, language)
                for line in highlight(code, language) {
                    XCTAssertFalse(line.contains("<script") || line.contains("<img") || line.contains("evil\">"), "\(language): \(line)")
                }
            }
        }
    }

    func testQuotesAndAmpersandsInCodeAreEscaped() {
        XCTAssertEqual(highlight("a = \"<b>\" + '&'", .javascript), ["a = " + string("&quot;&lt;b&gt;&quot;") + " + " + string("&#39;&amp;&#39;")])
        XCTAssertEqual(highlight("<a title='\"x\"'>", .html), [tag("&lt;a") + " " + attr("title") + "=" + string("&#39;&quot;x&quot;&#39;") + tag("&gt;")])
    }

    // MARK: Multi-line tokens are split per line

    func testBlockCommentIsClosedAndReopenedOnEachLine() {
        XCTAssertEqual(highlight("a /* one\n\n  two */ b", .swift), ["a " + comment("/* one"), "", comment("  two */") + " b"])
        XCTAssertEqual(highlight("<!-- a\nb -->", .html), [comment("&lt;!-- a"), comment("b --&gt;")])
        XCTAssertEqual(highlight("{- a {- nested -}\n still -} x", .haskell), [comment("{- a {- nested -}"), comment(" still -}") + " x"])
        XCTAssertEqual(highlight("--[==[ a\n]] still ]==] x", .lua), [comment("--[==[ a"), comment("]] still ]==]") + " x"])
        XCTAssertEqual(highlight("=begin\ndoc\n=end\nx", .ruby), [comment("=begin"), comment("doc"), comment("=end"), "x"])
        XCTAssertEqual(highlight("=pod\ndoc\n=cut\n1", .perl), [comment("=pod"), comment("doc"), comment("=cut"), number("1")])
    }

    func testMultilineStringsAreClosedAndReopenedOnEachLine() {
        XCTAssertEqual(highlight("s = \"\"\"a\nb\"\"\" + 1", .python), ["s = " + string("&quot;&quot;&quot;a"), string("b&quot;&quot;&quot;") + " + " + number("1")])
        XCTAssertEqual(highlight("let s = \"\"\"\n  \\(x)\n  \"\"\"", .swift), [
            keyword("let") + " s = " + string("&quot;&quot;&quot;"), string("  \\(x)"), string("  &quot;&quot;&quot;"),
        ])
        XCTAssertEqual(highlight("t = `a ${b}\nc`;", .javascript), ["t = " + string("`a ${b}"), string("c`") + ";"])
        XCTAssertEqual(highlight("var s = @\"a\n\"\"b\"\"\";", .csharp), [keyword("var") + " s = " + string("@&quot;a"), string("&quot;&quot;b&quot;&quot;&quot;") + ";"])
        XCTAssertEqual(highlight("x := `a\nb`", .go), ["x := " + string("`a"), string("b`")])
        XCTAssertEqual(highlight("cat <<EOF\nhello $x\nEOF\necho", .shell), [
            "cat " + string("&lt;&lt;EOF"), string("hello $x"), string("EOF"), builtin("echo"),
        ])
        XCTAssertEqual(highlight("$s = <<<EOT\n  a\n  EOT;\n", .php), ["$s = " + string("&lt;&lt;&lt;EOT"), string("  a"), string("  EOT;")])
        XCTAssertEqual(highlight("s = [[a\nb]]", .lua), ["s = " + string("[[a"), string("b]]")])
        XCTAssertEqual(highlight("k: |\n  a: 1\n  # b\nn: 2", .yaml), [
            property("k") + ": " + keyword("|"), "  " + string("a: 1"), "  " + string("# b"), property("n") + ": " + number("2"),
        ])
    }

    func testUnterminatedTokensEndSafely() {
        // Single-line strings stop at the end of their line.
        XCTAssertEqual(highlight("let s = \"abc\nlet t = 1", .swift), [keyword("let") + " s = " + string("&quot;abc"), keyword("let") + " t = " + number("1")])
        XCTAssertEqual(highlight("{\"a\": \"b\n}", .json), ["{" + property("&quot;a&quot;") + ": " + string("&quot;b"), "}"])
        // Multi-line ones and block comments run to the end of the input.
        XCTAssertEqual(highlight("x /* abc\ndef", .c), ["x " + comment("/* abc"), comment("def")])
        XCTAssertEqual(highlight("'''abc\ndef", .python), [string("&#39;&#39;&#39;abc"), string("def")])
        XCTAssertEqual(highlight("<!-- abc", .xml), [comment("&lt;!-- abc")])
        XCTAssertEqual(highlight("<div class=\"x", .html), [tag("&lt;div") + " " + attr("class") + "=" + string("&quot;x")])
        XCTAssertEqual(highlight("cat <<EOF\nbody", .shell), ["cat " + string("&lt;&lt;EOF"), string("body")])
        XCTAssertEqual(highlight("--[[ open", .lua), [comment("--[[ open")])
        XCTAssertEqual(highlight("r#\"raw", .rust), [string("r#&quot;raw")])
        XCTAssertEqual(highlight("```swift\nlet x", .markdown), [string("```swift"), keyword("let") + " x"])
        for language in CodingLanguage.allCases {
            for code in ["\"", "'", "`", "/*", "<!--", "\"\"\"", "<<EOF", "{-", "--[[", "#\"", "r#\"", "<a b=\"", "```", "\\"] {
                assertRoundTrip(code, language)
                assertRoundTrip(code + "\nx", language)
            }
        }
    }

    // MARK: Languages

    func testSwift() {
        XCTAssertEqual(highlight("let s = \"hi\" + 0x1F // note", .swift), [
            keyword("let") + " s = " + string("&quot;hi&quot;") + " + " + number("0x1F") + " " + comment("// note"),
        ])
        XCTAssertEqual(highlight("@MainActor final class A<T>: B { let MAX_SIZE = URL(string: \"\\(f(\"x\"))\") }", .swift), [
            keyword("@MainActor") + " " + keyword("final") + " " + keyword("class") + " " + type("A") + "&lt;" + type("T") + "&gt;: "
                + type("B") + " { " + keyword("let") + " MAX_SIZE = " + type("URL") + "(string: "
                + string("&quot;\\(f(&quot;x&quot;))&quot;") + ") }",
        ])
        XCTAssertEqual(highlight("#if DEBUG\nlet r = #\"a \"b\" \\n\"#; x.default = self.init(1_000.5e-3)", .swift), [
            keyword("#if") + " " + type("DEBUG"),
            keyword("let") + " r = " + string("#&quot;a &quot;b&quot; \\n&quot;#") + "; x.default = " + keyword("self") + "."
                + keyword("init") + "(" + number("1_000.5e-3") + ")",
        ])
        XCTAssertEqual(highlight("iffy classes", .swift), ["iffy classes"])
    }

    func testPython() {
        XCTAssertEqual(highlight("@dataclass\ndef f(x: int) -> str:  # c\n    return rb'\\d' + f\"{x}\" if x is not None else len(0o17)", .python), [
            keyword("@dataclass"),
            keyword("def") + " f(x: " + type("int") + ") -&gt; " + type("str") + ":  " + comment("# c"),
            "    " + keyword("return") + " " + string("rb&#39;\\d&#39;") + " + " + string("f&quot;{x}&quot;") + " " + keyword("if") + " x "
                + keyword("is") + " " + keyword("not") + " " + keyword("None") + " " + keyword("else") + " " + builtin("len") + "("
                + number("0o17") + ")",
        ])
    }

    func testJavaScript() {
        XCTAssertEqual(highlight("const s = 'a' + 10; // c", .javascript), [
            keyword("const") + " s = " + string("&#39;a&#39;") + " + " + number("10") + "; " + comment("// c"),
        ])
        // A slash after an operand divides; elsewhere it starts a regular expression.
        XCTAssertEqual(highlight("x = a / b / c; r = /[/]\"/g.test(s)", .javascript), [
            "x = a / b / c; r = " + string("/[/]&quot;/g") + ".test(s)",
        ])
        XCTAssertEqual(highlight("`a ${f(`b`)} c` /* d */", .javascript), [string("`a ${f(`b`)} c`") + " " + comment("/* d */")])
    }

    func testTypeScript() {
        XCTAssertEqual(highlight("let n: number = 3; /* c */ interface A { s: \"x\" }", .typescript), [
            keyword("let") + " n: " + type("number") + " = " + number("3") + "; " + comment("/* c */") + " " + keyword("interface") + " "
                + type("A") + " { s: " + string("&quot;x&quot;") + " }",
        ])
    }

    func testJava() {
        XCTAssertEqual(highlight("@Override int x = 0b101; String s = \"a\"; char c = '\\''; // c", .java), [
            keyword("@Override") + " " + type("int") + " x = " + number("0b101") + "; " + type("String") + " s = "
                + string("&quot;a&quot;") + "; " + type("char") + " c = " + string("&#39;\\&#39;&#39;") + "; " + comment("// c"),
        ])
    }

    func testKotlin() {
        XCTAssertEqual(highlight("val s = \"a${x + \"b\"}\" + 1_000L // c", .kotlin), [
            keyword("val") + " s = " + string("&quot;a${x + &quot;b&quot;}&quot;") + " + " + number("1_000L") + " " + comment("// c"),
        ])
    }

    func testC() {
        XCTAssertEqual(highlight("#include <stdio.h>\nunsigned x = 0xFFu; /* c */ printf(\"%d\\n\", x);", .c), [
            keyword("#include") + " " + string("&lt;stdio.h&gt;"),
            type("unsigned") + " x = " + number("0xFFu") + "; " + comment("/* c */") + " " + builtin("printf") + "("
                + string("&quot;%d\\n&quot;") + ", x);",
        ])
    }

    func testCpp() {
        XCTAssertEqual(highlight("auto x = 1'000; std::string s = R\"d(a\")\")d\"; // c", .cpp), [
            keyword("auto") + " x = " + number("1&#39;000") + "; " + builtin("std") + "::" + type("string") + " s = "
                + string("R&quot;d(a&quot;)&quot;)d&quot;") + "; " + comment("// c"),
        ])
    }

    func testCSharp() {
        XCTAssertEqual(highlight("#region A\nvar s = @\"C:\\x\"; int n = 5; Get(); // c", .csharp), [
            keyword("#region") + " " + type("A"),
            keyword("var") + " s = " + string("@&quot;C:\\x&quot;") + "; " + type("int") + " n = " + number("5") + "; Get(); "
                + comment("// c"),
        ])
    }

    func testGo() {
        XCTAssertEqual(highlight("func f() { s := \"a\"; r := 'x'; return len(s) + 0x1F } // c", .go), [
            keyword("func") + " f() { s := " + string("&quot;a&quot;") + "; r := " + string("&#39;x&#39;") + "; " + keyword("return") + " "
                + builtin("len") + "(s) + " + number("0x1F") + " } " + comment("// c"),
        ])
    }

    func testRust() {
        XCTAssertEqual(highlight("fn f<'a>(x: &'a str) -> u8 { println!(\"{}\", 'c'); r#\"a\"b\"# ; 5u8 } /* a /* b */ c */", .rust), [
            keyword("fn") + " f&lt;&#39;a&gt;(x: &amp;&#39;a " + type("str") + ") -&gt; " + type("u8") + " { " + builtin("println!") + "("
                + string("&quot;{}&quot;") + ", " + string("&#39;c&#39;") + "); " + string("r#&quot;a&quot;b&quot;#") + " ; "
                + number("5u8") + " } " + comment("/* a /* b */ c */"),
        ])
    }

    func testRuby() {
        XCTAssertEqual(highlight("def empty?; puts \"a#{\"b\"}\", :sym, 1.5 end # c", .ruby), [
            keyword("def") + " empty?; " + builtin("puts") + " " + string("&quot;a#{&quot;b&quot;}&quot;") + ", " + string(":sym") + ", "
                + number("1.5") + " " + keyword("end") + " " + comment("# c"),
        ])
        XCTAssertEqual(highlight("x = s.gsub(/\"/, '') if a / b", .ruby), [
            "x = s.gsub(" + string("/&quot;/") + ", " + string("&#39;&#39;") + ") " + keyword("if") + " a / b",
        ])
    }

    func testPHP() {
        XCTAssertEqual(highlight("<?php $x = 'a' . 1; // c\nECHO $this->y; # d\n?>", .php), [
            keyword("&lt;?php") + " $x = " + string("&#39;a&#39;") + " . " + number("1") + "; " + comment("// c"),
            keyword("ECHO") + " " + keyword("$this") + "-&gt;y; " + comment("# d"),
            keyword("?&gt;"),
        ])
    }

    func testHTML() {
        XCTAssertEqual(highlight("<!DOCTYPE html>\n<p class=\"a\" hidden>Hi &amp; bye</p><!-- c -->", .html), [
            keyword("&lt;!DOCTYPE html&gt;"),
            tag("&lt;p") + " " + attr("class") + "=" + string("&quot;a&quot;") + " " + attr("hidden") + tag("&gt;") + "Hi &amp;amp; bye"
                + tag("&lt;/p&gt;") + comment("&lt;!-- c --&gt;"),
        ])
        // Script and style content is highlighted as JavaScript and CSS.
        XCTAssertEqual(highlight("<script>var x = 1; // </p>\n</SCRIPT><style>a { color: red }</style>", .html), [
            tag("&lt;script&gt;") + keyword("var") + " x = " + number("1") + "; " + comment("// &lt;/p&gt;"),
            tag("&lt;/SCRIPT&gt;&lt;style&gt;a") + " { " + property("color") + ": red }" + tag("&lt;/style&gt;"),
        ])
    }

    func testCSS() {
        XCTAssertEqual(highlight("@media (max-width: 600px) {\n  .a:hover, #b > p[href] { content: \"x\"; margin: -1px .5em !important; color: #fff; background: url(a.png) }\n} /* c */", .css), [
            keyword("@media") + " (" + property("max-width") + ": " + number("600px") + ") {",
            "  " + attr(".a") + keyword(":hover") + ", " + attr("#b") + " &gt; " + tag("p") + "[" + attr("href") + "] { "
                + property("content") + ": " + string("&quot;x&quot;") + "; " + property("margin") + ": -" + number("1px") + " "
                + number(".5em") + " " + keyword("!important") + "; " + property("color") + ": " + number("#fff") + "; "
                + property("background") + ": " + builtin("url") + "(" + string("a.png") + ") }",
            "} " + comment("/* c */"),
        ])
        // A snippet of bare declarations.
        XCTAssertEqual(highlight("color: red;", .css), [property("color") + ": red;"])
    }

    func testSQL() {
        XCTAssertEqual(highlight("SeLeCt COUNT(*), 'O''Brien', \"select\" FROM t WHERE t.from = 1.5 -- c\n/* d */", .sql), [
            keyword("SeLeCt") + " " + builtin("COUNT") + "(*), " + string("&#39;O&#39;&#39;Brien&#39;") + ", &quot;select&quot; "
                + keyword("FROM") + " t " + keyword("WHERE") + " t.from = " + number("1.5") + " " + comment("-- c"),
            comment("/* d */"),
        ])
    }

    func testShell() {
        XCTAssertEqual(highlight("if [ \"$(basename \"$f\")\" = 1 ]; then echo ${#a[@]} $# 'x'; fi # c", .shell), [
            keyword("if") + " [ " + string("&quot;$(basename &quot;$f&quot;)&quot;") + " = " + number("1") + " ]; " + keyword("then") + " "
                + builtin("echo") + " ${#a[@]} $# " + string("&#39;x&#39;") + "; " + keyword("fi") + " " + comment("# c"),
        ])
        XCTAssertEqual(highlight("x=$((1<<3)) --in", .shell), ["x=$((" + number("1") + "&lt;&lt;" + number("3") + ")) --in"])
    }

    func testJSON() {
        XCTAssertEqual(highlight("{\"a\": \"b\\\"\", \"n\": -1.5e3, \"t\": [true, null]} // c", .json), [
            "{" + property("&quot;a&quot;") + ": " + string("&quot;b\\&quot;&quot;") + ", " + property("&quot;n&quot;") + ": "
                + number("-1.5e3") + ", " + property("&quot;t&quot;") + ": [" + keyword("true") + ", " + keyword("null") + "]} "
                + comment("// c"),
        ])
    }

    func testYAML() {
        XCTAssertEqual(highlight("---\nkey: \"v\" # c\nlist:\n  - n: 1\n  - yes\nurl: http://x:80\nref: &a { b: [x, 2] }", .yaml), [
            keyword("---"),
            property("key") + ": " + string("&quot;v&quot;") + " " + comment("# c"),
            property("list") + ":",
            "  - " + property("n") + ": " + number("1"),
            "  - " + keyword("yes"),
            property("url") + ": http://x:80",
            property("ref") + ": " + builtin("&amp;a") + " { " + property("b") + ": [x, " + number("2") + "] }",
        ])
    }

    func testMarkdown() {
        XCTAssertEqual(highlight("# Title\n- a `code *x*` **b** snake_case [l](http://x) <!-- c -->\n1. n\n> q", .markdown), [
            keyword("# Title"),
            keyword("-") + " a " + string("`code *x*`") + " " + keyword("**") + "b" + keyword("**") + " snake_case [l]("
                + string("http://x") + ") " + comment("&lt;!-- c --&gt;"),
            keyword("1.") + " n",
            keyword("&gt;") + " q",
        ])
        // A fenced block in a known language is highlighted as that language; others are strings.
        XCTAssertEqual(highlight("```python\nx = 1  # c\n```\n~~~\nplain\n~~~", .markdown), [
            string("```python"), "x = " + number("1") + "  " + comment("# c"), string("```"), string("~~~"), string("plain"), string("~~~"),
        ])
    }

    func testXML() {
        XCTAssertEqual(highlight("<?xml version=\"1.0\"?>\n<a x:b='c'><![CDATA[<d>]]><!-- e --></a>", .xml), [
            tag("&lt;?xml") + " " + attr("version") + "=" + string("&quot;1.0&quot;") + tag("?&gt;"),
            tag("&lt;a") + " " + attr("x:b") + "=" + string("&#39;c&#39;") + tag("&gt;") + keyword("&lt;![CDATA[") + string("&lt;d&gt;")
                + keyword("]]&gt;") + comment("&lt;!-- e --&gt;") + tag("&lt;/a&gt;"),
        ])
    }

    func testObjectiveC() {
        XCTAssertEqual(highlight("#import <Foundation/Foundation.h>\n@interface A : NSObject\nNSString *s = @\"x\"; BOOL b = YES; int n = 1; // c\n@end", .objectivec), [
            keyword("#import") + " " + string("&lt;Foundation/Foundation.h&gt;"),
            keyword("@interface") + " " + type("A") + " : " + type("NSObject"),
            type("NSString") + " *s = " + string("@&quot;x&quot;") + "; " + type("BOOL") + " b = " + keyword("YES") + "; " + type("int")
                + " n = " + number("1") + "; " + comment("// c"),
            keyword("@end"),
        ])
    }

    func testScala() {
        XCTAssertEqual(highlight("case class A(x: Int) { val s = s\"v=${x}\"; val c = 'a'; 1 } // c", .scala), [
            keyword("case") + " " + keyword("class") + " " + type("A") + "(x: " + type("Int") + ") { " + keyword("val") + " s = "
                + string("s&quot;v=${x}&quot;") + "; " + keyword("val") + " c = " + string("&#39;a&#39;") + "; " + number("1") + " } "
                + comment("// c"),
        ])
    }

    func testDart() {
        XCTAssertEqual(highlight("final s = r'\\n'; var n = 1.5; // c", .dart), [
            keyword("final") + " s = " + string("r&#39;\\n&#39;") + "; " + keyword("var") + " n = " + number("1.5") + "; " + comment("// c"),
        ])
    }

    func testLua() {
        XCTAssertEqual(highlight("local function f(t) return #t .. \"a\" + 1 end -- c", .lua), [
            keyword("local") + " " + keyword("function") + " f(t) " + keyword("return") + " #t .. " + string("&quot;a&quot;") + " + "
                + number("1") + " " + keyword("end") + " " + comment("-- c"),
        ])
    }

    func testPerl() {
        XCTAssertEqual(highlight("my @a = qw(a b); my $n = $#a; print \"x\" . 1; # c", .perl), [
            keyword("my") + " @a = " + string("qw(a b)") + "; " + keyword("my") + " $n = $#a; " + builtin("print") + " "
                + string("&quot;x&quot;") + " . " + number("1") + "; " + comment("# c"),
        ])
        // Substitutions and bare patterns are strings, so quotes inside them open nothing.
        XCTAssertEqual(highlight("$s =~ s/\"//g; $t =~ tr{a}{b}; $r = $x / 2 if $s =~ /'/;", .perl), [
            "$s =~ " + string("s/&quot;//g") + "; $t =~ " + string("tr{a}{b}") + "; $r = $x / " + number("2") + " " + keyword("if")
                + " $s =~ " + string("/&#39;/") + ";",
        ])
    }

    func testR() {
        XCTAssertEqual(highlight("f <- function(x, na.rm = TRUE) is.na(x) + 1L # c", .r), [
            "f &lt;- " + keyword("function") + "(x, na.rm = " + keyword("TRUE") + ") " + builtin("is.na") + "(x) + " + number("1L") + " "
                + comment("# c"),
        ])
        XCTAssertEqual(highlight("s <- 'a'", .r), ["s &lt;- " + string("&#39;a&#39;")])
    }

    func testHaskell() {
        XCTAssertEqual(highlight("main = putStrLn \"hi\" >> f x' 'c' 1 -- c\na --> b", .haskell), [
            "main = " + builtin("putStrLn") + " " + string("&quot;hi&quot;") + " &gt;&gt; f x&#39; " + string("&#39;c&#39;") + " "
                + number("1") + " " + comment("-- c"),
            "a --&gt; b",
        ])
        XCTAssertEqual(highlight("module Main where", .haskell), [keyword("module") + " " + type("Main") + " " + keyword("where")])
    }

    func testDockerfile() {
        XCTAssertEqual(highlight("# syntax=docker/dockerfile:1\nFROM alpine:3 AS base\nRUN apk add curl && \\\n    echo \"hi\" # done\nEXPOSE 8080\nonbuild run make", .dockerfile), [
            comment("# syntax=docker/dockerfile:1"),
            keyword("FROM") + " alpine:" + number("3") + " " + keyword("AS") + " base",
            keyword("RUN") + " apk add curl &amp;&amp; \\",
            "    " + builtin("echo") + " " + string("&quot;hi&quot;") + " " + comment("# done"),
            keyword("EXPOSE") + " " + number("8080"),
            keyword("onbuild") + " " + keyword("run") + " make",
        ])
        XCTAssertEqual(highlight("RUN <<EOF\nset -e\nEOF\nCMD [\"x\"]", .dockerfile), [
            keyword("RUN") + " " + string("&lt;&lt;EOF"), string("set -e"), string("EOF"), keyword("CMD") + " [" + string("&quot;x&quot;") + "]",
        ])
    }

    func testEveryLanguageHasATestedKeywordStringCommentAndNumber() {
        // One line per language, so that a grammar that loses a token class shows up here at once.
        let samples: [CodingLanguage: String] = [
            .swift: "let a = \"s\" + 1 // c", .python: "if 'a' == 1: pass # c", .javascript: "let a = 's' + 1 // c",
            .typescript: "let a = 's' + 1 // c", .java: "return \"s\" + 1; // c", .kotlin: "val a = \"s\" + 1 // c",
            .c: "return \"s\" + 1; // c", .cpp: "return \"s\" + 1; // c", .csharp: "return \"s\" + 1; // c",
            .go: "return \"s\" + 1 // c", .rust: "let a = \"s\" + 1; // c", .ruby: "return 's' + 1 # c",
            .php: "return 's' + 1; // c", .sql: "SELECT 's' + 1 -- c", .shell: "if echo 's' 1; then :; fi # c",
            .objectivec: "return @\"s\" + 1; // c", .scala: "val a = \"s\" + 1 // c", .dart: "var a = 's' + 1; // c",
            .lua: "local a = 's' + 1 -- c", .perl: "my $a = 's' + 1; # c", .r: "if ('s' == 1) NULL # c",
            .haskell: "let a = \"s\" + 1 -- c", .json: "{\"k\": [\"s\", 1, true]} // c", .yaml: "k: ['s', 1, true] # c",
            .dockerfile: "# c\nEXPOSE 1 \"s\"", .css: "@media { a { content: 's'; width: 1px } } /* c */",
            .html: "<!DOCTYPE html><a href='s'><!-- c --><script>1</script>", .xml: "<!DOCTYPE a><a b='s'><!-- c -->1</a>",
            .markdown: "# k\n`s` <!-- c -->",
        ]
        for (language, code) in samples {
            let html = highlight(code, language).joined(separator: "\n")
            for kind in ["keyword", "string", "comment"] {
                XCTAssertTrue(html.contains("class=\"tok-\(kind)\""), "\(language) has no \(kind) in \(html)")
            }
            // Markdown and XML have no numbers.
            if language != .markdown && language != .xml {
                XCTAssertTrue(html.contains("class=\"tok-number\""), "\(language) has no number in \(html)")
            }
        }
        XCTAssertEqual(Set(samples.keys).union([.plaintext]), Set(CodingLanguage.allCases))
    }

    // MARK: Size and odd input

    func testTwoThousandLines() {
        let sample = """
            /* block <comment>
               on two lines */ let x = "str & 'q'" + 0x1F; // trailing #comment
            def f(a): return a * 2.5e3  # key: value <tag attr="v">
            """
        let code = Array(repeating: sample, count: 667).joined(separator: "\n") + "\nend"
        let expectedLines = 667 * 3 + 1
        for language in CodingLanguage.allCases {
            let lines = highlight(code, language)
            XCTAssertEqual(lines.count, expectedLines, "\(language)")
            XCTAssertEqual(lines.last.map { text(ofLine: $0) }, "end", "\(language)")
        }
    }

    func testVeryLongLinesAndPathologicalInput() {
        let cases: [(CodingLanguage, String)] = [
            (.javascript, String(repeating: "/[", count: 30_000)), (.swift, String(repeating: "#", count: 60_000) + "\""),
            (.shell, String(repeating: "<<'", count: 20_000)), (.markdown, (1...300).map { String(repeating: "`", count: $0) }.joined(separator: "a")),
            (.markdown, String(repeating: "*a _b ", count: 10_000)), (.cpp, String(repeating: "R\"", count: 30_000)),
            (.lua, String(repeating: "[=", count: 30_000)), (.css, String(repeating: "a:b ", count: 20_000)),
            (.yaml, String(repeating: "- ", count: 30_000) + "k: v"), (.rust, String(repeating: "'", count: 60_000)),
            (.python, String(repeating: "x", count: 100_000)), (.html, String(repeating: "<a b=", count: 20_000)),
            (.perl, String(repeating: "q(", count: 30_000)), (.ruby, String(repeating: "\"#{", count: 20_000)),
            (.json, "\"" + String(repeating: " ", count: 60_000)), (.dockerfile, String(repeating: "RUN a \\\n", count: 20_000)),
            (.perl, String(repeating: "s{", count: 30_000)), (.ruby, String(repeating: "(/[", count: 20_000)),
        ]
        for (language, code) in cases {
            let start = Date()
            _ = highlight(code, language)
            // Generous: linear work takes milliseconds; quadratic work on these inputs takes minutes.
            XCTAssertLessThan(Date().timeIntervalSince(start), 5, "\(language) is not linear on its pathological input")
            assertRoundTrip(code, language)
        }
    }

    // MARK: Property: the output is the input

    func testOutputIsTheEscapedInputForTrickySamples() {
        let samples = [
            "", "\n", "\n\n", "a", "\r\n", "\r", "\u{0}", "é😀\u{2028}", "\"\\\"\"", "'\\''", "/* */ /*", "<!-- -->", "\"\"\"\n\"\"\"",
            "#\"\"#", "r##\"x\"#\"##", "R\"(x)\"", "<<EOF\nEOF\n<<-X\n\tX", "--[[\n]]", "{- {- -} -}", "=begin\n=end", "=pod\n=cut",
            "`a ${`b ${c}`}`", "\"\\(\"\\(\"x\")\")\"", "$(echo \"$(echo \")\")\")", "<script>\"</script>", "<style>a{}</style>",
            "```js\n`x`\n```", "---\n- a: |\n    b\n  c: 'd''e'", "k: \"a\nb\" # c", "{\"a\":\n\"b\"}", "@media{a{b:c}}",
            "FROM a\nRUN b \\\n# c\n  d", "q{a{b}c}", ":sym :\"s\"", "'a' b'x' 'static", "#include <a\n", "x'", "0x 1e 1e+ .5 1..2",
            "\t \u{0B}\u{0C}", "---", "...", "%", "-", "#", "=", "<", "@", "R", "r#", "<<", "q(", "'", "$", ":", "|", "<a\n b='\n'\n>", "<![CDATA[", "]]>", "&amp; &#39; &", "\\", "\"\\", "*a* **b** ***c*** ~~d~~ _e_",
        ]
        for language in CodingLanguage.allCases {
            for code in samples {
                assertRoundTrip(code, language)
                assertRoundTrip(code.replacingOccurrences(of: "\n", with: "\r\n"), language)
            }
        }
    }

    func testOutputIsTheEscapedInputForRandomInput() {
        let fragments = [
            "\"", "'", "`", "\\", "/", "*", "#", "-", "<", ">", "!", "[", "]", "=", "{", "}", "(", ")", "$", "@", ":", ";", "\n",
            "\r\n", "\r", " ", "\t", "a", "Z", "_", "0", "1.5e3", "0x", "\"\"\"", "'''", "<<EOF\n", "EOF", "--", "--[[", "]]", "/*",
            "*/", "//", "<!--", "-->", "{-", "-}", "<script>", "</script>", "<style>", "```", "~~~", "\u{0}", "é", "😀", "if",
            "class", "SELECT", "&", "%", "=begin", "=end", "=pod", "=cut", "|", "R\"x(", ")x\"", "r#\"", "\"#", "#\"", "${", "\\(",
            "#{", "$(", "q{", "<<<", "~", "- ", ": ", "? ", ".", ",", "RUN ", "FROM ", "\\\n", "<![CDATA[", "<?", "?>",
        ]
        var generator = SplitMix(seed: 0x5EED)
        for language in CodingLanguage.allCases {
            for _ in 0..<120 {
                let length = Int(generator.next() % 40)
                let code = (0..<length).map { _ in fragments[Int(generator.next() % UInt64(fragments.count))] }.joined()
                assertRoundTrip(code, language)
            }
        }
    }
}
