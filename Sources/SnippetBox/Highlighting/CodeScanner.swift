import Foundation

/// The one scanner behind every programming language: it reads a `LanguageGrammar` and turns a range
/// of the source into tokens, left to right, in a single pass. Every step consumes at least one byte
/// and every look-ahead either consumes what it read or is bounded, which keeps it linear on any
/// input (unterminated strings and comments simply run to the end of their line or of the range).
final class CodeScanner {
    private struct Heredoc {
        var delimiter: [UInt8]
        var indented: Bool
    }

    /// Nested string/interpolation depth beyond which quotes inside interpolations are no longer
    /// tracked; it bounds recursion on hostile input.
    private static let maximumInterpolationDepth = 16
    /// Heredoc names and C++ raw-string delimiters longer than this are not taken as such; it bounds
    /// the look-ahead spent on a `<<` or `R"` that turns out to be something else.
    private static let maximumDelimiterLength = 64
    private static let rubyBlockOpen = Array("=begin".utf8)
    private static let rubyBlockClose = Array("=end".utf8)
    private static let podClose = Array("=cut".utf8)
    private static let perlQuoteLikeInitials = Array("qmsty".utf8)
    private static let perlBrackets: [UInt8: UInt8] = [
        ASCII.leftParenthesis: ASCII.rightParenthesis, ASCII.leftBrace: ASCII.rightBrace,
        ASCII.leftBracket: ASCII.rightBracket, ASCII.lessThan: ASCII.greaterThan,
    ]
    private static let haskellOperatorSymbols = Array("!#$%&*+./<=>?@\\^|~:".utf8)

    /// Kept alive for `flags` and `words`, which point into it.
    private let compiled: CompiledGrammar
    private let grammar: LanguageGrammar
    private let flags: UnsafePointer<UInt8>
    private let words: WordTable
    private let writer: HTMLLineWriter
    private let source: SourceView
    /// `source.base` and `source.end`, and below the grammar's switches, copied into the scanner:
    /// in debug builds reading them through the structs costs a call or a retain each time.
    private let base: UnsafePointer<UInt8>
    private let start: Int
    private let end: Int
    private let hasIdentifierSuffixes: Bool
    private let hasStringPrefixes: Bool
    private let perlQuoteLike: Bool
    private let macroBang: Bool
    private let uppercaseIsType: Bool
    private let pascalCaseMethods: Bool
    // Hot state skips run-time exclusivity checks, as in `HTMLLineWriter`: one scan, one thread.
    @exclusivity(unchecked) private var position: Int

    /// Whether the current line has had anything but blanks yet (preprocessor lines, `#` comments).
    @exclusivity(unchecked) private var lineHasCode = false
    /// Whether a `/` here would start a regular expression rather than divide.
    @exclusivity(unchecked) private var regexAllowed = true
    /// Regular expressions are not looked for again on a line where one was not found, so that a
    /// line of unclosed slashes is not rescanned from each of them.
    @exclusivity(unchecked) private var noRegexBefore = 0
    private var pendingHeredocs: [Heredoc] = []

    /// Highlights `range` of the writer's source as `grammar`.
    static func highlight(_ range: Range<Int>, with grammar: CompiledGrammar, into writer: HTMLLineWriter) {
        CodeScanner(grammar: grammar, writer: writer, range: range).run()
    }

    private init(grammar: CompiledGrammar, writer: HTMLLineWriter, range: Range<Int>) {
        compiled = grammar
        self.grammar = grammar.grammar
        flags = grammar.byteFlags
        words = grammar.words
        self.writer = writer
        source = writer.source.limited(to: range.upperBound)
        base = source.base
        start = range.lowerBound
        end = source.end
        position = range.lowerBound
        hasIdentifierSuffixes = !grammar.grammar.identifierSuffixes.isEmpty
        hasStringPrefixes = !grammar.grammar.stringPrefixes.isEmpty
        perlQuoteLike = grammar.grammar.perlQuoteLike
        macroBang = grammar.grammar.macroBang
        uppercaseIsType = grammar.grammar.uppercaseIsType
        pascalCaseMethods = grammar.grammar.pascalCaseMethods
    }

