import Foundation

/// A `LanguageGrammar` turned into the lookup tables the `CodeScanner` consults for every byte and
/// word. Built once per highlighting call and language (see `GrammarCache`), not per token.
final class CompiledGrammar {
    /// Bits of `byteFlags`.
    static let identifierStart: UInt8 = 1
    static let identifierPart: UInt8 = 2
    /// The byte may open a comment, string, symbol or language-specific lexeme: the scanner takes the
    /// careful path for it. Every other byte is a word, a number, a blank or punctuation.
    static let special: UInt8 = 4
    static let attributePrefix: UInt8 = 8
    /// The byte starts a line comment marker, a block comment opener, a string or symbol opener
    /// (one bit each): the scanner only walks the lists that the byte can start.
    static let lineCommentStart: UInt8 = 16
    static let blockCommentStart: UInt8 = 32
    static let otherStart: UInt8 = 64

    let grammar: LanguageGrammar
    let words: WordTable
    private let flags: UnsafeMutablePointer<UInt8>

    init(_ grammar: LanguageGrammar) {
        self.grammar = grammar
        words = WordTable([
            (grammar.keywords.subtracting(grammar.keywordsAfterDot), WordTable.Entry(kind: .keyword, keepsKindAfterDot: false)),
            (grammar.keywords.intersection(grammar.keywordsAfterDot), WordTable.Entry(kind: .keyword, keepsKindAfterDot: true)),
            (grammar.types, WordTable.Entry(kind: .type, keepsKindAfterDot: true)),
            (grammar.builtins, WordTable.Entry(kind: .builtin, keepsKindAfterDot: false)),
        ], caseInsensitive: grammar.caseInsensitive)
        flags = .allocate(capacity: 256)
        flags.initialize(repeating: 0, count: 256)
        for value in 0...255 {
            let byte = UInt8(value)
            if ASCII.isLetter(byte) || byte == ASCII.underscore || byte >= 0x80 { flags[value] |= Self.identifierStart }
            if ASCII.isWordByte(byte) { flags[value] |= Self.identifierPart }
        }
        for byte in grammar.identifierStartExtras { flags[Int(byte)] |= Self.identifierStart | Self.identifierPart }
        for byte in grammar.identifierPartExtras { flags[Int(byte)] |= Self.identifierPart }
        for byte in grammar.attributePrefixes { flags[Int(byte)] |= Self.attributePrefix | Self.special }
        for comment in grammar.lineComments { flags[Int(comment.marker[0])] |= Self.lineCommentStart | Self.special }
        for comment in grammar.blockComments { flags[Int(comment.open[0])] |= Self.blockCommentStart | Self.special }
        for rule in grammar.strings { flags[Int(rule.open[0])] |= Self.otherStart | Self.special }
        for symbol in grammar.symbols { flags[Int(symbol.text[0])] |= Self.otherStart | Self.special }
        var specialBytes: [UInt8] = [ASCII.dot]  // `.5`
        if grammar.lineBlockComments != nil { specialBytes.append(ASCII.equals) }
        if grammar.preprocessor || grammar.hashDelimitedStrings { specialBytes.append(ASCII.hash) }
        if grammar.luaLongBrackets { specialBytes += [ASCII.minus, ASCII.leftBracket] }
        if grammar.heredoc != nil { specialBytes.append(ASCII.lessThan) }
        if grammar.charLiterals { specialBytes.append(ASCII.apostrophe) }
        if grammar.regexLiterals { specialBytes.append(ASCII.slash) }
        if grammar.rubySymbols { specialBytes.append(ASCII.colon) }
        for byte in specialBytes { flags[Int(byte)] |= Self.special }
    }

    deinit {
        flags.deallocate()
        words.deallocate()
    }

    /// The table itself, for the scanner's hot loop; valid as long as this object lives.
    var byteFlags: UnsafePointer<UInt8> { UnsafePointer(flags) }
}
