import Foundation

/// HTML and XML: tags, attributes and their values, comments, doctypes, processing instructions and
/// CDATA. Text between tags is left plain. In HTML the content of `<script>` and `<style>` is
/// highlighted as JavaScript and CSS, since that is what it is.
final class MarkupScanner {
    enum Dialect {
        case html, xml
    }

    private static let commentOpen = Array("<!--".utf8)
    private static let commentClose = Array("-->".utf8)
    private static let cdataOpen = Array("<![CDATA[".utf8)
    private static let cdataClose = Array("]]>".utf8)

    private let dialect: Dialect
    private let writer: HTMLLineWriter
    private let grammars: GrammarCache
    private let source: SourceView
    private let end: Int
    // Hot state skips run-time exclusivity checks, as in `HTMLLineWriter`: one scan, one thread.
    @exclusivity(unchecked) private var position: Int

    static func highlight(_ range: Range<Int>, dialect: Dialect, into writer: HTMLLineWriter, grammars: GrammarCache) {
        MarkupScanner(dialect: dialect, writer: writer, range: range, grammars: grammars).run()
    }

    private init(dialect: Dialect, writer: HTMLLineWriter, range: Range<Int>, grammars: GrammarCache) {
        self.dialect = dialect
        self.writer = writer
        self.grammars = grammars
        source = writer.source.limited(to: range.upperBound)
        end = source.end
        position = range.lowerBound
    }

    private func run() {
        while position < end {
            if source[position] == ASCII.lessThan && scanMarkup() { continue }
            // Text runs to the next `<`.
            var textEnd = end
            if let lessThan = memchr(source.base + position + 1, Int32(ASCII.lessThan), end - position - 1) {
                textEnd = source.base.distance(to: lessThan.assumingMemoryBound(to: UInt8.self))
            }
            emit(textEnd, nil)
        }
    }

    private func emit(_ tokenEnd: Int, _ kind: TokenKind?) {
        writer.write(position, tokenEnd, as: kind)
        position = tokenEnd
    }

    private func isNameStart(_ byte: UInt8) -> Bool {
        ASCII.isLetter(byte) || byte == ASCII.underscore || byte == ASCII.colon || byte >= 0x80
    }

    private func isNameByte(_ byte: UInt8) -> Bool {
        ASCII.isWordByte(byte) || byte == ASCII.minus || byte == ASCII.dot || byte == ASCII.colon
    }

    private func nameEnd(from index: Int) -> Int {
        var index = index
        while index < end && isNameByte(source[index]) { index += 1 }
        return index
    }

    /// Scans the markup starting with the `<` at `position`; false when the `<` is just text.
    private func scanMarkup() -> Bool {
        let next = source.byte(at: position + 1)
        if source.matches(Self.commentOpen, at: position) {
            emit(source.endOfFirst(Self.commentClose, from: position + 4), .comment)
            return true
        }
        if source.matches(Self.cdataOpen, at: position) {
            emit(position + Self.cdataOpen.count, .keyword)
            let close = source.firstIndex(of: Self.cdataClose, from: position)
            emit(close ?? end, .string)
            if let close { emit(close + Self.cdataClose.count, .keyword) }
            return true
        }
        if next == 0x21 /* ! */ && ASCII.isLetter(source.byte(at: position + 2)) {
            // <!DOCTYPE html>, <!ELEMENT …>
            var declarationEnd = position + 2
            while declarationEnd < end && source[declarationEnd] != ASCII.greaterThan { declarationEnd += 1 }
            emit(min(declarationEnd + 1, end), .keyword)
            return true
        }
        if next == ASCII.question && isNameStart(source.byte(at: position + 2)) {
            emit(nameEnd(from: position + 2), .tag)
            scanAttributes()
            return true
        }
        if next == ASCII.slash && isNameStart(source.byte(at: position + 2)) {
            emit(nameEnd(from: position + 2), .tag)
            scanAttributes()
            return true
        }
        guard isNameStart(next) else { return false }
        let nameStart = position + 1
        let nameEnd = nameEnd(from: nameStart)
        let name = source.string(nameStart, nameEnd, lowercased: true)
        emit(nameEnd, .tag)
        let closed = scanAttributes()
        if dialect == .html && closed && (name == "script" || name == "style") {
            let contentEnd = rawTextEnd(closingTag: Array("</\(name)".utf8))
            SyntaxHighlighter.highlight(position..<contentEnd, as: name == "script" ? .javascript : .css, into: writer, grammars: grammars)
            position = contentEnd
        }
        return true
    }

    /// Scans attributes up to and including the tag's `>`, `/>` or `?>`. Returns true when the tag
    /// ended with a plain `>`, i.e. it has content. A stray `<` ends the tag without consuming it.
    @discardableResult
    private func scanAttributes() -> Bool {
        var expectingValue = false
        while position < end {
            let byte = source[position]
            if ASCII.isBlankOrNewline(byte) {
                var blankEnd = position + 1
                while blankEnd < end && ASCII.isBlankOrNewline(source[blankEnd]) { blankEnd += 1 }
                emit(blankEnd, nil)
                continue
            }
            switch byte {
            case ASCII.greaterThan:
                emit(position + 1, .tag)
                return true
            case ASCII.slash where source.byte(at: position + 1) == ASCII.greaterThan,
                 ASCII.question where source.byte(at: position + 1) == ASCII.greaterThan:
                emit(position + 2, .tag)
                return false
            case ASCII.lessThan:
                return false
            case ASCII.equals:
                emit(position + 1, nil)
                expectingValue = true
                continue
            case ASCII.quote, ASCII.apostrophe:
                var valueEnd = position + 1
                while valueEnd < end && source[valueEnd] != byte { valueEnd += 1 }
                emit(min(valueEnd + 1, end), .string)
            default:
                var tokenEnd = position + 1
                while tokenEnd < end {
                    let next = source[tokenEnd]
                    if ASCII.isBlankOrNewline(next) || next == ASCII.greaterThan || next == ASCII.lessThan || next == ASCII.equals
                        || next == ASCII.quote || next == ASCII.apostrophe
                        || (next == ASCII.slash && source.byte(at: tokenEnd + 1) == ASCII.greaterThan) {
                        break
                    }
                    tokenEnd += 1
                }
                emit(tokenEnd, expectingValue ? .string : .attr)
            }
            expectingValue = false
        }
        return false
    }

    /// Where the raw text of a `<script>` or `<style>` element ends: at its closing tag (any case).
    private func rawTextEnd(closingTag: [UInt8]) -> Int {
        var index = position
        while index < end {
            if source[index] == ASCII.lessThan && source.matchesIgnoringCase(closingTag, at: index)
                && !isNameByte(source.byte(at: index + closingTag.count)) {
                return index
            }
            index += 1
        }
        return end
    }
}
