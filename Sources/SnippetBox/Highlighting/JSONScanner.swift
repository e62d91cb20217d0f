import Foundation

/// JSON (and the comments of JSONC): a string followed by a colon is a key, coloured as a property;
/// other strings are values. Lenient on purpose — snippets are often fragments.
final class JSONScanner {
    private static let blockCommentClose = Array("*/".utf8)
    private static let literals: Set<String> = ["true", "false", "null"]

    private let writer: HTMLLineWriter
    private let source: SourceView
    private let end: Int
    // Hot state skips run-time exclusivity checks, as in `HTMLLineWriter`: one scan, one thread.
    @exclusivity(unchecked) private var position: Int

    static func highlight(_ range: Range<Int>, into writer: HTMLLineWriter) {
        JSONScanner(writer: writer, range: range).run()
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
            if byte == ASCII.quote {
                let stringEnd = stringEnd(from: position)
                emit(stringEnd, isFollowedByColon(stringEnd) ? .property : .string)
            } else if byte == ASCII.slash && source.byte(at: position + 1) == ASCII.slash {
                emit(source.lineEnd(from: position), .comment)
            } else if byte == ASCII.slash && source.byte(at: position + 1) == ASCII.asterisk {
                emit(source.endOfFirst(Self.blockCommentClose, from: position + 2), .comment)
            } else if ASCII.isDigit(byte) || (byte == ASCII.minus && ASCII.isDigit(source.byte(at: position + 1))) {
                emit(source.numberEnd(from: byte == ASCII.minus ? position + 1 : position), .number)
            } else if ASCII.isLetter(byte) {
                var wordEnd = position + 1
                while wordEnd < end && ASCII.isWordByte(source[wordEnd]) { wordEnd += 1 }
                emit(wordEnd, Self.literals.contains(source.string(position, wordEnd)) ? .keyword : nil)
            } else {
                var plainEnd = position + 1
                while plainEnd < end && isPlain(source[plainEnd]) { plainEnd += 1 }
                emit(plainEnd, nil)
            }
        }
    }

    /// Punctuation and blanks, which come in runs worth writing at once.
    private func isPlain(_ byte: UInt8) -> Bool {
        ASCII.isBlankOrNewline(byte) || byte == ASCII.comma || byte == ASCII.colon || byte == ASCII.leftBrace
            || byte == ASCII.rightBrace || byte == ASCII.leftBracket || byte == ASCII.rightBracket
    }

    /// JSON strings cannot contain a raw newline, so an unterminated one ends with its line.
    private func stringEnd(from quote: Int) -> Int {
        var index = quote + 1
        while index < end {
            let byte = source[index]
            if byte == ASCII.newline { return index }
            if byte == ASCII.backslash && source.byte(at: index + 1) != ASCII.newline {
                index += 2
                continue
            }
            index += 1
            if byte == ASCII.quote { return index }
        }
        return min(index, end)
    }

    private func isFollowedByColon(_ index: Int) -> Bool {
        var index = index
        while index < end && ASCII.isBlankOrNewline(source[index]) { index += 1 }
        return source.byte(at: index) == ASCII.colon
    }
}
