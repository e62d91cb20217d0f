import Foundation

/// YAML is line- and indentation-structured: a key is a scalar followed by `: ` where a key may
/// stand (line start, after `- `, after `{` or `,` in a flow mapping), and the lines of a `|` or `>`
/// block scalar are text for as long as they are indented deeper than the key that opened it.
/// Quoted scalars may run over several lines.
final class YAMLScanner {
    private static let literals: Set<String> = ["true", "false", "yes", "no", "on", "off", "null", "~"]
    private static let documentStart = Array("---".utf8)
    private static let documentEnd = Array("...".utf8)
    private static let flowIndicators: [UInt8] = [ASCII.comma, ASCII.leftBracket, ASCII.rightBracket, ASCII.leftBrace, ASCII.rightBrace]

    private let writer: HTMLLineWriter
    private let source: SourceView
    private let start: Int
    private let end: Int
    // Hot state skips run-time exclusivity checks, as in `HTMLLineWriter`: one scan, one thread.
    @exclusivity(unchecked) private var position: Int

    @exclusivity(unchecked) private var lineStart = 0
    @exclusivity(unchecked) private var lineIndent = 0
    /// Where on the line the last key started; a block scalar's lines must be indented deeper.
    @exclusivity(unchecked) private var keyColumn: Int?
    @exclusivity(unchecked) private var flowDepth = 0
    @exclusivity(unchecked) private var expectingKey = true
    /// Set while inside a block scalar: the indentation its lines must exceed.
    @exclusivity(unchecked) private var blockScalarParentIndent: Int?

    static func highlight(_ range: Range<Int>, into writer: HTMLLineWriter) {
        YAMLScanner(writer: writer, range: range).run()
    }

    private init(writer: HTMLLineWriter, range: Range<Int>) {
        self.writer = writer
        source = writer.source.limited(to: range.upperBound)
        end = source.end
        start = range.lowerBound
        position = range.lowerBound
    }

    private func emit(_ tokenEnd: Int, _ kind: TokenKind?) {
        writer.write(position, tokenEnd, as: kind)
        position = tokenEnd
    }

    private func run() {
        while position < end {
            if position == start || source[position - 1] == ASCII.newline {
                if beginLine() { continue }
            }
            scanToken()
        }
    }

    /// Handles what only happens at the start of a line. Returns true when it consumed something, so
    /// that the caller checks for the end of the input again.
    private func beginLine() -> Bool {
        lineStart = position
        var indentEnd = position
        while indentEnd < end && source[indentEnd] == ASCII.space { indentEnd += 1 }
        let lineEnd = source.lineEnd(from: position)
        if let parentIndent = blockScalarParentIndent {
            let isBlank = source.skipBlanks(from: indentEnd) == lineEnd
            if isBlank || indentEnd - position > parentIndent {
                emit(indentEnd, nil)
                emit(lineEnd, .string)
                emit(min(lineEnd + 1, end), nil)
                return true
            }
            blockScalarParentIndent = nil
        }
        lineIndent = indentEnd - position
        keyColumn = nil
        if flowDepth == 0 { expectingKey = true }
        let first = source.byte(at: position)
        if first == 0x25 /* % */ {
            emit(lineEnd, .keyword)
            return true
        }
        let isDocumentMarker = (source.matches(Self.documentStart, at: position) || source.matches(Self.documentEnd, at: position))
            && (position + 3 >= end || ASCII.isBlankOrNewline(source[position + 3]))
        if isDocumentMarker {
            emit(position + 3, .keyword)
            return true
        }
        return false
    }

    private func scanToken() {
        let byte = source[position]
        let next = source.byte(at: position + 1)
        let nextIsSeparator = position + 1 >= end || ASCII.isBlankOrNewline(next)
        switch byte {
        case ASCII.newline:
            emit(position + 1, nil)
        case _ where ASCII.isBlank(byte):
            var blankEnd = position + 1
            while blankEnd < end && ASCII.isBlank(source[blankEnd]) { blankEnd += 1 }
            emit(blankEnd, nil)
        case ASCII.hash where position == lineStart || ASCII.isBlank(source[position - 1]):
            emit(source.lineEnd(from: position), .comment)
        case ASCII.minus where nextIsSeparator && expectingKey, ASCII.question where nextIsSeparator && expectingKey:
            emit(position + 1, nil)
        case ASCII.quote, ASCII.apostrophe:
            let scalarStart = position
            let scalarEnd = quotedScalarEnd(from: position)
            let isKey = expectingKey && isKeyIndicator(at: source.skipBlanks(from: scalarEnd))
            if isKey { keyColumn = scalarStart - lineStart }
            emit(scalarEnd, isKey ? .property : .string)
            expectingKey = false
        case ASCII.leftBrace, ASCII.leftBracket:
            flowDepth += 1
            expectingKey = byte == ASCII.leftBrace
            emit(position + 1, nil)
        case ASCII.rightBrace, ASCII.rightBracket:
            flowDepth = max(0, flowDepth - 1)
            expectingKey = false
            emit(position + 1, nil)
        case ASCII.comma where flowDepth > 0:
            expectingKey = true
            emit(position + 1, nil)
        case ASCII.colon where isKeyIndicator(at: position):
            expectingKey = false
            emit(position + 1, nil)
        case 0x7C /* | */, ASCII.greaterThan:
            scanBlockScalarHeader()
        case 0x26 /* & */ where !nextIsSeparator, ASCII.asterisk where !nextIsSeparator:
            emit(tokenEnd(from: position + 1), .builtin)
        case 0x21 /* ! */:
            emit(tokenEnd(from: position + 1), .type)
        default:
            scanPlainScalar()
        }
    }

