import Foundation

/// Turns what a person types in a search box into an SQLite FTS5 query that cannot fail.
///
/// Understood: words (all must match), `"quoted phrases"`, `prefix*`, and `-word` or `-"phrase"` to
/// exclude. Everything else is text: each term is written as an FTS5 string, so `NEAR`, `AND`, `(`,
/// `:` or a stray quote typed by a user are searched for, never interpreted. An unbalanced quote
/// runs to the end of the input.
struct FullTextQuery: Equatable, Sendable {
    struct Term: Equatable, Sendable {
        var text: String
        var isPrefix = false
        var isExcluded = false
    }

    let terms: [Term]

    init(_ typed: String) {
        // A NUL is read by SQLite as the end of the query, inside a term's string too, which then
        // never closes ("unterminated string"): it separates words, as a space does.
        let input = typed.unicodeScalars.contains("\0")
            ? String(String.UnicodeScalarView(typed.unicodeScalars.map { $0 == "\0" ? " " : $0 })) : typed
        var terms: [Term] = []
        var index = input.startIndex
        while index < input.endIndex {
            let character = input[index]
            if character.isWhitespace {
                index = input.index(after: index)
                continue
            }
            var excluded = false
            var start = index
            if character == "-", input.index(after: index) < input.endIndex, !input[input.index(after: index)].isWhitespace {
                excluded = true
                start = input.index(after: index)
            }
            if input[start] == "\"" {
                let open = input.index(after: start)
                let close = input[open...].firstIndex(of: "\"") ?? input.endIndex
                let phrase = String(input[open..<close])
                if Self.hasSearchableText(phrase) { terms.append(Term(text: phrase, isExcluded: excluded)) }
                index = close < input.endIndex ? input.index(after: close) : close
                continue
            }
            let end = input[start...].firstIndex(where: { $0.isWhitespace }) ?? input.endIndex
            var word = String(input[start..<end])
            var prefix = false
            while word.hasSuffix("*") {
                prefix = true
                word.removeLast()
            }
            if Self.hasSearchableText(word) { terms.append(Term(text: word, isPrefix: prefix, isExcluded: excluded)) }
            index = end
        }
        self.terms = Self.bounded(terms)
    }

    /// The most terms a query keeps; later ones are not searched for.
    static let maximumTerms = 16
    /// The most prefixes shorter than `shortPrefixLength` a query keeps.
    static let maximumShortPrefixes = 2
    static let shortPrefixLength = 3

    /// `terms` without repeats, and within bounds. Each prefix term costs as much as the words it
    /// stands for, and a prefix of a letter or two stands for a large part of the index: `i*` typed
    /// 12 times took 3.8 s in a debug build at 5,000 snippets, and 96 one-letter prefixes 20 s, for
    /// the results of `i*` alone (fifth bug hunt). A repeated term changes no result; past
    /// `maximumShortPrefixes` short prefixes and `maximumTerms` terms, the rest are left out.
    private static func bounded(_ terms: [Term]) -> [Term] {
        var kept: [Term] = []
        var shortPrefixes = 0
        for term in terms where !kept.contains(term) {
            guard kept.count < maximumTerms else { break }
            if term.isPrefix, term.text.unicodeScalars.count < shortPrefixLength {
                guard shortPrefixes < maximumShortPrefixes else { continue }
                shortPrefixes += 1
            }
            kept.append(term)
        }
        return kept
    }

    /// True when there is nothing to search for (empty input, or only punctuation).
    var isEmpty: Bool { !terms.contains { !$0.isExcluded } }

    /// The FTS5 MATCH expression, or nil when nothing can be searched for. Exclusions need at least one
    /// included term, because FTS5 cannot start with NOT.
    var matchExpression: String? {
        let included = terms.filter { !$0.isExcluded }.map(Self.quoted)
        guard !included.isEmpty else { return nil }
        var expression = included.joined(separator: " AND ")
        for term in terms where term.isExcluded {
            expression = "(\(expression)) NOT \(Self.quoted(term))"
        }
        return expression
    }

    /// Whether the match expression is one phrase (a word, a quoted phrase or a prefix): its hits are
    /// then the phrase's own, which a ranking can walk by themselves (`FullTextRanking.walkSelect`).
    var isOnePhrase: Bool { terms.count == 1 && !terms[0].isExcluded }

    /// The term as an FTS5 string: each `"` doubled. Doubled by Unicode scalar, not by Character: a
    /// quote followed by a combining mark (`"́`) is one Character with it, which neither a Character
    /// comparison nor `replacingOccurrences` takes for a quote, and left single it ended the string.
    private static func quoted(_ term: Term) -> String {
        var text = String.UnicodeScalarView()
        text.append("\"")
        for scalar in term.text.unicodeScalars {
            if scalar == "\"" { text.append(scalar) }
            text.append(scalar)
        }
        text.append("\"")
        return String(text) + (term.isPrefix ? " *" : "")
    }

    /// FTS5's tokenizer drops punctuation; a term made only of it would match nothing, or fail.
    private static func hasSearchableText(_ text: String) -> Bool {
        text.unicodeScalars.contains { CharacterSet.alphanumerics.contains($0) }
    }
}
