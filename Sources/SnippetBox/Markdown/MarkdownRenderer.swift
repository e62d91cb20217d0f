import Foundation
import Ink

/// Renders a snippet's notes from Markdown with Ink, then passes the HTML through `HTMLSanitizer`,
/// because Markdown lets raw HTML through and a note must never run script in a visitor's browser.
struct MarkdownRenderer: Sendable {
    func render(_ markdown: String) -> String {
        guard !markdown.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return "" }
        guard Self.isWithinInksReach(markdown) else { return Self.plainText(markdown) }
        let html = MarkdownParser().html(from: Self.avoidingInkDefects(markdown))
        return HTMLSanitizer().sanitize(html)
    }

    /// The most `[` a note may hold, and the deepest they may nest, for Ink to read it. Ink reads a
    /// link's text by recursion, one level per `[` still open, and a note of `[a ` 3,000 times
    /// overflowed the stack of the thread rendering it, which killed the server for everyone. It
    /// looks for each `[`'s `](…)` again from there, so a note of `[a](` repeated took time growing
    /// with the square of its length (55 s for 12,000 in a debug build). 200 links or task boxes
    /// in one note, or 32 brackets open at once, are beyond what notes hold.
    static let maximumBrackets = 200
    static let maximumBracketDepth = 32

    /// How many characters Ink may read ahead, in all, where what it reads turns out not to be what
    /// it looked for. Read ahead from each of a run of such characters, a note of them took time
    /// growing with the square of its length, and held a worker all the while:
    /// - at each `&` Ink reads on to the next `;`, or to whitespace or the end, where it gives up
    ///   (`&` 10,000 times took 11 s in a debug build, 20,000 more than 30 s);
    /// - at each `<` it reads an HTML element's name, then on to a `>`, past line breaks: a `<` with
    ///   no `>` after it reads to the end of the note (`x<` 8,000 times took 2.4 s, and 100,000
    ///   `<` never finished).
    /// Prose and code look a word ahead at an `&`, and have few `<` after their last `>`; a note that
    /// would make Ink read more than this is shown as its text.
    static let maximumLookAhead = 200_000

    /// Whether Ink may be given `markdown` (see `maximumBrackets` and `maximumLookAhead`).
    ///
    /// Read in characters, as Ink reads: a `;` or `>` with a combining mark after it is another
    /// character, which ends nothing (counted in scalars, `&;` and a combining acute accent repeated
    /// passed as reading nothing ahead, and Ink read from each `&` to the end).
    static func isWithinInksReach(_ markdown: String) -> Bool {
        var brackets = 0
        var depth = 0
        // The `&` seen since the last whitespace or `;`, each of which reads on past every character
        // that follows until one.
        var ampersandsReading = 0
        var lookAhead = 0
        // The `<` since the last `>` that begin an element's name (a `<` before whitespace or a `>`
        // is given up at once), and the sum of their offsets: each reads to the end.
        var openAngles = 0
        var openAngleOffsets = 0
        var previousWasAngle = false
        var length = 0
        for character in markdown {
            lookAhead += ampersandsReading
            if previousWasAngle, !character.isWhitespace, character != ">" {
                openAngles += 1
                openAngleOffsets += length - 1
            }
            previousWasAngle = character == "<"
            switch character {
            case "[":
                brackets += 1
                depth += 1
                if brackets > maximumBrackets || depth > maximumBracketDepth { return false }
            case "]":
                depth = max(0, depth - 1)
            case "&":
                ampersandsReading += 1
            case ";":
                ampersandsReading = 0
            case ">":
                (openAngles, openAngleOffsets) = (0, 0)
            default:
                if character.isWhitespace { ampersandsReading = 0 }
            }
            length += 1
            if lookAhead > maximumLookAhead { return false }
        }
        return lookAhead + (openAngles * length - openAngleOffsets) <= maximumLookAhead
    }

    /// A note Ink cannot be given, as its text: a paragraph per blank-line-separated block, its line
    /// breaks kept, everything escaped.
    static func plainText(_ markdown: String) -> String {
        let paragraphs = markdown.replacingOccurrences(of: "\r\n", with: "\n")
            .components(separatedBy: "\n\n")
            .map { $0.trimmingCharacters(in: .newlines) }
            .filter { !$0.isEmpty }
        return paragraphs.map { paragraph in
            "<p>" + paragraph.split(separator: "\n", omittingEmptySubsequences: false)
                .map { MarkedText.html(plain: String($0)) }.joined(separator: "<br>") + "</p>"
        }.joined(separator: "\n")
    }

    /// `markdown` rewritten where Ink 0.6.0 would crash or never return, rendering as it would have
    /// rendered had Ink not failed. Notes are whatever a user typed, and either failure took down
    /// every library the server holds (the crash), or a worker thread and all its memory (the loop).
    ///
    /// - Ink reads past the end of the text ("String index is out of bounds") where a list item or an
    ///   open metadata block is followed by nothing but whitespace (`* ` then a newline and a tab).
    ///   Whitespace at the very end of a note renders as nothing, so it is dropped.
    /// - A note whose first line is exactly `---` is read as the start of a metadata block, which
    ///   hides what follows up to the next `---`. Notes have no metadata; a first line of three
    ///   dashes is a horizontal rule, as in CommonMark, and Ink draws `***` as one.
    /// - A paragraph ends where `<p` (or `<P`) begins, and Ink then reads an HTML element there. Where
    ///   it cannot (no `>` anywhere after it, or a `\` before it, which makes Ink refuse an element),
    ///   a paragraph is tried again at the same place, ends there at once, and the parser loops,
    ///   adding an empty paragraph each time. Such a `<` is written as `&lt;`, which Ink passes
    ///   through and a browser shows as `<` (after a `\`, which Ink drops, as it drops the escape
    ///   of any character). In code (between backticks, or in a fenced block) Ink escapes the `&`, so
    ///   there it shows as `&lt;`: left that way rather than following Ink's code spans, because a
    ///   `<p` wrongly judged to be in code would hang the server.
    static func avoidingInkDefects(_ markdown: String) -> String {
        var text = markdown
        if let last = text.lastIndex(where: { !$0.isWhitespace }) {
            text.removeSubrange(text.index(after: last)...)
        }
        // Ink skips whitespace and newlines (`Character.isWhitespace`) before the first fragment.
        if let start = text.firstIndex(where: { !$0.isWhitespace }), text[start...].hasPrefix("---\n") {
            text.replaceSubrange(start..<text.index(start, offsetBy: 3), with: "***")
        }
        guard text.contains("<") else { return text }
        // A `<` before the last `>` has one after it.
        let lastClosing = text.lastIndex(of: ">")
        var rewritten = ""
        rewritten.reserveCapacity(text.utf8.count + 8)
        var previous: Character?
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            let next = text.index(after: index)
            if character == "<", next < text.endIndex, text[next] == "p" || text[next] == "P",
               previous == "\\" || lastClosing.map({ $0 < index }) ?? true {
                rewritten += "&lt;"
            } else {
                rewritten.append(character)
            }
            previous = character
            index = next
        }
        return rewritten
    }
}
