import Foundation

/// CSS needs context that a keyword table cannot give: the same word is a tag in a selector
/// (`a:hover`), a property before a colon (`color:`) and a plain value after it (`red`). Each
/// statement — the text up to the next `{`, `;` or `}` — is classified once by looking ahead to
/// which of those ends it; a `{` makes it a selector (or an at-rule prelude), anything else a
/// declaration. Top-level declarations are allowed, since a snippet is often just a few of them.
final class CSSScanner {
    private enum Context {
        case selector, declaration, atRule
    }

    private static let commentClose = Array("*/".utf8)

    private let writer: HTMLLineWriter
    private let source: SourceView
    private let end: Int
    // Hot state skips run-time exclusivity checks, as in `HTMLLineWriter`: one scan, one thread.
    @exclusivity(unchecked) private var position: Int
    @exclusivity(unchecked) private var context = Context.declaration
    @exclusivity(unchecked) private var needsClassification = true
    /// In a declaration, after its colon.
    @exclusivity(unchecked) private var inValue = false
    /// Inside `[…]` of an attribute selector.
    @exclusivity(unchecked) private var bracketDepth = 0

    static func highlight(_ range: Range<Int>, into writer: HTMLLineWriter) {
        CSSScanner(writer: writer, range: range).run()
    }

    private init(writer: HTMLLineWriter, range: Range<Int>) {
        self.writer = writer
        source = writer.source.limited(to: range.upperBound)
        end = source.end
        position = range.lowerBound
    }

    private func emit(_ tokenEnd: Int, _ kind: TokenKind?) {
        writer.write(position, tokenEnd, as: kind)
        position = tokenEnd
    }

    private func run() {
        while position < end {
            let byte = source[position]
            if ASCII.isBlankOrNewline(byte) {
                var blankEnd = position + 1
                while blankEnd < end && ASCII.isBlankOrNewline(source[blankEnd]) { blankEnd += 1 }
                emit(blankEnd, nil)
                continue
            }
            if byte == ASCII.slash && source.byte(at: position + 1) == ASCII.asterisk {
                emit(source.endOfFirst(Self.commentClose, from: position + 2), .comment)
                continue
            }
            if byte == ASCII.quote || byte == ASCII.apostrophe {
                emit(stringEnd(from: position), .string)
                continue
            }
            if byte == ASCII.leftBrace || byte == ASCII.rightBrace || byte == ASCII.semicolon {
                emit(position + 1, nil)
                needsClassification = true
                inValue = false
                bracketDepth = 0
                continue
            }
            if needsClassification {
                classifyStatement()
                needsClassification = false
            }
            if byte == ASCII.at && isIdentifierStart(at: position + 1) {
                emit(identifierEnd(from: position + 1), .keyword)
                continue
            }
            switch context {
            case .selector: scanSelectorToken(byte)
            case .declaration: scanDeclarationToken(byte)
            case .atRule: scanAtRuleToken(byte)
            }
        }
    }

    /// Decides what the statement starting at `position` is by finding the `{`, `;` or `}` that ends
    /// it, stepping over comments and strings the same way the scan itself does.
    private func classifyStatement() {
        var index = position
        var terminator: UInt8 = 0
        while index < end {
            let byte = source[index]
            if byte == ASCII.leftBrace || byte == ASCII.rightBrace || byte == ASCII.semicolon {
                terminator = byte
                break
            }
            if byte == ASCII.slash && source.byte(at: index + 1) == ASCII.asterisk {
                index = source.endOfFirst(Self.commentClose, from: index + 2)
            } else if byte == ASCII.quote || byte == ASCII.apostrophe {
                index = stringEnd(from: index)
            } else {
                index += 1
            }
        }
        inValue = false
        if source[position] == ASCII.at {
            context = .atRule
        } else {
            context = terminator == ASCII.leftBrace ? .selector : .declaration
        }
    }

    private func scanSelectorToken(_ byte: UInt8) {
        switch byte {
        case ASCII.dot where isIdentifierStart(at: position + 1), ASCII.hash where isIdentifierByte(source.byte(at: position + 1)):
            emit(identifierEnd(from: position + 1), .attr)
        case ASCII.colon:
            var nameStart = position + 1
            if source.byte(at: nameStart) == ASCII.colon { nameStart += 1 }
            emit(isIdentifierStart(at: nameStart) ? identifierEnd(from: nameStart) : nameStart, .keyword)
        case ASCII.leftBracket:
            bracketDepth += 1
            emit(position + 1, nil)
        case ASCII.rightBracket:
            bracketDepth = max(0, bracketDepth - 1)
            emit(position + 1, nil)
        default:
            if isIdentifierStart(at: position) {
                emit(identifierEnd(from: position), bracketDepth > 0 ? .attr : .tag)
            } else if let numberEnd = numberEnd() {
                emit(numberEnd, .number)
            } else {
                emit(position + 1, nil)
            }
        }
    }

