import Foundation
import GRDB
import GRDBSQLite

/// A search hit's excerpt of one column: a window of a few tokens around the matches, with each
/// match between U+E000 and U+E001 and `…` where text was left out, as FTS5's `snippet()` marks
/// them; NULL when the column holds no match.
///
/// `snippet()` tokenizes the whole column twice, once to find sentence starts and once to mark the
/// window, and makes an excerpt of every column asked for, with matches or not. A hit of a common
/// word is often long code (the demo library's filtered hits of `caching` hold up to 24 KB), and a
/// search's first page made 25 hits' excerpts of four columns each: 2.5–3.5 ms of a 13 ms first
/// visit. This function finds the matches from the phrases' positions, which FTS5 has already read
/// for the hit, picks the window from them, and tokenizes only as far as the window's end.
///
/// Called as `objectgraph_excerpt(<index>, <column>, <tokens>)`.
enum FullTextExcerpt {
    static let functionName = "objectgraph_excerpt"
    static let matchStart: Unicode.Scalar = "\u{E000}"
    static let matchEnd: Unicode.Scalar = "\u{E001}"
    static let ellipsis = "…"

    static func register(_ api: UnsafePointer<fts5_api>) {
        _ = api.pointee.xCreateFunction?(UnsafeMutablePointer(mutating: api), functionName, nil, excerptFunction, nil)
    }

    private static let excerptFunction: fts5_extension_function = { api, fts, context, argumentCount, arguments in
        guard let api, let arguments, argumentCount == 2 else {
            sqlite3_result_error(context, "\(functionName) takes a column and a number of tokens", -1)
            return
        }
        let column = sqlite3_value_int(arguments[0])
        let tokens = Int(sqlite3_value_int(arguments[1]))
        switch excerpt(api.pointee, fts, column: column, tokens: max(1, tokens)) {
        case .success(let text?):
            sqlite3_result_text(context, text, -1, sqliteTransient)
        case .success(nil):
            sqlite3_result_null(context)
        case .failure(let code):
            sqlite3_result_error_code(context, code.value)
        }
    }

    struct Failure: Error {
        let value: Int32
    }

    /// A run of matched tokens, first and last position inclusive: overlapping phrase instances make one.
    struct MatchedRun: Equatable {
        var first: Int
        var last: Int
    }

    private static func excerpt(
        _ api: Fts5ExtensionApi, _ fts: OpaquePointer?, column: Int32, tokens: Int
    ) -> Result<String?, Failure> {
        guard let instanceCount = api.xInstCount, let instance = api.xInst, let phraseSize = api.xPhraseSize,
              let columnText = api.xColumnText, let tokenize = api.xTokenize, let columnSize = api.xColumnSize
        else { return .failure(Failure(value: SQLITE_ERROR)) }
        var count: Int32 = 0
        var code = instanceCount(fts, &count)
        guard code == SQLITE_OK else { return .failure(Failure(value: code)) }
        var instances: [(first: Int, last: Int, phrase: Int32)] = []
        for index in 0..<count {
            var phrase: Int32 = 0, instanceColumn: Int32 = 0, offset: Int32 = 0
            code = instance(fts, index, &phrase, &instanceColumn, &offset)
            guard code == SQLITE_OK else { return .failure(Failure(value: code)) }
            guard instanceColumn == column else { continue }
            let size = max(1, Int(phraseSize(fts, phrase)))
            instances.append((Int(offset), Int(offset) + size - 1, phrase))
        }
        // No match in this column: the caller shows no excerpt of it.
        guard !instances.isEmpty else { return .success(nil) }
        var length: Int32 = 0
        code = columnSize(fts, column, &length)
        guard code == SQLITE_OK else { return .failure(Failure(value: code)) }
        let window = Self.window(instances: instances, tokens: tokens, columnLength: Int(length))
        var text: UnsafePointer<CChar>?
        var bytes: Int32 = 0
        code = columnText(fts, column, &text, &bytes)
        guard code == SQLITE_OK, let text else { return .failure(Failure(value: code == SQLITE_OK ? SQLITE_ERROR : code)) }
        var reader = WindowReader(window: window)
        code = withUnsafeMutablePointer(to: &reader) { pointer in
            tokenize(fts, text, bytes, pointer, { context, flags, _, _, start, end in
                guard let reader = context?.assumingMemoryBound(to: WindowReader.self) else { return SQLITE_ERROR }
                return reader.pointee.take(colocated: flags & FTS5_TOKEN_COLOCATED != 0, start: Int(start), end: Int(end))
            })
        }
        // `WindowReader` stops the tokenizer with SQLITE_DONE once past the window.
        guard code == SQLITE_OK || code == SQLITE_DONE else { return .failure(Failure(value: code)) }
        let utf8 = UnsafeRawBufferPointer(start: text, count: Int(bytes))
        let runs = Self.runs(of: instances)
        return .success(Self.marked(utf8, tokens: reader.tokens, runs: runs, moreAfter: reader.passedWindow))
    }

