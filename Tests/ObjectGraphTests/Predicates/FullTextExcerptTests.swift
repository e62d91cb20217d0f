import Foundation
@testable import ObjectGraph
import XCTest
import GRDB

/// `objectgraph_excerpt`, the excerpts of a search's hits: on a text of up to a window's length it
/// gives exactly what FTS5's `snippet()` gives; on a longer one, a window of that many tokens around
/// the matches; on a column without a match, nothing.
final class FullTextExcerptTests: PredicateTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try open(Article.self)
    }

    private static let words = ["alpha", "beta", "Gamma", "café", "crème", "x1", "naïve", "sort", "sorted", "sorting", "42"]
    private static let separators = [" ", " ", " ", ", ", ". ", " - ", " (", ") ", "\n", ": "]

    /// Each row's `snippet()` and `objectgraph_excerpt` of a column, for a query as a person types it.
    private func bothExcerpts(_ query: String, column: Int) throws -> [(key: Int64, snippet: String?, excerpt: String?)] {
        let match = try XCTUnwrap(FullTextQuery(query).matchExpression)
        return try container.store.read { db in
            try Row.fetchAll(db, sql: """
                SELECT rowid, snippet("_fts_Article", \(column), char(57344), char(57345), '…', 24),
                       \(FullTextExcerpt.functionName)("_fts_Article", \(column), 24)
                FROM "_fts_Article" WHERE "_fts_Article" MATCH ? ORDER BY rowid
                """, arguments: [match]).map { ($0[0], $0[1], $0[2]) }
        }
    }

    private func excerpt(of query: String) throws -> String {
        let hit = try XCTUnwrap(context.search(Article.self, for: query).hits.first)
        return try XCTUnwrap(hit.excerpts["body"]).map { $0.isMatch ? "[\($0.text)]" : $0.text }.joined()
    }

    private func words(_ count: Int, from start: Int = 0) -> [String] {
        (start..<(start + count)).map { "w\($0)" }
    }

    /// Random texts of 1 to 24 tokens (words with diacritics, numbers, punctuation, line breaks) and
    /// queries of a word, a prefix, a phrase, two words and an excluded word: wherever `snippet()`
    /// marks a match in the body, the excerpt is the same text; where it marks none, there is no
    /// excerpt.
    func testAShortTextIsMarkedExactlyAsSnippetMarksIt() throws {
        var generator = SeededGenerator(seed: 7)
        for index in 0..<300 {
            let count = Int.random(in: 1...24, using: &generator)
            var body = Bool.random(using: &generator) ? "" : Self.separators.randomElement(using: &generator)!
            for position in 0..<count {
                body += Self.words.randomElement(using: &generator)!
                if position < count - 1 || Bool.random(using: &generator) { body += Self.separators.randomElement(using: &generator)! }
            }
            context.insert(Article(title: index % 3 == 0 ? "sort alpha" : "note \(index)", body: body))
        }
        try context.save()
        var compared = 0
        for query in ["alpha", "cafe", "creme", "sort*", "\"alpha beta\"", "\"sorted sort\"", "alpha gamma", "beta -x1", "naive 42", "sort"] {
            for row in try bothExcerpts(query, column: 1) {
                if let snippet = row.snippet, snippet.unicodeScalars.contains("\u{E000}") {
                    XCTAssertEqual(row.excerpt, snippet, "row \(row.key), query \(query)")
                    compared += 1
                } else {
                    XCTAssertNil(row.excerpt, "row \(row.key), query \(query): a body without a match has no excerpt")
                }
            }
        }
        XCTAssertGreaterThan(compared, 300)
    }

    func testAColumnWithoutAMatchHasNoExcerpt() throws {
        context.insert(Article(title: "Sorted sets", body: "Redis keeps members sorted by score."))
        try context.save()
        let hit = try XCTUnwrap(context.search(Article.self, for: "redis").hits.first)
        XCTAssertNil(hit.excerpts["title"])
        XCTAssertEqual(hit.excerpts["body"]?.filter(\.isMatch).map(\.text), ["Redis"])
        let rows = try bothExcerpts("redis", column: 0)
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(rows.first?.snippet, "Sorted sets", "snippet() gives the title even without a match")
        XCTAssertNil(rows.first?.excerpt ?? nil)
    }

    func testAMatchInsideALongTextIsShownInAWindowOfTwentyFourTokensAroundIt() throws {
        let body = (words(500) + ["needle"] + words(499, from: 500)).joined(separator: " ")
        context.insert(Article(title: "long", body: body))
        try context.save()
        let excerpt = try excerpt(of: "needle")
        XCTAssertTrue(excerpt.hasPrefix("…"), excerpt)
        XCTAssertTrue(excerpt.hasSuffix("…"), excerpt)
        let tokens = excerpt.dropFirst().dropLast().split(separator: " ")
        XCTAssertEqual(tokens.count, 24, excerpt)
        XCTAssertTrue(tokens.contains("[needle]"), excerpt)
        // Some of the text before the match shows, for its context.
        XCTAssertGreaterThanOrEqual(tokens.firstIndex(of: "[needle]") ?? 0, 3, excerpt)
    }

    func testAMatchNearTheEndShowsTheTextUpToItsEnd() throws {
        let body = (words(995) + ["needle", "a", "b", "c."]).joined(separator: " ")
        context.insert(Article(title: "long", body: body))
        try context.save()
        let excerpt = try excerpt(of: "needle")
        XCTAssertTrue(excerpt.hasPrefix("…"), excerpt)
        XCTAssertTrue(excerpt.hasSuffix("[needle] a b c."), excerpt)
        XCTAssertEqual(excerpt.dropFirst().split(separator: " ").count, 24, excerpt)
    }

    func testAMatchAtTheStartShowsTheTextFromItsStart() throws {
        let body = ("  Needle" + " " + words(100).joined(separator: " "))
        context.insert(Article(title: "long", body: body))
        try context.save()
        let excerpt = try excerpt(of: "needle")
        XCTAssertTrue(excerpt.hasPrefix("  [Needle] w0 w1"), excerpt)
        XCTAssertTrue(excerpt.hasSuffix("w22…"), excerpt)
    }

    /// Of the windows that could be shown, the one with the most different words of the query.
    func testTheWindowHoldsTheMostDifferentWordsOfTheQuery() throws {
        let body = (words(10) + ["alpha"] + words(300, from: 10) + ["alpha", "w", "omega"] + words(300, from: 310)).joined(separator: " ")
        context.insert(Article(title: "long", body: body))
        try context.save()
        let excerpt = try excerpt(of: "alpha omega")
        XCTAssertTrue(excerpt.contains("[alpha] w [omega]"), excerpt)
        XCTAssertFalse(excerpt.contains("w9 "), "not the window of the first alpha alone: \(excerpt)")
    }

    /// A phrase is one mark; so are instances that overlap. A phrase cut by the window's end is
    /// marked up to it.
    func testAPhraseIsMarkedAsOneRun() throws {
        context.insert(Article(title: "t", body: (words(100) + ["sorted", "by", "score"] + words(100, from: 100)).joined(separator: " ")))
        try context.save()
        XCTAssertTrue(try excerpt(of: "\"sorted by score\"").contains(" [sorted by score] "))
        XCTAssertTrue(try excerpt(of: "\"sorted by\" \"by score\"").contains(" [sorted by score] "))
    }
}