    private func scanDeclarationToken(_ byte: UInt8) {
        if !inValue {
            if byte == ASCII.colon {
                inValue = true
                emit(position + 1, nil)
            } else if isIdentifierStart(at: position) {
                emit(identifierEnd(from: position), .property)
            } else {
                emit(position + 1, nil)
            }
            return
        }
        scanValueToken(byte)
    }

    private func scanAtRuleToken(_ byte: UInt8) {
        // `(max-width: 600px)` in a media query: a feature name before a colon is a property.
        if isIdentifierStart(at: position) {
            let nameEnd = identifierEnd(from: position)
            if source.byte(at: source.skipBlanks(from: nameEnd)) == ASCII.colon {
                emit(nameEnd, .property)
                return
            }
        }
        scanValueToken(byte)
    }

    private func scanValueToken(_ byte: UInt8) {
        if let numberEnd = numberEnd() {
            emit(numberEnd, .number)
        } else if byte == ASCII.hash && isIdentifierByte(source.byte(at: position + 1)) {
            emit(identifierEnd(from: position + 1), .number)
        } else if byte == 0x21 /* ! */ && isIdentifierStart(at: source.skipBlanks(from: position + 1)) {
            emit(identifierEnd(from: source.skipBlanks(from: position + 1)), .keyword)
        } else if isIdentifierStart(at: position) {
            let nameEnd = identifierEnd(from: position)
            guard source.byte(at: nameEnd) == ASCII.leftParenthesis else {
                emit(nameEnd, nil)
                return
            }
            let isURL = source.string(position, nameEnd, lowercased: true) == "url"
            emit(nameEnd, .builtin)
            emit(position + 1, nil)
            let argumentStart = source.skipBlanks(from: position)
            let first = source.byte(at: argumentStart)
            if isURL && first != ASCII.quote && first != ASCII.apostrophe && first != ASCII.rightParenthesis {
                emit(argumentStart, nil)
                var argumentEnd = argumentStart
                while argumentEnd < end && source[argumentEnd] != ASCII.rightParenthesis && source[argumentEnd] != ASCII.newline {
                    argumentEnd += 1
                }
                emit(argumentEnd, .string)
            }
        } else {
            emit(position + 1, nil)
        }
    }

    /// The end of a number with its unit (`12px`, `1.5em`, `50%`) starting at `position`, if one does.
    private func numberEnd() -> Int? {
        let byte = source[position]
        guard ASCII.isDigit(byte) || (byte == ASCII.dot && ASCII.isDigit(source.byte(at: position + 1))) else { return nil }
        // `h1` and `a-1` are names; in `-1px` the minus is a sign.
        if position > 0 {
            let previous = source[position - 1]
            if ASCII.isWordByte(previous) { return nil }
            if previous == ASCII.minus && position > 1 && isIdentifierByte(source[position - 2]) { return nil }
        }
        let numberEnd = source.numberEnd(from: position)
        return source.byte(at: numberEnd) == 0x25 /* % */ ? numberEnd + 1 : numberEnd
    }

    private func stringEnd(from quote: Int) -> Int {
        let delimiter = source[quote]
        var index = quote + 1
        while index < end {
            let byte = source[index]
            if byte == ASCII.newline { return index }
            if byte == ASCII.backslash {
                index += 2
                continue
            }
            index += 1
            if byte == delimiter { return index }
        }
        return end
    }

    private func isIdentifierByte(_ byte: UInt8) -> Bool {
        ASCII.isWordByte(byte) || byte == ASCII.minus
    }

    /// Identifiers may start with `-` (`-webkit-…`, `--custom`) but `-1` is a number.
    private func isIdentifierStart(at index: Int) -> Bool {
        let byte = source.byte(at: index)
        if byte == ASCII.minus {
            let next = source.byte(at: index + 1)
            return ASCII.isLetter(next) || next == ASCII.underscore || next == ASCII.minus || next >= 0x80
        }
        return ASCII.isLetter(byte) || byte == ASCII.underscore || byte >= 0x80
    }

    private func identifierEnd(from index: Int) -> Int {
        var index = index
        while index < end && isIdentifierByte(source[index]) { index += 1 }
        return index
    }
}