    private func isIdentifierStart(_ byte: UInt8) -> Bool { flags[Int(byte)] & CompiledGrammar.identifierStart != 0 }
    private func isIdentifierPart(_ byte: UInt8) -> Bool { flags[Int(byte)] & CompiledGrammar.identifierPart != 0 }

    /// The end of the identifier characters starting at `index`.
    private func identifierEnd(from index: Int) -> Int {
        let base = base
        let flags = flags
        let end = end
        var index = index
        while index < end && flags[Int(base[index])] & CompiledGrammar.identifierPart != 0 { index += 1 }
        return index
    }

    private func run() {
        let base = base
        while position < end {
            let byte = base[position]
            if byte == ASCII.newline {
                position += 1
                lineHasCode = false
                if !pendingHeredocs.isEmpty { writeHeredocBodies() }
                continue
            }
            if byte == ASCII.space || ASCII.isBlank(byte) {
                position += 1
                while position < end && (base[position] == ASCII.space || base[position] == ASCII.tab) { position += 1 }
                continue
            }
            if !scanToken(byte) {
                // Punctuation: plain, and nothing to tell the writer.
                position += 1
                regexAllowed = byte != ASCII.rightParenthesis && byte != ASCII.rightBracket
            }
            lineHasCode = true
        }
    }

    /// Scans the token starting at `position` if there is one, writing it and moving past it.
    private func scanToken(_ byte: UInt8) -> Bool {
        let byteFlags = flags[Int(byte)]
        if byteFlags & CompiledGrammar.special == 0 {
            if byteFlags & CompiledGrammar.identifierStart != 0 {
                scanWord()
                return true
            }
            if ASCII.isDigit(byte) {
                emit(source.numberEnd(from: position, separator: grammar.numberSeparator), .number)
                return true
            }
            return false
        }
        if let style = grammar.lineBlockComments, byte == ASCII.equals, position == start || source[position - 1] == ASCII.newline,
           scanLineBlockComment(style) {
            return true
        }
        if grammar.preprocessor, byte == ASCII.hash, !lineHasCode, scanPreprocessorDirective() {
            return true
        }
        if grammar.luaLongBrackets, byte == ASCII.minus || byte == ASCII.leftBracket, scanLuaLongBracket() {
            return true
        }
        if scanCommentStringOrSymbol() {
            return true
        }
        if grammar.hashDelimitedStrings, byte == ASCII.hash, scanHashDelimitedString(prefixEnd: position, minimumHashes: 1) {
            return true
        }
        if grammar.heredoc != nil, byte == ASCII.lessThan, scanHeredocOpener() {
            return true
        }
        if grammar.charLiterals, byte == ASCII.apostrophe {
            scanCharLiteralOrTick()
            return true
        }
        if grammar.regexLiterals, byte == ASCII.slash, regexAllowed, position >= noRegexBefore, scanRegex() {
            return true
        }
        if ASCII.isDigit(byte) || (byte == ASCII.dot && ASCII.isDigit(source.byte(at: position + 1)) && !followsOperand()) {
            emit(source.numberEnd(from: position, separator: grammar.numberSeparator), .number)
            return true
        }
        if isIdentifierStart(byte) {
            scanWord()
            return true
        }
        if grammar.rubySymbols, byte == ASCII.colon, scanRubySymbol() {
            return true
        }
        if flags[Int(byte)] & CompiledGrammar.attributePrefix != 0, isIdentifierStart(source.byte(at: position + 1)) {
            emit(identifierEnd(from: position + 2), .keyword)
            return true
        }
        return false
    }

    /// Writes `position..<tokenEnd` as `kind` (plain when nil) and moves past it. After a value a `/`
    /// divides; after a keyword like `return` it starts a regular expression.
    private func emit(_ tokenEnd: Int, _ kind: TokenKind?) {
        guard let kind else {
            position = tokenEnd
            regexAllowed = false
            return
        }
        writer.write(position, tokenEnd, as: kind)
        position = tokenEnd
        switch kind {
        case .comment: break
        case .keyword: regexAllowed = true
        default: regexAllowed = false
        }
    }

