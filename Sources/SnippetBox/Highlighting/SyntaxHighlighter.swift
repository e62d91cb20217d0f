import Foundation

/// Highlights code on the server: escaped HTML, one string per line, tokens wrapped in spans.
///
/// The code's UTF-8 bytes (CRLF folded into LF) are read once, left to right, by the scanner for
/// its language: `CodeScanner` driven by a `LanguageGrammar` table for the programming languages,
/// scanners of their own for markup, CSS, JSON, YAML, Markdown and Dockerfiles. Scanners report
/// coloured tokens to an `HTMLLineWriter`, which escapes everything (`HTMLEscaping`) and cuts the
/// result into lines whose spans are balanced. Every scanner step consumes input and every
/// look-ahead is either consumed or bounded, so the work is linear in the size of the code.
public enum SyntaxHighlighter {
    public static func highlight(_ code: String, as language: CodingLanguage) -> HighlightedCode {
        let text = normalizedLineBreaks(Array(code.utf8))
        if text.isEmpty { return HighlightedCode(lines: [""]) }
        let lines = text.withUnsafeBufferPointer { buffer in
            let writer = HTMLLineWriter(source: SourceView(base: buffer.baseAddress!, count: buffer.count, end: buffer.count))
            highlight(0..<buffer.count, as: language, into: writer, grammars: GrammarCache())
            return writer.finish()
        }
        return HighlightedCode(lines: lines)
    }

    /// Highlights a range of the writer's source. Hosts call it for the code they embed: `<script>`
    /// in HTML, fenced blocks in Markdown.
    static func highlight(_ range: Range<Int>, as language: CodingLanguage, into writer: HTMLLineWriter, grammars: GrammarCache) {
        guard !range.isEmpty else { return }
        switch language {
        case .plaintext: writer.write(range.lowerBound, range.upperBound)
        case .html: MarkupScanner.highlight(range, dialect: .html, into: writer, grammars: grammars)
        case .xml: MarkupScanner.highlight(range, dialect: .xml, into: writer, grammars: grammars)
        case .css: CSSScanner.highlight(range, into: writer)
        case .json: JSONScanner.highlight(range, into: writer)
        case .yaml: YAMLScanner.highlight(range, into: writer)
        case .markdown: MarkdownScanner.highlight(range, into: writer, grammars: grammars)
        case .dockerfile: DockerfileScanner.highlight(range, into: writer, grammars: grammars)
        case .swift, .python, .javascript, .typescript, .java, .kotlin, .c, .cpp, .csharp, .go, .rust, .ruby, .php,
             .sql, .shell, .objectivec, .scala, .dart, .lua, .perl, .r, .haskell:
            if let grammar = grammars.grammar(for: language) {
                CodeScanner.highlight(range, with: grammar, into: writer)
            }
        }
    }

    /// CRLF becomes LF so that no line keeps a trailing `\r`; a lone `\r` stays a character.
    private static func normalizedLineBreaks(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, memchr(base, Int32(ASCII.carriageReturn), buffer.count) != nil else {
                return bytes
            }
            var result = [UInt8](repeating: 0, count: buffer.count)
            let count = result.withUnsafeMutableBufferPointer { output in
                var count = 0
                var index = 0
                while index < buffer.count {
                    let byte = base[index]
                    if !(byte == ASCII.carriageReturn && index + 1 < buffer.count && base[index + 1] == ASCII.newline) {
                        output[count] = byte
                        count += 1
                    }
                    index += 1
                }
                return count
            }
            result.removeLast(result.count - count)
            return result
        }
    }
}

public struct HighlightedCode: Sendable, Equatable {
    /// The HTML of each line of the code (without the newline), in order. A code ending in "\n" has no extra empty last line; an empty code has one empty line.
    public let lines: [String]
}