    /// `: ` (or `:` at the end of the line, or before a flow indicator inside a flow collection).
    private func isKeyIndicator(at index: Int) -> Bool {
        guard source.byte(at: index) == ASCII.colon else { return false }
        let next = source.byte(at: index + 1)
        return index + 1 >= end || ASCII.isBlankOrNewline(next) || (flowDepth > 0 && Self.flowIndicators.contains(next))
    }

    private func tokenEnd(from index: Int) -> Int {
        var index = index
        while index < end && !ASCII.isBlankOrNewline(source[index]) && !(flowDepth > 0 && Self.flowIndicators.contains(source[index])) {
            index += 1
        }
        return index
    }

    private func quotedScalarEnd(from quote: Int) -> Int {
        let delimiter = source[quote]
        var index = quote + 1
        while index < end {
            let byte = source[index]
            if delimiter == ASCII.quote && byte == ASCII.backslash {
                index += 2
                continue
            }
            index += 1
            if byte == delimiter {
                // In single quotes, '' stands for one quote.
                if delimiter == ASCII.apostrophe && source.byte(at: index) == ASCII.apostrophe {
                    index += 1
                    continue
                }
                return index
            }
        }
        return end
    }

    /// `|`, `>-`, `|2+` and the like, alone on the rest of their line (a comment aside).
    private func scanBlockScalarHeader() {
        var headerEnd = position + 1
        while headerEnd < end && (ASCII.isDigit(source[headerEnd]) || source[headerEnd] == ASCII.minus || source[headerEnd] == 0x2B /* + */) {
            headerEnd += 1
        }
        let afterBlanks = source.skipBlanks(from: headerEnd)
        let rest = source.byte(at: afterBlanks)
        guard afterBlanks >= end || rest == ASCII.newline || (rest == ASCII.hash && afterBlanks > headerEnd) else {
            scanPlainScalar()
            return
        }
        blockScalarParentIndent = keyColumn ?? lineIndent
        emit(headerEnd, .keyword)
    }

    /// An unquoted scalar runs to the end of the line, to ` #`, to a key indicator, or in a flow
    /// collection to a flow indicator. As a key it is a property; as a value it may be a number or a
    /// literal like `true`.
    private func scanPlainScalar() {
        var scalarEnd = position + 1
        while scalarEnd < end {
            let byte = source[scalarEnd]
            if byte == ASCII.newline || isKeyIndicator(at: scalarEnd) { break }
            if byte == ASCII.hash && ASCII.isBlank(source[scalarEnd - 1]) { break }
            if flowDepth > 0 && Self.flowIndicators.contains(byte) { break }
            scalarEnd += 1
        }
        var trimmedEnd = scalarEnd
        while trimmedEnd > position + 1 && ASCII.isBlank(source[trimmedEnd - 1]) { trimmedEnd -= 1 }
        if expectingKey && isKeyIndicator(at: scalarEnd) {
            keyColumn = position - lineStart
            emit(trimmedEnd, .property)
        } else {
            emit(trimmedEnd, classifyScalar(position, trimmedEnd))
        }
        expectingKey = false
    }

    private func classifyScalar(_ scalarStart: Int, _ scalarEnd: Int) -> TokenKind? {
        guard scalarEnd - scalarStart <= 32 else { return nil }
        let text = source.string(scalarStart, scalarEnd, lowercased: true)
        if Self.literals.contains(text) { return .keyword }
        if [".inf", "-.inf", "+.inf", ".nan"].contains(text) { return .number }
        var numberStart = scalarStart
        let first = source[scalarStart]
        if first == ASCII.minus || first == 0x2B /* + */ { numberStart += 1 }
        guard numberStart < scalarEnd, ASCII.isDigit(source[numberStart]) || source[numberStart] == ASCII.dot else { return nil }
        // The number must be the whole scalar: `1.2.3` and `12 monkeys` are strings.
        let numberEnd = source.numberEnd(from: numberStart, separator: ASCII.underscore)
        guard numberEnd == scalarEnd else { return nil }
        for index in numberStart..<numberEnd where ASCII.isLetter(source[index]) {
            let letter = ASCII.lowercased(source[index])
            let isHexOrOctal = index == numberStart + 1 && (letter == 0x78 || letter == 0x6F)
            if !(isHexOrOctal || letter == 0x65 || (ASCII.isHexDigit(letter) && source.matchesIgnoringCase(Array("0x".utf8), at: numberStart))) {
                return nil
            }
        }
        return .number
    }
}