    private func followsOperand() -> Bool {
        guard position > start else { return false }
        let previous = source[position - 1]
        return isIdentifierPart(previous) || previous == ASCII.rightParenthesis || previous == ASCII.rightBracket
    }

    // MARK: Comments, strings, symbols

    private func scanCommentStringOrSymbol() -> Bool {
        let byteFlags = flags[Int(source[position])]
        if byteFlags & CompiledGrammar.blockCommentStart != 0 {
            for comment in grammar.blockComments where source.matches(comment.open, at: position) {
                emit(blockCommentEnd(comment, from: position + comment.open.count), .comment)
                return true
            }
        }
        if byteFlags & CompiledGrammar.lineCommentStart != 0 {
            for comment in grammar.lineComments where source.matches(comment.marker, at: position) && lineCommentAllowed(comment) {
                emit(source.lineEnd(from: position), .comment)
                return true
            }
        }
        if byteFlags & CompiledGrammar.otherStart != 0 {
            for symbol in grammar.symbols where source.matches(symbol.text, at: position) {
                emit(position + symbol.text.count, symbol.kind)
                return true
            }
            if let rule = stringRule(at: position) {
                emit(stringEnd(rule, from: position + rule.open.count, escape: rule.escape, depth: 0), rule.kind)
                return true
            }
        }
        return false
    }

    private func lineCommentAllowed(_ comment: LanguageGrammar.LineComment) -> Bool {
        let previous = position > start ? source[position - 1] : ASCII.newline
        switch comment.condition {
        case .anywhere:
            return true
        case .atWordStart:
            return ASCII.isBlankOrNewline(previous) || previous == ASCII.semicolon || previous == 0x26 /* & */
                || previous == 0x7C /* | */ || previous == ASCII.leftParenthesis
        case .notAfterDollar:
            return previous != ASCII.dollar
        case .atLineStart:
            return !lineHasCode
        case .notBeforeOperatorSymbol:
            var index = position + comment.marker.count
            while source.byte(at: index) == ASCII.minus { index += 1 }
            return index >= end || !Self.haskellOperatorSymbols.contains(source[index])
        }
    }

    private func blockCommentEnd(_ comment: LanguageGrammar.BlockComment, from contentStart: Int) -> Int {
        let open = comment.open
        let close = comment.close
        let base = source.base
        if !comment.nests {
            // Jump from one candidate closing byte to the next.
            var index = contentStart
            while index < end, let candidate = memchr(base + index, Int32(close[0]), end - index) {
                index = base.distance(to: candidate.assumingMemoryBound(to: UInt8.self))
                if source.matches(close, at: index) { return index + close.count }
                index += 1
            }
            return end
        }
        var depth = 1
        var index = contentStart
        let openFirst = open[0]
        let closeFirst = close[0]
        while index < end {
            let byte = base[index]
            if byte == closeFirst && source.matches(close, at: index) {
                index += close.count
                depth -= 1
                if depth == 0 { return index }
            } else if byte == openFirst && source.matches(open, at: index) {
                index += open.count
                depth += 1
            } else {
                index += 1
            }
        }
        return end
    }

    private func stringRule(at index: Int) -> LanguageGrammar.StringRule? {
        let strings = grammar.strings
        var number = 0
        while number < strings.count {
            if source.matches(strings[number].open, at: index) { return strings[number] }
            number += 1
        }
        return nil
    }

