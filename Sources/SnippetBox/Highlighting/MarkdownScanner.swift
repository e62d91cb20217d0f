import Foundation

/// Markdown, line by line: headings and rules as keywords, list and quote markers as keywords,
/// emphasis markers as keywords, code spans and link targets as strings, HTML comments as
/// comments. A fenced block whose info string names a known language is highlighted as that
/// language; other fences are strings. Inline constructs other than comments are matched within
/// one line, which is how they are almost always written.
final class MarkdownScanner {
    private struct Delimiter {
        var start: Int
        var length: Int
        var character: UInt8
        var canOpen: Bool
        var canClose: Bool
        var key: Int { Int(character) &* 4 &+ length }
    }

    private struct Mark {
        var start: Int
        var end: Int
        var kind: TokenKind
    }

    /// Info-string spellings seen in the wild, beyond the raw values of `CodingLanguage`.
    private static let fenceAliases: [String: CodingLanguage] = [
        "js": .javascript, "jsx": .javascript, "mjs": .javascript, "node": .javascript, "ts": .typescript,
        "tsx": .typescript, "py": .python, "python3": .python, "sh": .shell, "bash": .shell, "zsh": .shell,
        "console": .shell, "shellscript": .shell, "yml": .yaml, "rb": .ruby, "kt": .kotlin, "kts": .kotlin,
        "cs": .csharp, "c#": .csharp, "c++": .cpp, "cc": .cpp, "cxx": .cpp, "hpp": .cpp, "h": .c, "objc": .objectivec,
        "objective-c": .objectivec, "obj-c": .objectivec, "hs": .haskell, "rs": .rust, "golang": .go,
        "docker": .dockerfile, "pl": .perl, "htm": .html, "xhtml": .html, "svg": .xml, "jsonc": .json,
        "json5": .json, "psql": .sql, "mysql": .sql, "postgresql": .sql, "postgres": .sql, "sqlite": .sql,
        "text": .plaintext, "txt": .plaintext, "plain": .plaintext,
    ]

    private let writer: HTMLLineWriter
    private let grammars: GrammarCache
    private static let commentOpen = Array("<!--".utf8)
    private static let commentClose = Array("-->".utf8)

    private let source: SourceView
    private let end: Int
    // Hot state skips run-time exclusivity checks, as in `HTMLLineWriter`: one scan, one thread.
    @exclusivity(unchecked) private var position: Int

    static func highlight(_ range: Range<Int>, into writer: HTMLLineWriter, grammars: GrammarCache) {
        MarkdownScanner(writer: writer, range: range, grammars: grammars).run()
    }

