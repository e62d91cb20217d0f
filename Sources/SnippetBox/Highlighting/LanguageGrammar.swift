import Foundation

/// What the generic `CodeScanner` needs to know about one programming language. Each language is a
/// value of this type (see `Grammars.swift`), so adding or fixing a language is editing a table, not
/// writing a scanner. The optional features cover the few lexical oddities that a table of
/// delimiters cannot express.
struct LanguageGrammar: Sendable {
    struct LineComment: Sendable {
        enum Condition: Sendable {
            case anywhere
            /// Shell-like: `#` starts a comment only at the start of a word (`$#`, `a#b` are not).
            case atWordStart
            /// Perl: `$#array` is the last index, not a comment.
            case notAfterDollar
            /// Only as the first thing on its line (Dockerfile arguments).
            case atLineStart
            /// Haskell: `--` followed by an operator character is an operator such as `-->`.
            case notBeforeOperatorSymbol
        }

        var marker: [UInt8]
        var condition: Condition

        init(_ marker: String, _ condition: Condition = .anywhere) {
            self.marker = Array(marker.utf8)
            self.condition = condition
        }
    }

    struct BlockComment: Sendable {
        var open: [UInt8]
        var close: [UInt8]
        var nests: Bool

        init(_ open: String, _ close: String, nests: Bool = false) {
            self.open = Array(open.utf8)
            self.close = Array(close.utf8)
            self.nests = nests
        }
    }

    /// A part of a string literal that is code, such as Swift's `\(…)` or JavaScript's `${…}`. It is
    /// still coloured as string; knowing its extent lets quotes inside it not end the string.
    struct Interpolation: Sendable {
        var open: [UInt8]
        var close: UInt8
        /// The bracket that nests: the last byte of `open`.
        var bracket: UInt8 { open[open.count - 1] }

        init(_ open: String, _ close: Character) {
            self.open = Array(open.utf8)
            self.close = close.asciiValue!
        }
    }

    struct StringRule: Sendable {
        enum Escape: Sendable {
            case backslash
            /// SQL, C# verbatim strings: the delimiter written twice stands for itself.
            case doubledDelimiter
            case none
        }

        var open: [UInt8]
        var close: [UInt8]
        var escape: Escape
        /// A single-line string ends, unterminated, at the end of its line instead of swallowing the
        /// rest of the snippet.
        var multiline: Bool
        /// All starting with the same byte (the scanner checks that byte first).
        var interpolations: [Interpolation]
        /// Nil for quoted things that are not strings (SQL `"identifiers"`, Kotlin `` `names` ``): they
        /// are consumed so that nothing inside gets highlighted, and left uncoloured.
        var kind: TokenKind?

        init(
            _ open: String, _ close: String? = nil, escape: Escape = .backslash, multiline: Bool = false,
            interpolations: [Interpolation] = [], kind: TokenKind? = .string
        ) {
            self.open = Array(open.utf8)
            self.close = Array((close ?? open).utf8)
            self.escape = escape
            self.multiline = multiline
            self.interpolations = interpolations
            self.kind = kind
        }
    }

    /// What an identifier glued to a quote does to the string, e.g. Python's `r"…"`.
    enum PrefixStyle: Sendable {
        /// Part of the string, escapes as usual (`f"…"`, `b"…"`, `u8"…"`).
        case plain
        /// Part of the string, backslashes are ordinary characters (Dart `r'…'`).
        case raw
        /// Rust `r"…"`, `r#"…"#`: as many `#` after the prefix as before the closing quote.
        case hashDelimited
        /// C++ `R"delimiter(…)delimiter"`.
        case cppRaw
    }