    /// The end of the string whose content starts at `contentStart`: after its closing delimiter, at
    /// the end of the line for an unterminated single-line string, or at the end of the range.
    private func stringEnd(
        _ rule: LanguageGrammar.StringRule, from contentStart: Int, escape: LanguageGrammar.StringRule.Escape, depth: Int
    ) -> Int {
        // Everything the loop needs is in locals: this loop runs over every byte of every string.
        let base = base
        let end = end
        let close = rule.close
        let closeFirst = close[0]
        let multiline = rule.multiline
        let interpolations = rule.interpolations
        let interpolationFirst = interpolations.first?.open[0] ?? 0
        var backslashEscapes = false
        var doubledDelimiter = false
        switch escape {
        case .backslash: backslashEscapes = true
        case .doubledDelimiter: doubledDelimiter = true
        case .none: break
        }
        var index = contentStart
        while index < end {
            let byte = base[index]
            if byte == ASCII.newline && !multiline { return index }
            if byte == interpolationFirst && !interpolations.isEmpty,
               let interpolation = interpolations.first(where: { source.matches($0.open, at: index) }) {
                index = interpolationEnd(interpolation, from: index + interpolation.open.count, multiline: multiline, depth: depth)
                continue
            }
            if byte == ASCII.backslash && backslashEscapes {
                index += 2
                continue
            }
            if byte == closeFirst && source.matches(close, at: index) {
                index += close.count
                if doubledDelimiter && source.matches(close, at: index) {
                    index += close.count
                    continue
                }
                return index
            }
            index += 1
        }
        return end
    }

    /// The end of an interpolation whose content starts at `contentStart`: after its closing bracket,
    /// skipping nested brackets and strings (so `"\(f("a)"))"` stays one string).
    private func interpolationEnd(_ interpolation: LanguageGrammar.Interpolation, from contentStart: Int, multiline: Bool, depth: Int) -> Int {
        let base = source.base
        let close = interpolation.close
        let bracket = interpolation.bracket
        var nesting = 1
        var index = contentStart
        while index < end {
            let byte = base[index]
            if byte == ASCII.newline && !multiline { return index }
            if byte == close {
                nesting -= 1
                index += 1
                if nesting == 0 { return index }
            } else if byte == bracket {
                nesting += 1
                index += 1
            } else if depth < Self.maximumInterpolationDepth, flags[Int(byte)] & CompiledGrammar.otherStart != 0,
                      let rule = stringRule(at: index) {
                index = stringEnd(rule, from: index + rule.open.count, escape: rule.escape, depth: depth + 1)
            } else {
                index += 1
            }
        }
        return end
    }

    // MARK: Words

    private func scanWord() {
        var wordEnd = identifierEnd(from: position + 1)
        if hasIdentifierSuffixes, wordEnd < end, grammar.identifierSuffixes.contains(base[wordEnd]),
           source.byte(at: wordEnd + 1) != ASCII.equals {
            wordEnd += 1
        }
        // Only a word glued to a quote can prefix a string; checking that first spares a lookup.
        let next = source.byte(at: wordEnd)
        if hasStringPrefixes, wordEnd - position <= 3,
           next == ASCII.quote || next == ASCII.apostrophe || next == ASCII.backtick || next == ASCII.hash,
           let style = grammar.stringPrefixes[source.string(position, wordEnd)],
           scanPrefixedString(style, prefixEnd: wordEnd) {
            return
        }
        if perlQuoteLike, wordEnd - position <= 2, Self.perlQuoteLikeInitials.contains(base[position]),
           scanPerlQuoteLike(wordEnd: wordEnd) {
            return
        }
        if macroBang, source.byte(at: wordEnd) == 0x21 /* ! */, source.byte(at: wordEnd + 1) != ASCII.equals {
            emit(wordEnd + 1, .builtin)
            return
        }
        emit(wordEnd, classify(position, wordEnd))
    }

    private func classify(_ wordStart: Int, _ wordEnd: Int) -> TokenKind? {
        let afterDot = wordStart > start && base[wordStart - 1] == ASCII.dot
            && !(wordStart - 1 > start && base[wordStart - 2] == ASCII.dot)
        if let entry = words.lookup(source, wordStart, wordEnd) {
            return !afterDot || entry.keepsKindAfterDot ? entry.kind : nil
        }
        if uppercaseIsType && ASCII.isUppercase(base[wordStart]) && !isConstantName(wordStart, wordEnd)
            && !(pascalCaseMethods && source.byte(at: wordEnd) == ASCII.leftParenthesis) {
            return .type
        }
        return nil
    }

