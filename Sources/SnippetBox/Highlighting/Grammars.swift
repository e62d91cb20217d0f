import Foundation

/// The grammar tables of the languages that the generic `CodeScanner` handles. Markup, CSS, JSON,
/// YAML, Markdown and Dockerfile have scanners of their own (see `SyntaxHighlighter`).
///
/// Contextual keywords that are also everyday names (Swift's `copy` and `prefix`, Kotlin's `value`
/// and `data`, `get` and `set` almost everywhere) are left out on purpose: the scanner sees words,
/// not context, and a variable coloured as a keyword is worse than a modifier left plain.
extension LanguageGrammar {
    /// The grammar for `language`, or nil when the language has its own scanner or none.
    static func forLanguage(_ language: CodingLanguage) -> LanguageGrammar? {
        switch language {
        case .swift: swift
        case .python: python
        case .javascript: javascript
        case .typescript: typescript
        case .java: java
        case .kotlin: kotlin
        case .c: c
        case .cpp: cpp
        case .csharp: csharp
        case .go: go
        case .rust: rust
        case .ruby: ruby
        case .php: php
        case .sql: sql
        case .shell: shell
        case .objectivec: objectivec
        case .scala: scala
        case .dart: dart
        case .lua: lua
        case .perl: perl
        case .r: r
        case .haskell: haskell
        case .plaintext, .html, .css, .json, .yaml, .markdown, .xml, .dockerfile: nil
        }
    }

    // MARK: Shared pieces

    private static let slashComments: [LineComment] = [LineComment("//")]
    private static let cBlockComment: [BlockComment] = [BlockComment("/*", "*/")]
    private static let nestingBlockComment: [BlockComment] = [BlockComment("/*", "*/", nests: true)]
    private static let doubleQuoted = StringRule("\"")
    private static let singleQuoted = StringRule("'")
    private static let dollarBrace = Interpolation("${", "}")

    private static let cKeywords = """
        auto break case const continue default do else enum extern for goto if inline register restrict
        return sizeof static struct switch typedef union volatile while _Alignas _Alignof _Atomic _Generic
        _Noreturn _Static_assert _Thread_local true false NULL
        """
    private static let cTypes = """
        char double float int long short signed unsigned void _Bool bool _Complex size_t ssize_t ptrdiff_t
        intptr_t uintptr_t int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t wchar_t off_t
        time_t FILE va_list
        """
    private static let cBuiltins = """
        printf fprintf sprintf snprintf scanf sscanf puts fputs fgets fopen fclose fread fwrite malloc calloc
        realloc free memcpy memmove memset memcmp strlen strcmp strncmp strcpy strncpy strcat strchr strstr
        exit abort assert atoi atol strtol qsort
        """

    // MARK: Languages