    enum HeredocStyle: Sendable {
        /// `<<EOF`, `<<-EOF` (tabs before the terminator), `<<'EOF'`, `<<"EOF"`, `<<\EOF`.
        case shell
        /// `<<~EOS`, `<<-EOS`, `<<EOS` (uppercase name or quoted, to tell it from the `<<` operator).
        case ruby
        /// `<<"EOF"`, `<<'EOF'`, `<<EOF`, `<<~EOF`.
        case perl
        /// `<<<EOT`, `<<<"EOT"`, `<<<'EOT'`; the terminator may be indented and followed by `;`.
        case php
    }

    /// Block comments that are recognised only at the start of a line.
    enum LineBlockComments: Sendable {
        /// `=begin` … `=end`.
        case rubyBeginEnd
        /// POD: any `=word` line … `=cut`.
        case perlPOD
    }

    var keywords: Set<String>
    /// Built-in type names (`int`, `bool`): coloured as types.
    var types: Set<String> = []
    /// Built-in functions and the like: coloured as builtins.
    var builtins: Set<String> = []
    /// Keywords, types and builtins match in any case; the sets then hold lowercase words.
    var caseInsensitive = false
    /// An identifier starting with an uppercase letter names a type (or a class, or a constructor),
    /// unless it looks like a constant (`MAX_SIZE`).
    var uppercaseIsType = false
    /// C# names methods in PascalCase too, so an uppercase identifier followed by `(` is a call or a
    /// declaration of a method, not a type.
    var pascalCaseMethods = false
    /// Words after a member-access dot are names, not keywords (`.default`), except these.
    var keywordsAfterDot: Set<String> = []

    var lineComments: [LineComment] = []
    var blockComments: [BlockComment] = []
    var lineBlockComments: LineBlockComments?
    /// Longest opening delimiter first: the scanner takes the first rule whose opening matches.
    var strings: [StringRule] = []
    var stringPrefixes: [String: PrefixStyle] = [:]
    var heredoc: HeredocStyle?
    /// Exact byte sequences that are tokens on their own, e.g. PHP's `<?php` and `?>`.
    var symbols: [(text: [UInt8], kind: TokenKind)] = []

    /// Characters besides letters, `_` and non-ASCII that may start an identifier (sigils like `$`).
    var identifierStartExtras: [UInt8] = []
    /// Characters besides those that may continue an identifier (`'` in Haskell, `.` in R).
    var identifierPartExtras: [UInt8] = []
    /// Characters allowed once at the end of an identifier, when not followed by `=` (Ruby `empty?`).
    var identifierSuffixes: [UInt8] = []
    /// A word right after one of these is an attribute or directive, coloured as a keyword:
    /// `@MainActor`, `#available`, `@Override`.
    var attributePrefixes: [UInt8] = []
    /// The digit separator: `1_000`, or C++'s `1'000`.
    var numberSeparator = UInt8(ascii: "_")

    /// C-style `#include`, `#define` lines: the directive is a keyword, an `<header>` a string.
    var preprocessor = false
    /// Swift `#"…"#` and `#"""…"""#`.
    var hashDelimitedStrings = false
    /// Lua `[[…]]`, `[==[…]==]` strings and `--[[…]]` comments.
    var luaLongBrackets = false
    /// `'` starts a character literal only when one follows (`'a'`, `'\n'`); otherwise it is a
    /// lifetime, a type-level tick or part of a name (Rust, Haskell, Scala).
    var charLiterals = false
    /// Rust `println!`: an identifier followed by `!` is a macro, coloured as builtin.
    var macroBang = false
    /// Ruby `:symbol`, coloured as string.
    var rubySymbols = false
    /// Perl `q{…}`, `qq(…)`, `qw/…/`, `qr<…>`, `m!…!`, `s/…/…/`, `tr/…/…/`.
    var perlQuoteLike = false
    /// `/regex/` where an operand is expected (JavaScript, Ruby, Perl).
    var regexLiterals = false

    init(keywords: String) {
        self.keywords = Self.words(keywords)
    }

    /// Splits a whitespace-separated list, which keeps the keyword tables readable.
    static func words(_ list: String) -> Set<String> {
        Set(list.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))
    }
}