    /// `MAX_SIZE` is a constant, not a type; `URL` and `T` are types.
    private func isConstantName(_ wordStart: Int, _ wordEnd: Int) -> Bool {
        var hasUnderscore = false
        var index = wordStart
        while index < wordEnd {
            let byte = base[index]
            if ASCII.isLowercase(byte) { return false }
            if byte == ASCII.underscore { hasUnderscore = true }
            index += 1
        }
        return hasUnderscore
    }

    private func scanPrefixedString(_ style: LanguageGrammar.PrefixStyle, prefixEnd: Int) -> Bool {
        switch style {
        case .plain, .raw:
            if let rule = stringRule(at: prefixEnd) {
                let escape = style == .raw ? .none : rule.escape
                emit(stringEnd(rule, from: prefixEnd + rule.open.count, escape: escape, depth: 0), rule.kind)
                return true
            }
            if grammar.charLiterals, let literalEnd = charLiteralEnd(from: prefixEnd) {
                emit(literalEnd, .string)
                return true
            }
            return false
        case .hashDelimited:
            return scanHashDelimitedString(prefixEnd: prefixEnd, minimumHashes: 0)
        case .cppRaw:
            return scanCppRawString(prefixEnd: prefixEnd)
        }
    }

    // MARK: Language-specific lexemes

    /// Rust `r#"…"#`, Swift `#"…"#` and `#"""…"""#`: the string ends at a quote followed by as many
    /// `#` as opened it, so nothing inside needs escaping.
    private func scanHashDelimitedString(prefixEnd: Int, minimumHashes: Int) -> Bool {
        var quoteStart = prefixEnd
        while source.byte(at: quoteStart) == ASCII.hash { quoteStart += 1 }
        let hashes = quoteStart - prefixEnd
        guard hashes >= minimumHashes, source.byte(at: quoteStart) == ASCII.quote else {
            if hashes > 1 && minimumHashes > 0 {
                // A run of `#` that opens nothing: move past all but the last in one step, so the run
                // is not counted again from each of its `#`.
                emit(quoteStart - 1, nil)
                return true
            }
            return false
        }
        // Rust raw strings may span lines; Swift's only in the triple-quoted form.
        let isSwift = grammar.hashDelimitedStrings
        let tripleQuoted = isSwift && source.byte(at: quoteStart + 1) == ASCII.quote && source.byte(at: quoteStart + 2) == ASCII.quote
        let quotes = tripleQuoted ? 3 : 1
        let close = [UInt8](repeating: ASCII.quote, count: quotes) + [UInt8](repeating: ASCII.hash, count: hashes)
        var index = quoteStart + quotes
        var stringEnd = end
        while index < end {
            let byte = source[index]
            if byte == ASCII.newline && isSwift && !tripleQuoted {
                stringEnd = index
                break
            }
            if byte == ASCII.quote && source.matches(close, at: index) {
                stringEnd = index + close.count
                break
            }
            index += 1
        }
        emit(stringEnd, .string)
        return true
    }

    /// C++ `R"delimiter(…)delimiter"`.
    private func scanCppRawString(prefixEnd: Int) -> Bool {
        guard source.byte(at: prefixEnd) == ASCII.quote else { return false }
        var parenthesis = prefixEnd + 1
        while parenthesis < end && parenthesis - prefixEnd <= 17 {
            let byte = source[parenthesis]
            if byte == ASCII.leftParenthesis { break }
            if ASCII.isBlankOrNewline(byte) || byte == ASCII.rightParenthesis || byte == ASCII.backslash || byte == ASCII.quote { return false }
            parenthesis += 1
        }
        guard source.byte(at: parenthesis) == ASCII.leftParenthesis else { return false }
        let close = [ASCII.rightParenthesis] + source.bytes(prefixEnd + 1, parenthesis) + [ASCII.quote]
        emit(source.endOfFirst(close, from: parenthesis + 1), .string)
        return true
    }