    static let swift: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            associatedtype class deinit enum extension fileprivate func import init inout internal let open
            operator private precedencegroup protocol public rethrows static struct subscript typealias var
            break case catch continue default defer do else fallthrough for guard if in repeat return throw
            switch where while as false is nil self Self super throws true try await async actor any some
            macro nonisolated isolated borrowing consuming package convenience dynamic final indirect lazy
            mutating nonmutating override required unowned weak willSet didSet sending
            """)
        grammar.uppercaseIsType = true
        grammar.keywordsAfterDot = ["self", "init"]
        grammar.lineComments = slashComments
        grammar.blockComments = nestingBlockComment
        let swiftInterpolation = Interpolation("\\(", ")")
        grammar.strings = [
            StringRule("\"\"\"", multiline: true, interpolations: [swiftInterpolation]),
            StringRule("\"", interpolations: [swiftInterpolation]),
            StringRule("`", kind: nil),
        ]
        grammar.hashDelimitedStrings = true
        grammar.attributePrefixes = [UInt8(ascii: "@"), UInt8(ascii: "#")]
        return grammar
    }()

    static let python: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            False None True and as assert async await break class continue def del elif else except finally
            for from global if import in is lambda nonlocal not or pass raise return try while with yield
            """)
        grammar.types = words("int float complex str bytes bytearray bool list dict set frozenset tuple object type memoryview")
        grammar.builtins = words("""
            abs all any ascii bin callable chr classmethod compile delattr dir divmod enumerate eval exec filter
            format getattr globals hasattr hash help hex id input isinstance issubclass iter len locals map max
            min next oct open ord pow print property range repr reversed round setattr slice sorted staticmethod
            sum super vars zip __import__ self cls
            """)
        grammar.uppercaseIsType = true
        grammar.lineComments = [LineComment("#")]
        grammar.strings = [
            StringRule("\"\"\"", multiline: true), StringRule("'''", multiline: true), doubleQuoted, singleQuoted,
        ]
        // Any case combination of the prefixes Python accepts; raw strings still let `\"` not end
        // the string, so they scan like the others.
        for prefix in ["r", "u", "b", "f", "rb", "br", "fr", "rf"] {
            for variant in caseVariants(of: prefix) { grammar.stringPrefixes[variant] = .plain }
        }
        grammar.attributePrefixes = [UInt8(ascii: "@")]
        return grammar
    }()

    private static let javascriptKeywords = """
        break case catch class const continue debugger default delete do else export extends finally for
        function if import in instanceof let new return super switch this throw try typeof var void while
        with yield async await of static null undefined true false NaN Infinity
        """

    static let javascript: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: javascriptKeywords)
        grammar.builtins = words("""
            console window document globalThis require module exports process setTimeout setInterval
            clearTimeout clearInterval parseInt parseFloat isNaN fetch structuredClone queueMicrotask
            """)
        grammar.uppercaseIsType = true
        grammar.lineComments = slashComments
        grammar.blockComments = cBlockComment
        grammar.strings = [
            doubleQuoted, singleQuoted, StringRule("`", multiline: true, interpolations: [dollarBrace]),
        ]
        grammar.identifierStartExtras = [UInt8(ascii: "$")]
        grammar.identifierPartExtras = [UInt8(ascii: "$")]
        grammar.attributePrefixes = [UInt8(ascii: "@")]
        grammar.regexLiterals = true
        return grammar
    }()

    static let typescript: LanguageGrammar = {
        var grammar = javascript
        grammar.keywords.formUnion(words("""
            type interface enum implements namespace declare abstract readonly private protected public keyof
            infer is as satisfies module unique asserts override accessor
            """))
        grammar.types = words("string number boolean any unknown never void object symbol bigint")
        return grammar
    }()

    static let java: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            abstract assert break case catch class const continue default do else enum extends final finally
            for goto if implements import instanceof interface native new package private protected public
            return static strictfp super switch synchronized this throw throws transient try volatile while var
            record sealed permits yield true false null
            """)
        grammar.types = words("boolean byte char short int long float double void")
        grammar.uppercaseIsType = true
        grammar.lineComments = slashComments
        grammar.blockComments = cBlockComment
        grammar.strings = [StringRule("\"\"\"", multiline: true), doubleQuoted, singleQuoted]
        grammar.attributePrefixes = [UInt8(ascii: "@")]
        return grammar
    }()

    static let kotlin: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            as break class continue do else false for fun if in interface is null object package return super
            this throw true try typealias typeof val var when while by catch constructor finally import init
            where abstract annotation companion const crossinline enum external final infix inline inner internal
            lateinit noinline open operator out override private protected public reified sealed suspend tailrec
            vararg
            """)
        grammar.uppercaseIsType = true
        grammar.lineComments = slashComments
        grammar.blockComments = nestingBlockComment
        grammar.strings = [
            StringRule("\"\"\"", escape: .none, multiline: true, interpolations: [dollarBrace]),
            StringRule("\"", interpolations: [dollarBrace]), singleQuoted, StringRule("`", kind: nil),
        ]
        grammar.attributePrefixes = [UInt8(ascii: "@")]
        return grammar
    }()

    static let c: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: cKeywords)
        grammar.types = words(cTypes)
        grammar.builtins = words(cBuiltins)
        grammar.lineComments = slashComments
        grammar.blockComments = cBlockComment
        grammar.strings = [doubleQuoted, singleQuoted]
        grammar.stringPrefixes = ["L": .plain, "u": .plain, "U": .plain, "u8": .plain]
        grammar.preprocessor = true
        return grammar
    }()

    static let cpp: LanguageGrammar = {
        var grammar = c
        grammar.keywords.formUnion(words("""
            alignas alignof and and_eq asm bitand bitor catch class co_await co_return co_yield compl concept
            const_cast consteval constexpr constinit decltype delete dynamic_cast explicit export friend mutable
            namespace new noexcept not not_eq nullptr operator or or_eq private protected public
            reinterpret_cast requires static_assert static_cast template this thread_local throw try typeid
            typename using virtual xor xor_eq override final
            """))
        grammar.types.formUnion(words("""
            char8_t char16_t char32_t string string_view vector map unordered_map set unordered_set array pair
            tuple optional variant unique_ptr shared_ptr weak_ptr
            """))
        grammar.builtins.formUnion(words("std cout cin cerr endl make_unique make_shared move forward"))
        for prefix in ["R", "LR", "uR", "UR", "u8R"] { grammar.stringPrefixes[prefix] = .cppRaw }
        grammar.numberSeparator = UInt8(ascii: "'")
        return grammar
    }()

    static let csharp: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            abstract as base break case catch checked class const continue default delegate do else enum event
            explicit extern false finally fixed for foreach goto if implicit in interface internal is lock
            namespace new null operator out override params private protected public readonly ref return sealed
            sizeof stackalloc static struct switch this throw true try typeof unchecked unsafe using virtual
            volatile while add alias async await dynamic get set global init nameof partial record remove
            required var when where yield with scoped not and or
            """)
        grammar.types = words("bool byte sbyte char decimal double float int uint long ulong short ushort object string void nint nuint")
        grammar.uppercaseIsType = true
        grammar.pascalCaseMethods = true
        grammar.lineComments = slashComments
        grammar.blockComments = cBlockComment
        grammar.strings = [
            StringRule("\"\"\"", escape: .none, multiline: true),
            StringRule("$@\"", "\"", escape: .doubledDelimiter, multiline: true),
            StringRule("@$\"", "\"", escape: .doubledDelimiter, multiline: true),
            StringRule("@\"", "\"", escape: .doubledDelimiter, multiline: true),
            StringRule("$\"", "\""), doubleQuoted, singleQuoted,
        ]
        grammar.preprocessor = true
        return grammar
    }()

    static let go: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            break case chan const continue default defer else fallthrough for func go goto if import interface
            map package range return select struct switch type var true false nil iota
            """)
        grammar.types = words("""
            bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint
            uint8 uint16 uint32 uint64 uintptr any comparable
            """)
        grammar.builtins = words("append cap clear close complex copy delete imag len make max min new panic print println real recover")
        grammar.lineComments = slashComments
        grammar.blockComments = cBlockComment
        grammar.strings = [doubleQuoted, singleQuoted, StringRule("`", escape: .none, multiline: true)]
        return grammar
    }()

    static let rust: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            as async await break const continue crate dyn else enum extern false fn for if impl in let loop match
            mod move mut pub ref return self Self static struct super trait true type unsafe use where while
            macro_rules
            """)
        grammar.types = words("i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str")
        grammar.uppercaseIsType = true
        grammar.lineComments = slashComments
        grammar.blockComments = nestingBlockComment
        grammar.strings = [StringRule("\"", multiline: true)]
        grammar.stringPrefixes = ["b": .plain, "c": .plain, "r": .hashDelimited, "br": .hashDelimited, "cr": .hashDelimited]
        grammar.charLiterals = true
        grammar.macroBang = true
        return grammar
    }()

    static let ruby: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            BEGIN END alias and begin break case class def defined? do else elsif end ensure false for if in
            module next nil not or redo rescue retry return self super then true undef unless until when while
            yield __FILE__ __LINE__ __method__
            """)
        grammar.builtins = words("""
            require require_relative include extend prepend attr_accessor attr_reader attr_writer private
            protected public raise puts print lambda proc loop catch throw
            """)
        grammar.uppercaseIsType = true
        grammar.lineComments = [LineComment("#")]
        grammar.lineBlockComments = .rubyBeginEnd
        let hashBrace = Interpolation("#{", "}")
        grammar.strings = [
            StringRule("\"", multiline: true, interpolations: [hashBrace]),
            StringRule("'", multiline: true),
            StringRule("`", multiline: true, interpolations: [hashBrace]),
        ]
        grammar.heredoc = .ruby
        grammar.identifierStartExtras = [UInt8(ascii: "@"), UInt8(ascii: "$")]
        grammar.identifierPartExtras = [UInt8(ascii: "@")]
        grammar.identifierSuffixes = [UInt8(ascii: "?"), UInt8(ascii: "!")]
        grammar.rubySymbols = true
        grammar.regexLiterals = true
        return grammar
    }()

    static let php: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            abstract and array as break callable case catch class clone const continue declare default do echo
            else elseif empty enddeclare endfor endforeach endif endswitch endwhile enum eval exit extends final
            finally fn for foreach function global goto if implements include include_once instanceof insteadof
            interface isset list match namespace new or print private protected public readonly require
            require_once return static switch throw trait try unset use var while xor yield true false null self
            parent $this
            """)
        grammar.types = words("int float bool string void mixed never iterable object")
        grammar.caseInsensitive = true
        grammar.uppercaseIsType = true
        grammar.lineComments = [LineComment("//"), LineComment("#")]
        grammar.blockComments = cBlockComment
        grammar.strings = [StringRule("\"", multiline: true), StringRule("'", multiline: true), StringRule("`", multiline: true)]
        grammar.heredoc = .php
        grammar.symbols = [
            (Array("<?php".utf8), .keyword), (Array("<?=".utf8), .keyword), (Array("?>".utf8), .keyword),
        ]
        grammar.identifierStartExtras = [UInt8(ascii: "$")]
        return grammar
    }()

    static let sql: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            select from where insert into values update set delete create table drop alter add column index
            primary key foreign references not null unique default check constraint join inner left right outer
            full cross on using as and or in is like ilike between exists distinct all any some union intersect
            except group by order having limit offset asc desc case when then else end begin commit rollback
            transaction view trigger procedure function return returns declare if while loop with recursive
            cascade restrict grant revoke database schema replace truncate true false fetch first next rows only
            over partition window natural lateral returning conflict do nothing temporary temp materialized
            explain analyze vacuum pragma autoincrement auto_increment collate escape
            """)
        grammar.types = words("""
            int integer smallint bigint tinyint decimal numeric real float double precision char varchar text
            nchar nvarchar blob boolean bool date time timestamp timestamptz datetime interval uuid json jsonb
            serial bigserial bytea clob binary varbinary money
            """)
        grammar.builtins = words("""
            count sum avg min max coalesce nullif cast concat substring substr trim upper lower length round now
            current_date current_time current_timestamp abs ifnull isnull row_number rank dense_rank lag lead
            extract date_part string_agg array_agg group_concat json_agg to_char to_date
            """)
        grammar.caseInsensitive = true
        grammar.lineComments = [LineComment("--")]
        grammar.blockComments = cBlockComment
        grammar.strings = [
            StringRule("'", escape: .doubledDelimiter, multiline: true),
            StringRule("$$", escape: .none, multiline: true),
            StringRule("\"", escape: .doubledDelimiter, kind: nil),
            StringRule("`", escape: .doubledDelimiter, kind: nil),
        ]
        grammar.stringPrefixes = ["E": .plain, "e": .plain, "N": .plain, "n": .plain, "X": .plain, "x": .plain]
        return grammar
    }()

    static let shell: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            if then else elif fi case esac for select while until do done in function time coproc
            """)
        grammar.builtins = words("""
            echo printf read cd pwd pushd popd export local declare typeset readonly unset set shift source alias
            unalias eval exec exit return trap test true false break continue wait kill jobs bg fg umask getopts
            let command builtin type hash ulimit mapfile readarray
            """)
        grammar.lineComments = [LineComment("#", .atWordStart)]
        let commandSubstitutions = [Interpolation("$(", ")"), Interpolation("${", "}")]
        grammar.strings = [
            StringRule("$'", "'"),
            StringRule("\"", multiline: true, interpolations: commandSubstitutions),
            StringRule("'", escape: .none, multiline: true),
            StringRule("`", multiline: true),
        ]
        grammar.heredoc = .shell
        // `$if` and `--in` are not keywords; `$` and `-` make them part of a larger word.
        grammar.identifierStartExtras = [UInt8(ascii: "$"), UInt8(ascii: "-")]
        grammar.identifierPartExtras = [UInt8(ascii: "-")]
        return grammar
    }()

    static let objectivec: LanguageGrammar = {
        var grammar = c
        grammar.keywords.formUnion(words("""
            @interface @implementation @end @protocol @property @synthesize @dynamic @class @selector @encode
            @try @catch @finally @throw @autoreleasepool @optional @required @public @private @protected
            @package @import @synchronized @available self super nil Nil YES NO instancetype nonatomic atomic
            strong weak copy assign retain readonly readwrite nullable nonnull __weak __strong __block in out
            inout oneway bycopy byref IBOutlet IBAction
            """))
        grammar.types.formUnion(words("id BOOL SEL IMP Class NSInteger NSUInteger CGFloat"))
        grammar.uppercaseIsType = true
        grammar.strings = [StringRule("@\"", "\""), doubleQuoted, singleQuoted]
        grammar.identifierStartExtras = [UInt8(ascii: "@")]
        return grammar
    }()

    static let scala: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            abstract case catch class def do else extends false final finally for forSome if implicit import lazy
            match new null object override package private protected return sealed super this throw trait try
            true type val var while with yield given using enum export then end derives inline opaque
            transparent open
            """)
        grammar.uppercaseIsType = true
        grammar.lineComments = slashComments
        grammar.blockComments = nestingBlockComment
        grammar.strings = [
            StringRule("\"\"\"", escape: .none, multiline: true, interpolations: [dollarBrace]),
            StringRule("\"", interpolations: [dollarBrace]), StringRule("`", kind: nil),
        ]
        grammar.stringPrefixes = ["s": .plain, "f": .plain, "raw": .plain]
        grammar.charLiterals = true
        grammar.attributePrefixes = [UInt8(ascii: "@")]
        return grammar
    }()

    static let dart: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            abstract as assert async await break case catch class const continue covariant default deferred
            do else enum export extends extension external factory false final finally for Function if implements
            import in interface is late library mixin new null on operator part required rethrow return sealed
            static super switch this throw true try typedef var when while with yield
            """)
        grammar.types = words("int double num bool void dynamic")
        grammar.uppercaseIsType = true
        grammar.lineComments = slashComments
        grammar.blockComments = nestingBlockComment
        grammar.strings = [
            StringRule("\"\"\"", multiline: true, interpolations: [dollarBrace]),
            StringRule("'''", multiline: true, interpolations: [dollarBrace]),
            StringRule("\"", interpolations: [dollarBrace]), StringRule("'", interpolations: [dollarBrace]),
        ]
        grammar.stringPrefixes = ["r": .raw]
        grammar.attributePrefixes = [UInt8(ascii: "@")]
        return grammar
    }()

    static let lua: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            and break do else elseif end false for function goto if in local nil not or repeat return then true
            until while
            """)
        grammar.builtins = words("""
            print pairs ipairs require type tostring tonumber select error assert pcall xpcall setmetatable
            getmetatable rawget rawset rawequal next unpack table string math io os coroutine self
            """)
        grammar.lineComments = [LineComment("--")]
        grammar.strings = [doubleQuoted, singleQuoted]
        grammar.luaLongBrackets = true
        return grammar
    }()

    static let perl: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            my our local sub if elsif else unless while until for foreach do last next redo return use no package
            require BEGIN END and or not eq ne lt gt le ge cmp
            """)
        grammar.builtins = words("""
            print printf say die warn open close chomp chop push pop shift unshift splice split join keys values
            each defined delete exists ref bless scalar sort reverse map grep wantarray sprintf length substr
            index lc uc lcfirst ucfirst abs int sqrt eval exit
            """)
        grammar.lineComments = [LineComment("#", .notAfterDollar)]
        grammar.lineBlockComments = .perlPOD
        grammar.strings = [
            StringRule("\"", multiline: true), StringRule("'", multiline: true), StringRule("`", multiline: true),
        ]
        grammar.heredoc = .perl
        grammar.identifierStartExtras = [UInt8(ascii: "$"), UInt8(ascii: "@"), UInt8(ascii: "%")]
        grammar.perlQuoteLike = true
        grammar.regexLiterals = true
        return grammar
    }()

    static let r: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            if else repeat while function for in next break TRUE FALSE NULL Inf NaN NA NA_integer_ NA_real_
            NA_character_ NA_complex_
            """)
        grammar.builtins = words("""
            c list library require print paste paste0 cat length sum mean median sd data.frame matrix vector
            apply lapply sapply vapply mapply seq seq_len seq_along rep return invisible stop warning message
            nrow ncol names is.na ifelse which unique sort order head tail str summary
            """)
        grammar.lineComments = [LineComment("#")]
        grammar.strings = [
            StringRule("\"", multiline: true), StringRule("'", multiline: true), StringRule("`", kind: nil),
        ]
        grammar.identifierStartExtras = [UInt8(ascii: ".")]
        grammar.identifierPartExtras = [UInt8(ascii: ".")]
        return grammar
    }()

    static let haskell: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: """
            case class data default deriving do else foreign if import in infix infixl infixr instance let module
            newtype of then type where qualified as hiding forall mdo family
            """)
        grammar.builtins = words("""
            map filter foldr foldl foldl' fmap pure return putStrLn putStr print show read mapM mapM_ sequence
            length head tail zip zipWith concat concatMap not otherwise error undefined id const fst snd
            """)
        grammar.uppercaseIsType = true
        grammar.lineComments = [LineComment("--", .notBeforeOperatorSymbol)]
        grammar.blockComments = [BlockComment("{-", "-}", nests: true)]
        grammar.strings = [doubleQuoted, StringRule("`", kind: nil)]
        grammar.identifierPartExtras = [UInt8(ascii: "'")]
        grammar.charLiterals = true
        return grammar
    }()

    /// Dockerfile instruction arguments other than shell commands (`FROM x AS y`, `ENV`, `COPY`).
    static let dockerfileArguments: LanguageGrammar = {
        var grammar = LanguageGrammar(keywords: "as")
        grammar.caseInsensitive = true
        grammar.lineComments = [LineComment("#", .atLineStart)]
        grammar.strings = [doubleQuoted, StringRule("'", escape: .none)]
        grammar.identifierStartExtras = [UInt8(ascii: "$"), UInt8(ascii: "-")]
        grammar.identifierPartExtras = [UInt8(ascii: "-")]
        return grammar
    }()

    /// All upper/lowercase spellings of an ASCII word: Python's `rb` prefix may be written `Rb`, `bR`…
    private static func caseVariants(of word: String) -> [String] {
        word.reduce([""]) { variants, character in
            variants.flatMap { [$0 + character.lowercased(), $0 + character.uppercased()] }
        }
    }
}