    /// The positions of the tokens to show, `tokens` of them: the window that holds the most
    /// different phrases, earliest first, with a little of the text before its first match.
    static func window(instances: [(first: Int, last: Int, phrase: Int32)], tokens: Int, columnLength: Int) -> ClosedRange<Int> {
        let sorted = instances.sorted { ($0.first, $0.last) < ($1.first, $1.last) }
        var allPhrases: [Int32] = []
        for instance in sorted where !allPhrases.contains(instance.phrase) { allPhrases.append(instance.phrase) }
        var best = (start: sorted[0].first, end: sorted[0].last, phrases: 0)
        for (index, anchor) in sorted.enumerated() {
            var phrases: [Int32] = []
            var end = anchor.last
            // Sorted by first token: the instances in the window follow the anchor.
            for other in sorted[index...] {
                if other.first >= anchor.first + tokens { break }
                guard other.last < anchor.first + tokens else { continue }
                if !phrases.contains(other.phrase) { phrases.append(other.phrase) }
                end = max(end, other.last)
            }
            if phrases.count > best.phrases { best = (anchor.first, end, phrases.count) }
            if best.phrases == allPhrases.count { break }
        }
        let span = best.end - best.start + 1
        // A third of the room left goes before the first match, so that it reads in its context.
        var start = max(0, best.start - max(0, tokens - span) / 3)
        // Near the end of the column, the window ends with it, as long as it still holds the match.
        if columnLength > 0, start + tokens > columnLength { start = max(0, min(best.start, columnLength - tokens)) }
        return start...(start + tokens - 1)
    }

    /// Overlapping phrase instances merged into runs, in order.
    static func runs(of instances: [(first: Int, last: Int, phrase: Int32)]) -> [MatchedRun] {
        var runs: [MatchedRun] = []
        for instance in instances.sorted(by: { $0.first < $1.first }) {
            if let last = runs.last, instance.first <= last.last {
                runs[runs.count - 1].last = max(last.last, instance.last)
            } else {
                runs.append(MatchedRun(first: instance.first, last: instance.last))
            }
        }
        return runs
    }

    /// The byte range of each token of the window, read from the tokenizer's callback.
    struct WindowReader {
        let window: ClosedRange<Int>
        var position = -1
        var tokens: [(position: Int, start: Int, end: Int)] = []
        var passedWindow = false

        mutating func take(colocated: Bool, start: Int, end: Int) -> Int32 {
            // A colocated token (a synonym) shares the position of the one before it.
            if colocated { return SQLITE_OK }
            position += 1
            if position > window.upperBound {
                passedWindow = true
                return SQLITE_DONE
            }
            if position >= window.lowerBound { tokens.append((position, start, end)) }
            return SQLITE_OK
        }
    }

    /// The window's text with its matched runs marked: from the first token (the column's start when
    /// the window begins there) to the last (the column's end when nothing follows), and `…` where
    /// text was left out.
    static func marked(
        _ utf8: UnsafeRawBufferPointer, tokens: [(position: Int, start: Int, end: Int)], runs: [MatchedRun], moreAfter: Bool
    ) -> String {
        guard let firstToken = tokens.first else { return "" }
        var output: [UInt8] = []
        output.reserveCapacity(utf8.count < 512 ? utf8.count + 16 : 512)
        func append(_ range: Range<Int>) {
            let clamped = max(0, min(range.lowerBound, utf8.count))..<max(0, min(range.upperBound, utf8.count))
            if !clamped.isEmpty { output.append(contentsOf: utf8[clamped]) }
        }
        func append(_ scalar: Unicode.Scalar) { output.append(contentsOf: Array(String(scalar).utf8)) }
        var offset: Int
        if firstToken.position == 0 {
            offset = 0
        } else {
            output.append(contentsOf: Array(ellipsis.utf8))
            offset = firstToken.start
        }
        var runIndex = runs.firstIndex { $0.last >= firstToken.position } ?? runs.endIndex
        var open = false
        for token in tokens {
            append(offset..<token.start)
            if !open, runIndex < runs.endIndex, runs[runIndex].first <= token.position {
                append(matchStart)
                open = true
            }
            append(token.start..<token.end)
            offset = token.end
            if open, runs[runIndex].last <= token.position || token.position == tokens.last?.position {
                append(matchEnd)
                open = false
                if runs[runIndex].last <= token.position { runIndex += 1 }
            }
        }
        if moreAfter {
            output.append(contentsOf: Array(ellipsis.utf8))
        } else {
            append(offset..<utf8.count)
        }
        return String(decoding: output, as: UTF8.self)
    }
}