    /// Lua `[[…]]`, `[==[…]==]` strings and `--[[…]]` comments.
    private func scanLuaLongBracket() -> Bool {
        var bracket = position
        var kind = TokenKind.string
        if source[position] == ASCII.minus {
            guard source.byte(at: position + 1) == ASCII.minus, source.byte(at: position + 2) == ASCII.leftBracket else { return false }
            bracket = position + 2
            kind = .comment
        }
        var second = bracket + 1
        while source.byte(at: second) == ASCII.equals { second += 1 }
        guard source.byte(at: second) == ASCII.leftBracket else { return false }
        let level = second - bracket - 1
        let close = [ASCII.rightBracket] + [UInt8](repeating: ASCII.equals, count: level) + [ASCII.rightBracket]
        emit(source.endOfFirst(close, from: second + 1), kind)
        return true
    }

    /// Rust, Haskell and Scala use `'` both for character literals and for other things (lifetimes,
    /// promoted constructors, symbols), so it only opens a literal when one follows.
    private func scanCharLiteralOrTick() {
        if let literalEnd = charLiteralEnd(from: position) {
            emit(literalEnd, .string)
            return
        }
        var tickEnd = position + 1
        while tickEnd < end && isIdentifierPart(source[tickEnd]) { tickEnd += 1 }
        emit(tickEnd, nil)
    }

    private func charLiteralEnd(from quote: Int) -> Int? {
        guard source.byte(at: quote) == ASCII.apostrophe else { return nil }
        let first = source.byte(at: quote + 1)
        if first == ASCII.backslash {
            var index = quote + 3
            while index < end && index - quote <= 12 {
                let byte = source[index]
                if byte == ASCII.apostrophe { return index + 1 }
                if byte == ASCII.newline { return nil }
                index += 1
            }
            return nil
        }
        if first == ASCII.apostrophe || first == ASCII.newline || first == 0 && quote + 1 >= end { return nil }
        // One character, however many UTF-8 bytes it takes.
        let length = first < 0x80 ? 1 : first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : 2
        return source.byte(at: quote + 1 + length) == ASCII.apostrophe ? quote + 2 + length : nil
    }

    private func scanRegex() -> Bool {
        guard !followsOperand() else { return false }
        var index = position + 1
        var inClass = false
        while index < end {
            let byte = source[index]
            if byte == ASCII.newline { break }
            if byte == ASCII.backslash {
                index += 2
                continue
            }
            if byte == ASCII.leftBracket {
                inClass = true
            } else if byte == ASCII.rightBracket {
                inClass = false
            } else if byte == ASCII.slash && !inClass && index > position + 1 {
                index += 1
                while index < end && ASCII.isLetter(source[index]) { index += 1 }
                emit(index, .string)
                regexAllowed = false
                return true
            }
            index += 1
        }
        noRegexBefore = source.lineEnd(from: position)
        return false
    }

    /// C preprocessor lines: `#include <stdio.h>`, `#define`, `# if`.
    private func scanPreprocessorDirective() -> Bool {
        let nameStart = source.skipBlanks(from: position + 1)
        guard ASCII.isLetter(source.byte(at: nameStart)) else { return false }
        var nameEnd = nameStart
        while nameEnd < end && ASCII.isWordByte(source[nameEnd]) { nameEnd += 1 }
        let name = source.string(nameStart, nameEnd)
        emit(nameEnd, .keyword)
        guard name == "include" || name == "import" || name == "include_next" else { return true }
        let headerStart = source.skipBlanks(from: position)
        guard source.byte(at: headerStart) == ASCII.lessThan else { return true }
        emit(headerStart, nil)
        var headerEnd = headerStart + 1
        while headerEnd < end && source[headerEnd] != ASCII.greaterThan && source[headerEnd] != ASCII.newline { headerEnd += 1 }
        if source.byte(at: headerEnd) == ASCII.greaterThan { headerEnd += 1 }
        emit(headerEnd, .string)
        return true
    }

