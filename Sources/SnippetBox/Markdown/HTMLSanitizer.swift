import Foundation

/// Keeps the HTML that Markdown produces and escapes everything else.
///
/// Tags are kept only when they are on an allow-list, and only with allowed attributes; links and
/// images keep their address only when it is `http`, `https`, `mailto` or relative. Any other tag
/// (`<script>`, `<iframe>`, `<img onerror=…>`, comments) is written back as visible text.
struct HTMLSanitizer: Sendable {
    static let allowedTags: Set<String> = [
        "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "em", "strong", "del", "code", "pre", "blockquote",
        "ul", "ol", "li", "a", "img", "table", "thead", "tbody", "tr", "th", "td",
    ]
    static let allowedAttributes: [String: Set<String>] = [
        "a": ["href", "title"], "img": ["src", "alt", "title"], "code": ["class"], "ol": ["start"],
    ]

    /// Elements that have no closing tag.
    static let voidTags: Set<String> = ["br", "hr", "img"]

    /// Every element kept is closed, in order, within the note: raw HTML in Markdown may leave one
    /// open (`<a href="…">this`), which then spread over the rest of the page after the notes (the
    /// screenshot became a link to the other site; fifth bug hunt). A closing tag closes what was
    /// opened after its element; one that closes nothing open is dropped; what is still open at the
    /// end is closed there.
    func sanitize(_ html: String) -> String {
        var output = ""
        output.reserveCapacity(html.utf8.count)
        var open: [String] = []
        // How many of each element are open: a closing tag of one not open is dropped at once, not
        // after a search of the stack (thousands of stray closing tags made that quadratic).
        var openCounts: [String: Int] = [:]
        // A `<` after the last `>` has no end: it is text, found so without a search. Searching from
        // each such `<` to the end of the note made a note of `x<` repeated take time growing with
        // the square of its length (10 s for 16,000 characters, and 100,000 never finished). A `<`
        // before it searches only as far as the next `>`, where the scan then goes on.
        let lastClosing = html.lastIndex(of: ">")
        var index = html.startIndex
        while index < html.endIndex {
            let character = html[index]
            if character == "<", let lastClosing, index < lastClosing, let end = html[index...lastClosing].firstIndex(of: ">") {
                let tag = String(html[html.index(after: index)..<end])
                if let rebuilt = rebuild(tag) {
                    if rebuilt.isClosing {
                        if openCounts[rebuilt.name, default: 0] > 0 {
                            while let name = open.popLast() {
                                output += "</\(name)>"
                                openCounts[name, default: 1] -= 1
                                if name == rebuilt.name { break }
                            }
                        }
                    } else {
                        output += rebuilt.html
                        if !rebuilt.isSelfClosing, !Self.voidTags.contains(rebuilt.name) {
                            open.append(rebuilt.name)
                            openCounts[rebuilt.name, default: 0] += 1
                        }
                    }
                } else {
                    output += escape(String(html[index...end]))
                }
                index = html.index(after: end)
            } else if character == "<" {
                output += "&lt;"
                index = html.index(after: index)
            } else if character == ">" {
                output += "&gt;"
                index = html.index(after: index)
            } else {
                output.append(character)
                index = html.index(after: index)
            }
        }
        for name in open.reversed() { output += "</\(name)>" }
        return output
    }

    /// The tag written back from its parsed name and allowed attributes, or nil if it is not allowed.
    private func rebuild(_ inner: String) -> (html: String, name: String, isClosing: Bool, isSelfClosing: Bool)? {
        var text = Substring(inner)
        let isClosing = text.hasPrefix("/")
        if isClosing { text = text.dropFirst() }
        let isSelfClosing = text.hasSuffix("/")
        if isSelfClosing { text = text.dropLast() }
        let name = String(text.prefix { $0.isLetter || $0.isNumber }).lowercased()
        guard !name.isEmpty, Self.allowedTags.contains(name) else { return nil }
        if isClosing { return ("</\(name)>", name, true, false) }
        var attributes = ""
        for (key, value) in parseAttributes(text.dropFirst(name.count)) {
            guard Self.allowedAttributes[name]?.contains(key) == true else { continue }
            if (key == "href" || key == "src") && !isSafeURL(value) { continue }
            attributes += " \(key)=\"\(escape(value))\""
        }
        if name == "a" { attributes += " rel=\"nofollow noopener noreferrer\"" }
        return ("<\(name)\(attributes)\(isSelfClosing ? "/" : "")>", name, false, isSelfClosing)
    }

    private func parseAttributes(_ text: Substring) -> [(String, String)] {
        var result: [(String, String)] = []
        var rest = text
        while true {
            rest = rest.drop { $0.isWhitespace }
            let key = rest.prefix { !$0.isWhitespace && $0 != "=" }
            guard !key.isEmpty else { break }
            rest = rest.dropFirst(key.count).drop { $0.isWhitespace }
            var value = ""
            if rest.first == "=" {
                rest = rest.dropFirst().drop { $0.isWhitespace }
                if let quote = rest.first, quote == "\"" || quote == "'" {
                    rest = rest.dropFirst()
                    let body = rest.prefix { $0 != quote }
                    value = String(body)
                    rest = rest.dropFirst(body.count).dropFirst()
                } else {
                    let body = rest.prefix { !$0.isWhitespace }
                    value = String(body)
                    rest = rest.dropFirst(body.count)
                }
            }
            result.append((key.lowercased(), decodeEntities(value)))
        }
        return result
    }

    private func isSafeURL(_ value: String) -> Bool {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
            .filter { !$0.isWhitespace && $0 != "\0" }
        guard let colon = trimmed.firstIndex(of: ":") else { return true }
        if let slash = trimmed.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }), slash < colon { return true }
        let scheme = trimmed[..<colon]
        return ["http", "https", "mailto"].contains(scheme)
    }

    private func decodeEntities(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    private func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