    private init(writer: HTMLLineWriter, range: Range<Int>, grammars: GrammarCache) {
        self.writer = writer
        self.grammars = grammars
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
            if source[position] == ASCII.newline {
                emit(position + 1, nil)
            } else {
                scanLine()
            }
        }
    }

    /// Scans from the start of a line to its end (or, for a fenced block, to the end of the fence).
    private func scanLine() {
        let lineEnd = source.lineEnd(from: position)
        var indentEnd = position
        while indentEnd < lineEnd && indentEnd - position < 3 && source[indentEnd] == ASCII.space { indentEnd += 1 }
        let first = source.byte(at: indentEnd)
        if first == ASCII.backtick || first == ASCII.tilde, scanFencedBlock(markerStart: indentEnd, lineEnd: lineEnd) {
            return
        }
        if isHeading(indentEnd, lineEnd) || isRule(indentEnd, lineEnd) {
            emit(lineEnd, .keyword)
            return
        }
        var contentStart = indentEnd
        // Block quote markers, then a list marker.
        while source.byte(at: source.skipBlanks(from: contentStart)) == ASCII.greaterThan {
            emit(source.skipBlanks(from: contentStart), nil)
            emit(position + 1, .keyword)
            contentStart = position
        }
        contentStart = source.skipBlanks(from: contentStart)
        let markerEnd = listMarkerEnd(at: contentStart, lineEnd: lineEnd)
        if markerEnd > contentStart {
            emit(contentStart, nil)
            emit(markerEnd, .keyword)
        }
        scanInline(to: lineEnd)
    }

    private func isHeading(_ start: Int, _ lineEnd: Int) -> Bool {
        var index = start
        while index < lineEnd && source[index] == ASCII.hash { index += 1 }
        let level = index - start
        return level >= 1 && level <= 6 && (index == lineEnd || ASCII.isBlank(source[index]))
    }

    /// A thematic break (`---`, `* * *`, `___`) or a setext heading underline (`===`, `---`).
    private func isRule(_ start: Int, _ lineEnd: Int) -> Bool {
        let character = source.byte(at: start)
        guard character == ASCII.minus || character == ASCII.asterisk || character == ASCII.underscore || character == ASCII.equals
        else { return false }
        var count = 0
        for index in start..<lineEnd {
            let byte = source[index]
            if byte == character {
                count += 1
            } else if !ASCII.isBlank(byte) || character == ASCII.equals && count > 0 && !isBlankRest(index, lineEnd) {
                return false
            }
        }
        return count >= (character == ASCII.equals ? 2 : 3)
    }

    private func isBlankRest(_ index: Int, _ lineEnd: Int) -> Bool {
        source.skipBlanks(from: index) >= lineEnd
    }

    /// The end of a `-`, `*`, `+`, `1.` or `1)` list marker at `index` (which must be followed by a
    /// blank), or `index` when there is none.
    private func listMarkerEnd(at index: Int, lineEnd: Int) -> Int {
        let byte = source.byte(at: index)
        var markerEnd = index
        if byte == ASCII.minus || byte == ASCII.asterisk || byte == 0x2B /* + */ {
            markerEnd = index + 1
        } else if ASCII.isDigit(byte) {
            var digitsEnd = index
            while digitsEnd < lineEnd && digitsEnd - index < 9 && ASCII.isDigit(source[digitsEnd]) { digitsEnd += 1 }
            let punctuation = source.byte(at: digitsEnd)
            guard punctuation == ASCII.dot || punctuation == ASCII.rightParenthesis else { return index }
            markerEnd = digitsEnd + 1
        } else {
            return index
        }
        return markerEnd < lineEnd && ASCII.isBlank(source[markerEnd]) ? markerEnd : index
    }

    // MARK: Fenced code blocks

    private func scanFencedBlock(markerStart: Int, lineEnd: Int) -> Bool {
        let marker = source[markerStart]
        var markerEnd = markerStart
        while markerEnd < lineEnd && source[markerEnd] == marker { markerEnd += 1 }
        let fenceLength = markerEnd - markerStart
        guard fenceLength >= 3 else { return false }
        if marker == ASCII.backtick {
            for index in markerEnd..<lineEnd where source[index] == ASCII.backtick { return false }
        }
        let infoStart = source.skipBlanks(from: markerEnd)
        var infoEnd = infoStart
        while infoEnd < lineEnd && !ASCII.isBlank(source[infoEnd]) && source[infoEnd] != ASCII.leftBrace { infoEnd += 1 }
        let language = infoEnd > infoStart ? Self.language(named: source.string(infoStart, infoEnd, lowercased: true)) : nil

        emit(lineEnd, .string)
        guard lineEnd < end else { return true }
        emit(lineEnd + 1, nil)

        var closingLine: Int?
        var lineStart = position
        while lineStart < end {
            let closingLineEnd = source.lineEnd(from: lineStart)
            if isClosingFence(lineStart, closingLineEnd, marker: marker, length: fenceLength) {
                closingLine = lineStart
                break
            }
            lineStart = closingLineEnd + 1
        }
        let contentEnd = closingLine ?? end
        if let language, language != .markdown, language != .plaintext {
            SyntaxHighlighter.highlight(position..<contentEnd, as: language, into: writer, grammars: grammars)
            position = contentEnd
        } else {
            emit(contentEnd, .string)
        }
        if let closingLine {
            emit(source.lineEnd(from: closingLine), .string)
        }
        return true
    }

    private func isClosingFence(_ lineStart: Int, _ lineEnd: Int, marker: UInt8, length: Int) -> Bool {
        var index = lineStart
        while index < lineEnd && index - lineStart < 3 && source[index] == ASCII.space { index += 1 }
        let runStart = index
        while index < lineEnd && source[index] == marker { index += 1 }
        return index - runStart >= length && isBlankRest(index, lineEnd)
    }

    private static func language(named name: String) -> CodingLanguage? {
        CodingLanguage(rawValue: name) ?? fenceAliases[name]
    }

    // MARK: Inline

    /// Code spans first (nothing inside them is markup), then emphasis delimiters and link targets in
    /// the rest of the line, then everything written in order.
    private func scanInline(to lineEnd: Int) {
        let spans = codeSpans(from: position, to: lineEnd)
        var marks = spans
        var delimiters: [Delimiter] = []
        var spanIndex = 0
        var index = position
        var linksPossible = true
        while index < lineEnd {
            if spanIndex < spans.count && index >= spans[spanIndex].start {
                index = max(index, spans[spanIndex].end)
                spanIndex += 1
                continue
            }
            let byte = source[index]
            if byte == ASCII.backslash {
                index += 2
                continue
            }
            if byte == ASCII.asterisk || byte == ASCII.underscore || byte == ASCII.tilde {
                var runEnd = index + 1
                while runEnd < lineEnd && source[runEnd] == byte { runEnd += 1 }
                if let delimiter = delimiter(index, runEnd, lineEnd) { delimiters.append(delimiter) }
                index = runEnd
                continue
            }
            if byte == ASCII.lessThan && source.matches(Self.commentOpen, at: index) {
                // HTML comments are Markdown's comments; they may run over several lines.
                let commentEnd = source.endOfFirst(Self.commentClose, from: index + Self.commentOpen.count)
                marks.append(Mark(start: index, end: commentEnd, kind: .comment))
                index = commentEnd
                continue
            }
            if linksPossible && byte == ASCII.rightBracket && source.byte(at: index + 1) == ASCII.leftParenthesis {
                var close = index + 2
                let nextSpanStart = spanIndex < spans.count ? spans[spanIndex].start : lineEnd
                while close < nextSpanStart && source[close] != ASCII.rightParenthesis { close += 1 }
                if close < nextSpanStart {
                    marks.append(Mark(start: index + 2, end: close, kind: .string))
                    index = close + 1
                    continue
                }
                linksPossible = false
            }
            index += 1
        }
        marks.append(contentsOf: emphasisMarks(delimiters))
        marks.sort { $0.start < $1.start }
        for mark in marks where mark.start >= position && mark.end > mark.start {
            emit(mark.start, nil)
            emit(mark.end, mark.kind)
        }
        if position < lineEnd { emit(lineEnd, nil) }
    }

    /// Backtick runs pair with the next run of the same length; unpaired runs are literal.
    private func codeSpans(from lineStart: Int, to lineEnd: Int) -> [Mark] {
        var runs: [(start: Int, length: Int)] = []
        var index = lineStart
        while index < lineEnd {
            guard source[index] == ASCII.backtick else {
                index += 1
                continue
            }
            var runEnd = index + 1
            while runEnd < lineEnd && source[runEnd] == ASCII.backtick { runEnd += 1 }
            runs.append((index, runEnd - index))
            index = runEnd
        }
        guard runs.count > 1 else { return [] }
        var runsByLength: [Int: [Int]] = [:]
        for (number, run) in runs.enumerated() { runsByLength[run.length, default: []].append(number) }
        var cursors: [Int: Int] = [:]
        var spans: [Mark] = []
        var number = 0
        while number < runs.count {
            let length = runs[number].length
            let candidates = runsByLength[length]!
            var cursor = cursors[length] ?? 0
            while cursor < candidates.count && candidates[cursor] <= number { cursor += 1 }
            cursors[length] = cursor
            if cursor < candidates.count {
                let closing = candidates[cursor]
                spans.append(Mark(start: runs[number].start, end: runs[closing].start + length, kind: .string))
                number = closing + 1
            } else {
                number += 1
            }
        }
        return spans
    }

    private func delimiter(_ start: Int, _ end: Int, _ lineEnd: Int) -> Delimiter? {
        let character = source[start]
        let length = end - start
        guard character == ASCII.tilde ? length == 2 : length <= 3 else { return nil }
        let before = start > position ? source[start - 1] : ASCII.space
        let after = end < lineEnd ? source[end] : ASCII.space
        let leftFlanking = !ASCII.isBlank(after)
        let rightFlanking = !ASCII.isBlank(before)
        if character == ASCII.underscore {
            // snake_case is not emphasis.
            return Delimiter(start: start, length: length, character: character,
                             canOpen: leftFlanking && !ASCII.isAlphanumeric(before),
                             canClose: rightFlanking && !ASCII.isAlphanumeric(after))
        }
        return Delimiter(start: start, length: length, character: character, canOpen: leftFlanking, canClose: rightFlanking)
    }

    /// A delimiter run is highlighted when it closes an earlier opener of the same kind, or opens
    /// and has a possible closer later on the line.
    private func emphasisMarks(_ delimiters: [Delimiter]) -> [Mark] {
        var laterCloser = [Bool](repeating: false, count: delimiters.count)
        var closerKeys = Set<Int>()
        for number in delimiters.indices.reversed() {
            laterCloser[number] = closerKeys.contains(delimiters[number].key)
            if delimiters[number].canClose { closerKeys.insert(delimiters[number].key) }
        }
        var openCounts: [Int: Int] = [:]
        var marks: [Mark] = []
        for (number, delimiter) in delimiters.enumerated() {
            let open = openCounts[delimiter.key] ?? 0
            if delimiter.canClose && open > 0 {
                openCounts[delimiter.key] = open - 1
            } else if delimiter.canOpen && laterCloser[number] {
                openCounts[delimiter.key] = open + 1
            } else {
                continue
            }
            marks.append(Mark(start: delimiter.start, end: delimiter.start + delimiter.length, kind: .keyword))
        }
        return marks
    }
}