    /// Ruby `=begin`…`=end` and Perl POD, which only exist at the start of a line.
    private func scanLineBlockComment(_ style: LanguageGrammar.LineBlockComments) -> Bool {
        let closer: [UInt8]
        switch style {
        case .rubyBeginEnd:
            guard source.matches(Self.rubyBlockOpen, at: position), !ASCII.isWordByte(source.byte(at: position + 6)) else { return false }
            closer = Self.rubyBlockClose
        case .perlPOD:
            guard source[position] == ASCII.equals, ASCII.isLetter(source.byte(at: position + 1)) else { return false }
            closer = Self.podClose
        }
        var lineEnd = source.lineEnd(from: position)
        while lineEnd < end {
            let lineStart = lineEnd + 1
            lineEnd = source.lineEnd(from: lineStart)
            if source.matches(closer, at: lineStart) && !ASCII.isWordByte(source.byte(at: lineStart + closer.count)) { break }
        }
        emit(lineEnd, .comment)
        return true
    }

    /// Ruby `:symbol` and `:"symbol"`.
    private func scanRubySymbol() -> Bool {
        if position > start {
            let previous = source[position - 1]
            if previous == ASCII.colon || isIdentifierPart(previous) { return false }
        }
        let next = source.byte(at: position + 1)
        if next == ASCII.quote, let rule = stringRule(at: position + 1) {
            emit(stringEnd(rule, from: position + 2, escape: rule.escape, depth: 0), .string)
            return true
        }
        guard isIdentifierStart(next) else { return false }
        var symbolEnd = position + 2
        while symbolEnd < end && isIdentifierPart(source[symbolEnd]) { symbolEnd += 1 }
        let suffix = source.byte(at: symbolEnd)
        if suffix == ASCII.question || suffix == 0x21 /* ! */ || suffix == ASCII.equals { symbolEnd += 1 }
        emit(symbolEnd, .string)
        return true
    }

    /// Perl `q{…}`, `qq(…)`, `qw/…/`, `qr<…>`, `m!…!`, and the two-part `s/…/…/`, `s{…}{…}`,
    /// `tr/…/…/`, `y/…/…/`: the delimiter is whatever follows the word, brackets pair up and nest.
    private func scanPerlQuoteLike(wordEnd: Int) -> Bool {
        let word = source.string(position, wordEnd)
        guard ["q", "qq", "qw", "qr", "m", "s", "tr", "y"].contains(word) else { return false }
        let open = source.byte(at: wordEnd)
        guard wordEnd < end, !ASCII.isWordByte(open), !ASCII.isBlankOrNewline(open),
              ![ASCII.equals, ASCII.comma, ASCII.semicolon, ASCII.colon, ASCII.minus, ASCII.rightParenthesis,
                ASCII.rightBracket, ASCII.rightBrace, ASCII.greaterThan].contains(open)
        else { return false }
        var index = delimitedEnd(open: open, from: wordEnd + 1)
        if word == "s" || word == "tr" || word == "y" {
            if Self.perlBrackets[open] == nil {
                // `s/a/b/`: the closing delimiter of the first part opens the second.
                index = delimitedEnd(open: open, from: index)
            } else {
                // `s{a} {b}`: a second bracketed part, possibly after blanks.
                var second = index
                while second < end && ASCII.isBlankOrNewline(source[second]) { second += 1 }
                let secondOpen = source.byte(at: second)
                if second < end && Self.perlBrackets[secondOpen] != nil { index = delimitedEnd(open: secondOpen, from: second + 1) }
            }
        }
        if word != "q" && word != "qq" && word != "qw" {
            while index < end && ASCII.isLetter(source[index]) { index += 1 }
        }
        emit(index, .string)
        return true
    }

    /// The end of a Perl quote-like part whose content starts at `contentStart`.
    private func delimitedEnd(open: UInt8, from contentStart: Int) -> Int {
        let close = Self.perlBrackets[open] ?? open
        var nesting = 1
        var index = contentStart
        while index < end {
            let byte = source[index]
            index += 1
            if byte == ASCII.backslash {
                index += 1
            } else if byte == close {
                nesting -= 1
                if nesting == 0 { break }
            } else if byte == open {
                nesting += 1
            }
        }
        return min(index, end)
    }

    // MARK: Heredocs

    private func scanHeredocOpener() -> Bool {
        guard let style = grammar.heredoc, source.byte(at: position + 1) == ASCII.lessThan else { return false }
        var index = position + 2
        if style == .php {
            guard source.byte(at: index) == ASCII.lessThan else { return false }
            index += 1
        } else if source.byte(at: index) == ASCII.lessThan {
            // `<<<` is a here-string (shell) or nothing; step over it whole so that its last two
            // `<` are not taken for a heredoc.
            emit(index + 1, nil)
            return true
        }
        var indented = false
        let marker = source.byte(at: index)
        switch style {
        case .shell:
            if marker == ASCII.minus { indented = true; index += 1 }
            index = source.skipBlanks(from: index)
            if source.byte(at: index) == ASCII.backslash { index += 1 }
        case .ruby, .perl:
            if marker == ASCII.tilde || (style == .ruby && marker == ASCII.minus) { indented = true; index += 1 }
        case .php:
            indented = true
            index = source.skipBlanks(from: index)
        }
        var delimiterStart = index
        var delimiterEnd = index
        let quote = source.byte(at: index)
        if quote == ASCII.quote || quote == ASCII.apostrophe {
            delimiterStart = index + 1
            delimiterEnd = delimiterStart
            while delimiterEnd < end && source[delimiterEnd] != quote && source[delimiterEnd] != ASCII.newline
                && delimiterEnd - delimiterStart < Self.maximumDelimiterLength {
                delimiterEnd += 1
            }
            guard source.byte(at: delimiterEnd) == quote, delimiterEnd > delimiterStart else { return false }
            index = delimiterEnd + 1
        } else {
            let first = source.byte(at: index)
            guard ASCII.isLetter(first) || first == ASCII.underscore else { return false }
            if style == .ruby && !indented && !ASCII.isUppercase(first) { return false }
            while delimiterEnd < end && (ASCII.isAlphanumeric(source[delimiterEnd]) || source[delimiterEnd] == ASCII.underscore)
                && delimiterEnd - delimiterStart < Self.maximumDelimiterLength {
                delimiterEnd += 1
            }
            index = delimiterEnd
        }
        pendingHeredocs.append(Heredoc(delimiter: source.bytes(delimiterStart, delimiterEnd), indented: indented))
        emit(index, .string)
        return true
    }

    /// Called right after the newline that ends a line with heredoc openers: their bodies follow, one
    /// after the other, each up to and including its terminator line.
    private func writeHeredocBodies() {
        let heredocs = pendingHeredocs
        pendingHeredocs.removeAll()
        for (number, heredoc) in heredocs.enumerated() {
            if number > 0 && source.byte(at: position) == ASCII.newline { position += 1 }
            guard position < end else { return }
            var lineStart = position
            var bodyEnd = end
            while lineStart < end {
                let lineEnd = source.lineEnd(from: lineStart)
                if terminates(heredoc, lineStart: lineStart, lineEnd: lineEnd) {
                    bodyEnd = lineEnd
                    break
                }
                lineStart = lineEnd + 1
            }
            writer.write(position, bodyEnd, as: .string)
            position = bodyEnd
        }
    }

    private func terminates(_ heredoc: Heredoc, lineStart: Int, lineEnd: Int) -> Bool {
        var index = lineStart
        if heredoc.indented {
            while index < lineEnd && ASCII.isBlank(source[index]) { index += 1 }
        }
        guard source.matches(heredoc.delimiter, at: index) else { return false }
        let after = index + heredoc.delimiter.count
        return after >= lineEnd || !ASCII.isWordByte(source[after])
    }
}
