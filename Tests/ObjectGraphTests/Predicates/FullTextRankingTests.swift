import Foundation
@testable import ObjectGraph
import XCTest
import GRDB

/// ObjectGraph ranks hits with its own FTS5 function, which takes document lengths from memory when
/// it has them (`FullTextRanking`, `DocumentLengths`): its scores must be SQLite's `bm25()`'s, with
/// the lengths kept or not, and the kept lengths must follow every save.
final class FullTextRankingTests: PredicateTestCase {
    private let weights: [PartialKeyPath<Article>: Double] = [\.title: 10]
    private let queries = ["word", "sort*", "\"sort descriptor\"", "word -filler", "word filler", "filler sort*"]

    override func setUpWithError() throws {
        try super.setUpWithError()
        try open(Article.self)
        // Bodies from a few tokens to several hundred (a length over 127 takes two bytes in the index).
        for index in 0..<120 {
            let body = String(repeating: "word ", count: 1 + index % 9) + String(repeating: "filler ", count: (index * 37) % 400)
                + (index % 5 == 0 ? "use a sort descriptor" : "")
            context.insert(Article(title: index % 7 == 0 ? "sorting words \(index)" : "note \(index)", body: body))
        }
        try context.save()
    }

    /// The scores SQLite's own bm25 gives the hits of `query`, best first.
    private func bm25(_ query: String) throws -> [(key: Int64, score: Double)] {
        let match = try XCTUnwrap(FullTextQuery(query).matchExpression)
        return try container.store.read { db in
            try Row.fetchAll(db, sql: """
                SELECT rowid, bm25("_fts_Article", 10, 1) FROM "_fts_Article" WHERE "_fts_Article" MATCH ? ORDER BY 2, 1
                """, arguments: [match]).map { ($0[0], $0[1]) }
        }
    }

    private func searched(_ query: String) throws -> [(key: Int64, score: Double)] {
        try ModelContext(container).search(Article.self, for: query, weights: weights, limit: 1_000).hits.map { hit in
            (try XCTUnwrap(hit.model.persistentModelID.id.primaryKey), hit.score)
        }
    }

    private func assertScoresAreBM25s(_ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        for query in queries {
            let found = try searched(query), expected = try bm25(query).prefix(1_000)
            XCTAssertFalse(expected.isEmpty, "\(label) \(query): no hits", file: file, line: line)
            XCTAssertEqual(found.count, expected.count, "\(label) \(query): hits", file: file, line: line)
            let firstDifference = zip(found, expected).enumerated().first { $0.element.0.key != $0.element.1.key }?.offset
            XCTAssertNil(firstDifference, "\(label) \(query): order", file: file, line: line)
            for (mine, sqlite) in zip(found, expected) {
                XCTAssertEqual(mine.score, sqlite.score, accuracy: abs(sqlite.score) * 1e-12, "\(label) \(query)", file: file, line: line)
            }
        }
    }

    private var keptLengths: DocumentLengths? {
        container.store.aggregateCache.keptValue(sql: #"SELECT "id", "sz" FROM "_fts_Article_docsize""#, arguments: []) ?? nil
    }

    private func lengthsInTheIndex() throws -> [Int64: Int32] {
        let index = try XCTUnwrap(container.store.fullTextIndexes["Article"])
        return try container.store.read { db in
            Dictionary(uniqueKeysWithValues: try index.documentLengths(in: db).map { ($0.key, $0.length) })
        }
    }

    /// The kept lengths, every key up to the largest in the index and one past it.
    private func assertKeptLengthsAreTheIndexs(_ label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let kept = try XCTUnwrap(keptLengths, "\(label): lengths kept", file: file, line: line)
        let inIndex = try lengthsInTheIndex()
        for key in 0...(inIndex.keys.max() ?? 0) + 1 {
            XCTAssertEqual(kept.length(of: key), inIndex[key] ?? -1, "\(label): key \(key)", file: file, line: line)
        }
        XCTAssertEqual(kept.documentCount, inIndex.count, "\(label): documents", file: file, line: line)
    }

    func testScoresAreSQLitesBM25WithLengthsKeptOrNot() throws {
        XCTAssertNil(keptLengths, "a few hits read no lengths")
        try assertScoresAreBM25s("lengths from the index")
        try context.prepareSearch(of: Article.self)
        try assertKeptLengthsAreTheIndexs("prepared")
        try assertScoresAreBM25s("lengths kept")
    }

    /// The kept lengths are what the ranking reads: wrong ones give other scores. (So the test above
    /// compares the kept lengths' scores, not the index's twice.)
    func testTheRankingReadsTheLengthsItIsGiven() throws {
        let store = container.store
        let index = try XCTUnwrap(store.fullTextIndexes["Article"])
        let match = try XCTUnwrap(FullTextQuery("word").matchExpression)
        let sql = "SELECT rowid, \(FullTextRanking.functionName)(\"_fts_Article\", ?, NULL, 10, 1) FROM \"_fts_Article\" WHERE \"_fts_Article\" MATCH ? ORDER BY 1"
        let scores = { (lengths: DocumentLengths?) in
            try store.read { db in
                try FullTextRanking.fetchAll(db, sql: sql, arguments: [match.databaseValue], lengths: lengths).map { $0[1] as Double }
            }
        }
        let read = try XCTUnwrap(try store.read { db in try DocumentLengths.read(index, in: db) })
        let keys = Array(try lengthsInTheIndex().keys)
        let allLong = try XCTUnwrap(read.replacing(keys, with: keys.map { ($0, 100_000) }))
        let fromIndex = try scores(nil), fromKept = try scores(read), fromWrong = try scores(allLong)
        XCTAssertEqual(fromKept.count, 120)
        XCTAssertEqual(fromKept, fromIndex)
        XCTAssertTrue(zip(fromWrong, fromIndex).allSatisfy { $0 > $1 }, "longer documents score worse (closer to 0)")
        // The statement is cached: a run without lengths after one with them reads the index again.
        XCTAssertEqual(try scores(nil), fromIndex)
    }

    func testKeptLengthsFollowSaves() throws {
        try context.prepareSearch(of: Article.self)
        let articles = try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)]))
        /// How many times `body` reads every document's length (FTS5's own lookups of one are not counted).
        func fullReads(_ body: () throws -> Void) throws -> Int {
            try selects(in: container, body).filter { $0 == #"SELECT "id", "sz" FROM "_fts_Article_docsize""# }.count
        }
        XCTAssertEqual(try fullReads {
            articles[0].body += String(repeating: " sort", count: 300)
            articles[1].title = "word"
            try context.save()
        }, 0, "a few rows' lengths read again, not every row's")
        try assertKeptLengthsAreTheIndexs("after an edit")
        XCTAssertEqual(try fullReads {
            context.insert(Article(title: "word word", body: String(repeating: "filler ", count: 500)))
            context.delete(articles[2])
            try context.save()
        }, 0)
        try assertKeptLengthsAreTheIndexs("after an insert and a delete")
        XCTAssertEqual(try fullReads { try assertScoresAreBM25s("after saves") }, 0)
        articles[3].category = "moved"
        try context.save()
        try assertKeptLengthsAreTheIndexs("after a save that leaves the index alone")

        // A bulk save (more rows than counts follow) drops them; rankings of a few hits then look them up in the index.
        for index in 0...ChangedRows.limit { context.insert(Article(title: "bulk \(index)", body: "word")) }
        try context.save()
        XCTAssertNil(keptLengths)
        try assertScoresAreBM25s("after a bulk save")
    }

    /// Without `prepareSearch`, a ranking of enough hits has the lengths read in the background,
    /// once, for the rankings after it; a ranking of a few hits does not.
    func testARankingOfManyHitsHasTheLengthsReadInTheBackground() throws {
        let search = { (query: String) in
            _ = try ModelContext(self.container).search(Article.self, for: query, weights: self.weights, limit: 10)
            self.container.store.backgroundPreparation.waitUntilIdle()
        }
        try search("word")
        XCTAssertNil(keptLengths, "120 hits")
        for index in 0..<ModelContext.hitsWorthReadingLengths {
            context.insert(Article(title: "many \(index)", body: String(repeating: "word ", count: 1 + index % 13)))
        }
        try context.save()
        try search("word")
        try assertKeptLengthsAreTheIndexs("read after a ranking")
        try assertScoresAreBM25s("read after a ranking")
    }

    /// The hits of `query` among the rows that meet `condition` (SQL over `Article`), by SQLite's
    /// bm25, best first; the first `limit` of them (all for -1).
    private func bm25(_ query: String, where condition: String, limit: Int = -1) throws -> [(key: Int64, score: Double)] {
        let match = try XCTUnwrap(FullTextQuery(query).matchExpression)
        return try container.store.read { db in
            try Row.fetchAll(db, sql: """
                SELECT "_fts_Article".rowid, bm25("_fts_Article", 10, 1) FROM "_fts_Article" JOIN Article ON Article."_pk" = "_fts_Article".rowid
                WHERE "_fts_Article" MATCH ? AND \(condition) ORDER BY 2, 1 LIMIT ?
                """, arguments: [match, limit]).map { ($0[0], $0[1]) }
        }
    }

    /// The hits of `query` among the rows in the category "trash", by SQLite's bm25, best first.
    private func bm25AmongTrash(_ query: String) throws -> [(key: Int64, score: Double)] {
        try bm25(query, where: "Article.category = 'trash'")
    }

    private func assertFound(
        _ found: [(key: Int64, score: Double)], _ expected: [(key: Int64, score: Double)], _ label: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(found.count, expected.count, label, file: file, line: line)
        XCTAssertNil(zip(found, expected).enumerated().first { $0.element.0.key != $0.element.1.key }?.offset, "\(label): order", file: file, line: line)
        for (mine, sqlite) in zip(found, expected) {
            XCTAssertEqual(mine.score, sqlite.score, accuracy: abs(sqlite.score) * 1e-12, label, file: file, line: line)
        }
    }

    /// A search in a context of its own, the statements it ran and its hits' keys and scores.
    private func search(
        _ query: String, where predicate: Predicate<Article>, limit: Int, offset: Int = 0
    ) throws -> (statements: [String], found: [(key: Int64, score: Double)]) {
        var found: [(key: Int64, score: Double)] = []
        let statements = try selects(in: container) {
            found = try ModelContext(container).search(Article.self, for: query, where: predicate, weights: weights, limit: limit, offset: offset)
                .hits.map { (try XCTUnwrap($0.model.persistentModelID.id.primaryKey), $0.score) }
        }
        return (statements, found)
    }

    /// A search of the rows in "trash", its statements and its hits' keys and scores.
    private func searchTrash(for query: String) throws -> (statements: [String], found: [(key: Int64, score: Double)]) {
        try search(query, where: #Predicate<Article> { $0.category == "trash" }, limit: ModelContext.cachedSearchRanks)
    }

    /// The statements among `statements` that rank with ObjectGraph's function.
    private func rankings(_ statements: [String]) -> [String] {
        statements.filter { $0.contains("\(FullTextRanking.functionName)(") }
    }

    /// A condition whose hits are known from kept key sets (the word's, and the condition's) and few
    /// ranks them by key, with the query's statistics computed once: the same hits, order and scores
    /// as SQLite's bm25 over the rows that meet the condition, which is what ranking the joined rows gave.
    func testAFewHitsKnownFromKeptSetsAreRankedByKey() throws {
        try insertKeptAndTrashedNotes()
        let trash = #Predicate<Article> { $0.category == "trash" }
        try context.prepareCounts(of: \.category, where: trash)
        let layout = try container.store.layout(for: Article.self)
        let index = try XCTUnwrap(container.store.fullTextIndexes["Article"])
        for query in ["word", "word filler", "wor* -filler"] {
            let expected = try bm25AmongTrash(query)
            _ = try ModelContext(container).fullTextKeys(layout, index: index, match: try XCTUnwrap(FullTextQuery(query).matchExpression))
            let (statements, found) = try searchTrash(for: query)
            let rankings = self.rankings(statements)
            XCTAssertEqual(rankings.count, 1, query)
            XCTAssertTrue(rankings.allSatisfy { $0.contains("rowid IN") && !$0.contains("JOIN") }, "\(query): \(rankings)")
            XCTAssertTrue(expected.count > 20 && expected.count <= ModelContext.cachedSearchRanks, "\(query): \(expected.count) hits")
            assertFound(found, expected, query)
        }
    }

    /// A first search of a word, with the rows that meet its condition known from kept key sets,
    /// ranks the index alone once, scoring only the hits that meet the condition and reading every
    /// hit as the word's set: no walk of the hits of its own, no count, no rows joined. A match of
    /// one phrase is walked by the ranking function, which leaves the other hits out itself; one of
    /// several leaves them out in the WHERE, as a quarter of the rows meet the condition.
    func testAFirstSearchScoresOnlyTheHitsThatMeetItsCondition() throws {
        try insertKeptAndTrashedNotes()
        let trash = #Predicate<Article> { $0.category == "trash" }
        try context.prepareCounts(of: \.category, where: trash)
        let index = try XCTUnwrap(container.store.fullTextIndexes["Article"])
        for query in ["word", "word filler", "wor* -filler"] {
            let expected = try bm25AmongTrash(query)
            let (statements, found) = try searchTrash(for: query)
            let rankings = self.rankings(statements)
            XCTAssertEqual(rankings.count, 1, query)
            XCTAssertTrue(rankings.allSatisfy { !$0.contains("rowid IN") && !$0.contains("JOIN") }, "\(query): \(rankings)")
            XCTAssertFalse(statements.contains { $0.hasPrefix(#"SELECT rowid FROM "_fts_Article" WHERE"#) }, "\(query): \(statements)")
            XCTAssertFalse(statements.contains { $0.contains(#"COUNT(*) FROM "_fts_Article""#) }, "no count of the hits: \(query): \(statements)")
            if FullTextQuery(query).isOnePhrase {
                XCTAssertTrue(rankings.allSatisfy { $0.hasSuffix("LIMIT 1") && !$0.contains(FullTextRanking.hitFilter) }, "walked: \(rankings)")
            } else {
                XCTAssertTrue(rankings.allSatisfy { $0.contains(FullTextRanking.hitFilter) }, "a quarter of the rows: left out in the WHERE")
            }
            assertFound(found, expected, query)
            let match = try XCTUnwrap(FullTextQuery(query).matchExpression)
            XCTAssertEqual(ModelContext(container).keptFullTextKeys(index, match: match)?.sortedKeys, try wordsHits(match), query)
        }
    }

    /// A search narrowed from one whose ranks are kept (a filter added to it) ranks nothing: its hits
    /// in order are the kept ranks that meet it, with SQLite's bm25 scores, through a save too; a page
    /// past what the kept ranks hold, or a search that is not narrower, ranks on its own.
    func testANarrowerSearchTakesItsRanksFromTheBroaderOnesKept() throws {
        try insertKeptAndTrashedNotes()
        // More hits than the ranks kept of the broad search.
        for index in 0..<(2 * ModelContext.cachedSearchRanks) {
            context.insert(Article(title: "more \(index)", body: String(repeating: "word ", count: 1 + index % 5) + "filler", category: "kept"))
        }
        for (position, article) in try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)])).enumerated() {
            article.rating = position % 3
        }
        try context.save()
        let notTrashed = #Predicate<Article> { $0.category != "trash" }
        let ratedTwo = #Predicate<Article> { $0.category != "trash" && $0.rating == 2 }
        let trashedAndRatedTwo = #Predicate<Article> { $0.category == "trash" && $0.rating == 2 }
        for predicate in [notTrashed, ratedTwo, trashedAndRatedTwo] { try context.prepareCounts(of: \.category, where: predicate) }
        func search(_ predicate: Predicate<Article>, limit: Int, offset: Int = 0) throws -> (statements: [String], found: [(key: Int64, score: Double)]) {
            try self.search("word", where: predicate, limit: limit, offset: offset)
        }
        func expected(_ condition: String) throws -> [(key: Int64, score: Double)] {
            try bm25("word", where: condition)
        }

        let broad = try search(notTrashed, limit: 20)
        XCTAssertEqual(rankings(broad.statements).count, 1)
        assertFound(broad.found, try expected("Article.category != 'trash'").prefix(20).map { $0 }, "broad")
        let narrower = try expected("Article.category != 'trash' AND Article.rating = 2")
        XCTAssertGreaterThan(narrower.count, 40)
        let firstPage = try search(ratedTwo, limit: 20)
        XCTAssertEqual(rankings(firstPage.statements), [], "ranked from the broader search's ranks")
        assertFound(firstPage.found, Array(narrower.prefix(20)), "narrowed")
        let secondPage = try search(ratedTwo, limit: 20, offset: 20)
        assertFound(secondPage.found, Array(narrower.dropFirst(20).prefix(20)), "narrowed, page 2")

        // A save that leaves the index alone keeps the broader ranks, and what met its condition.
        let moved = try XCTUnwrap(context.fetch(FetchDescriptor<Article>(predicate: #Predicate { $0.category != "trash" && $0.rating == 2 }))
            .first { $0.persistentModelID.id.primaryKey == narrower[1].key })
        moved.rating = 0
        try context.save()
        let afterSave = try search(ratedTwo, limit: 20)
        XCTAssertEqual(rankings(afterSave.statements), [], "still from the broader ranks")
        assertFound(afterSave.found, Array(try expected("Article.category != 'trash' AND Article.rating = 2").prefix(20)), "after a save")

        // Past the kept ranks: they hold the best of the broad search, a third of them rated 2.
        let pastThemAt = ModelContext.cachedSearchRanks / 3 - 10
        XCTAssertGreaterThan(narrower.count, pastThemAt + 50)
        let pastThem = try search(ratedTwo, limit: 50, offset: pastThemAt)
        XCTAssertEqual(rankings(pastThem.statements).count, 1, "ranked on its own")
        assertFound(pastThem.found, Array(try expected("Article.category != 'trash' AND Article.rating = 2").dropFirst(pastThemAt).prefix(50)), "past the kept ranks")
        // Trashed notes never met the broad search's condition.
        let notNarrower = try search(trashedAndRatedTwo, limit: 20)
        XCTAssertEqual(rankings(notNarrower.statements).count, 1, "ranked on its own")
        assertFound(notNarrower.found, Array(try expected("Article.category = 'trash' AND Article.rating = 2").prefix(20)), "not narrower")
    }

    /// After a save that changes the index (which moves every score), a common word ranked before
    /// ranks again from its kept features: no walk of its entries, and the hits, order and scores of
    /// SQLite's bm25, for its first condition and another; the features follow the save's inserts,
    /// edits and deletes. A match of several phrases has none, and ranks as before.
    func testACommonWordRankedBeforeRanksAgainFromItsFeaturesAfterASave() throws {
        for index in 0..<(ModelContext.hitsWorthReadingLengths + 200) {
            context.insert(Article(
                title: "more \(index)", body: String(repeating: "word ", count: 1 + index % 6) + String(repeating: "filler ", count: index % 13),
                category: index % 4 == 0 ? "trash" : "kept"))
        }
        try context.save()
        let notTrashed = #Predicate<Article> { $0.category != "trash" }
        let trashed = #Predicate<Article> { $0.category == "trash" }
        for predicate in [notTrashed, trashed] { try context.prepareCounts(of: \.category, where: predicate) }
        func search(_ query: String, _ predicate: Predicate<Article>) throws -> (statements: [String], found: [(key: Int64, score: Double)]) {
            try self.search(query, where: predicate, limit: 30)
        }
        func expected(_ query: String, _ condition: String) throws -> [(key: Int64, score: Double)] {
            try bm25(query, where: condition, limit: 30)
        }

        let first = try search("word", notTrashed)
        XCTAssertEqual(rankings(first.statements).count, 1)
        assertFound(first.found, try expected("word", "Article.category != 'trash'"), "first")
        _ = try search("word filler", notTrashed)

        // Text edited (more instances of the word, and none), a new hit, a hit deleted: every score moves.
        let best = try XCTUnwrap(context.fetch(FetchDescriptor<Article>()).first { $0.persistentModelID.id.primaryKey == first.found[0].key })
        best.body = "filler"
        let second = try XCTUnwrap(context.fetch(FetchDescriptor<Article>()).first { $0.persistentModelID.id.primaryKey == first.found[5].key })
        second.body = "word word word word word word word"
        context.insert(Article(title: "word", body: "word", category: "kept"))
        let deleted = try XCTUnwrap(context.fetch(FetchDescriptor<Article>()).first { $0.persistentModelID.id.primaryKey == first.found[9].key })
        context.delete(deleted)
        try context.save()

        let again = try search("word", notTrashed)
        XCTAssertEqual(rankings(again.statements), [], "ranked from the kept features")
        assertFound(again.found, try expected("word", "Article.category != 'trash'"), "after the save")
        XCTAssertNotEqual(again.found.map(\.key), first.found.map(\.key))
        let otherCondition = try search("word", trashed)
        XCTAssertEqual(rankings(otherCondition.statements), [], "another condition, from the same features")
        assertFound(otherCondition.found, try expected("word", "Article.category = 'trash'"), "trash")
        let severalPhrases = try search("word filler", notTrashed)
        XCTAssertEqual(rankings(severalPhrases.statements).count, 1, "several phrases: ranked again")
        assertFound(severalPhrases.found, try expected("word filler", "Article.category != 'trash'"), "two words")
    }

    /// Two hits whose bm25 terms are equal in exact arithmetic but one bit apart in doubles, until the
    /// inverse document frequency scales them (a word in most documents has the least, 1e-6) and they
    /// tie: bm25 ranks them by key, and so must a ranking from the kept features, which compared the
    /// terms before scaling them and put the later key first.
    func testHitsThatTieOnceScaledRankByKeyFromTheFeaturesToo() throws {
        try context.delete(model: Article.self)
        try context.save()
        let filler = { (count: Int) in Array(repeating: "f", count: count).joined(separator: " ") }
        // At an average length of 12 tokens (title weight 10): 11 tokens with a weighted frequency of 10,
        // and 14 with 12, whose terms are 22 / 11.125 and 26.4 / 13.35.
        context.insert(Article(title: "word a", body: filler(9), category: "kept"))
        context.insert(Article(title: "word b c", body: "word word " + filler(9), category: "kept"))
        context.insert(Article(title: "g", body: filler(10), category: "kept"))
        for _ in 0..<ModelContext.hitsWorthReadingLengths {
            context.insert(Article(title: "h", body: "word " + filler(10), category: "kept"))
        }
        try context.save()
        let notTrashed = #Predicate<Article> { $0.category != "trash" }
        try context.prepareCounts(of: \.category, where: notTrashed)

        let first = try search("word", where: notTrashed, limit: 30)
        XCTAssertEqual(rankings(first.statements).count, 1)
        let expectedFirst = try bm25("word", where: "Article.category != 'trash'", limit: 30)
        XCTAssertEqual(expectedFirst.first?.score, expectedFirst.dropFirst().first?.score, "the two tie in SQLite's bm25")
        assertFound(first.found, expectedFirst, "first")

        // A save that changes the index, and leaves the average length at 12.
        context.insert(Article(title: "h", body: "word " + filler(10), category: "kept"))
        try context.save()
        let again = try search("word", where: notTrashed, limit: 30)
        XCTAssertEqual(rankings(again.statements), [], "ranked from the kept features")
        assertFound(again.found, try bm25("word", where: "Article.category != 'trash'", limit: 30), "after the save")
    }

    /// 1,200 notes holding "word", a quarter of them in the category "trash".
    private func insertKeptAndTrashedNotes() throws {
        for index in 0..<1_200 {
            context.insert(Article(
                title: "kept \(index)" + (index % 3 == 0 ? " word" : ""),
                body: String(repeating: "word ", count: 1 + index % 7) + String(repeating: "filler ", count: index % 11),
                category: index % 4 == 0 ? "trash" : "kept"))
        }
        try context.save()
    }

    /// A first search whose condition most rows meet ranks the index alone, which scores every hit of
    /// the word: that ranking reads the word's hits as a set too (for the total, the counts and the
    /// number of hits in the index), with no walk of them of its own and no count.
    func testAFirstSearchReadsTheWordsHitsWithItsRanking() throws {
        try insertKeptAndTrashedNotes()
        let notTrashed = #Predicate<Article> { $0.category != "trash" }
        try context.prepareCounts(of: \.category, where: notTrashed)
        var found: (titles: [String], total: Int) = ([], 0)
        let statements = try selects(in: container) {
            let results = try ModelContext(container).search(
                Article.self, for: "word", where: notTrashed, weights: weights, limit: ModelContext.cachedSearchRanks)
            found = (results.hits.map(\.model.title), results.totalCount)
        }
        XCTAssertFalse(statements.contains { $0.hasPrefix(#"SELECT rowid FROM "_fts_Article" WHERE"#) }, "no walk of the word's hits: \(statements)")
        XCTAssertFalse(statements.contains { $0.contains(#"COUNT(*) FROM "_fts_Article""#) }, "\(statements)")
        let rankings = self.rankings(statements)
        XCTAssertEqual(rankings.count, 1)
        XCTAssertFalse(rankings.first?.contains("JOIN") ?? true, "the index ranked alone")
        XCTAssertFalse(rankings.first?.contains(FullTextRanking.hitFilter) ?? true, "most rows: the others scored +∞, not filtered")
        // One word: the function walks its hits from one call, not a call per hit.
        XCTAssertTrue(rankings.first?.hasSuffix("LIMIT 1") ?? false, "walked by the function: \(rankings)")
        let expected = try titlesOfWordOutsideTheTrashByBM25()
        XCTAssertEqual(found.titles, Array(expected.prefix(ModelContext.cachedSearchRanks)))
        XCTAssertEqual(found.total, expected.count)
        let index = try XCTUnwrap(container.store.fullTextIndexes["Article"])
        let keptHits = try XCTUnwrap(ModelContext(container).keptFullTextKeys(index, match: #""word""#), "the word's hits kept")
        XCTAssertEqual(keptHits.sortedKeys, try wordsHits(#""word""#))
    }

    /// With the text lengths kept, a first search takes the number of rows from them (their documents)
    /// instead of counting the table, and ranks as before; lengths replaced through a save count their
    /// documents as the index holds them.
    func testASearchWithKeptLengthsDoesNotCountTheTable() throws {
        try insertKeptAndTrashedNotes()
        try context.prepareSearch(of: Article.self)
        try assertKeptLengthsAreTheIndexs("prepared")
        // Kept key sets for the condition, as a page's counts leave them: the first search ranks the
        // word's hits among them (`prefixRanked`), which chooses where to leave the others out.
        let notTrashed = #Predicate<Article> { $0.category != "trash" }
        try context.prepareCounts(of: \.category, where: notTrashed)
        var titles: [String] = []
        let statements = try selects(in: container) {
            titles = try ModelContext(container).search(
                Article.self, for: "word", where: notTrashed, weights: weights, limit: 20).hits.map(\.model.title)
        }
        XCTAssertEqual(rankings(statements).count, 1, "one ranking of the word's hits: \(statements)")
        XCTAssertFalse(statements.contains { $0.hasPrefix(#"SELECT COUNT(*) FROM "Article""#) }, "\(statements)")
        XCTAssertEqual(titles, Array(try titlesOfWordOutsideTheTrashByBM25().prefix(20)))
        // Lengths kept through a save that adds a document, removes two and rewrites one.
        let articles = try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)]))
        context.delete(articles[0])
        context.delete(articles[2])
        articles[1].body = "other words entirely"
        context.insert(Article(title: "new word", body: "word", category: "kept"))
        try context.save()
        _ = try ModelContext(container).search(Article.self, for: "word", weights: weights, limit: 20)
        try assertKeptLengthsAreTheIndexs("after a save")
        XCTAssertEqual(keptLengths?.documentCount, 120 + 1_200 - 1, "one document fewer")
    }

    /// The titles of the articles outside the trash that hold "word", in SQLite's bm25 order (ties by key).
    private func titlesOfWordOutsideTheTrashByBM25() throws -> [String] {
        try container.store.read { db in
            try String.fetchAll(db, sql: """
                SELECT Article.title FROM "_fts_Article" JOIN Article ON Article."_pk" = "_fts_Article".rowid
                WHERE "_fts_Article" MATCH '"word"' AND Article.category != 'trash' ORDER BY bm25("_fts_Article", 10, 1), "_fts_Article".rowid
                """)
        }
    }

    /// The keys of the hits of a match expression, as FTS5 walks them.
    private func wordsHits(_ match: String) throws -> [Int64] {
        try container.store.read { db in
            try Int64.fetchAll(db, sql: #"SELECT rowid FROM "_fts_Article" WHERE "_fts_Article" MATCH ? ORDER BY rowid"#, arguments: [match])
        }
    }

    /// The ranking collects the key of every hit, whether the hit filter in the WHERE or the ranking
    /// function itself does: the same keys as a walk of the hits, with lengths given or not, keeping
    /// every hit or some. Told which hits to keep, it ranks those as SQLite's bm25 does, and no other,
    /// and keeps the best itself: the same hits, order (ties by key) and scores as `ORDER BY bm25, rowid`.
    func testARankingCollectsEveryHitAndKeepsTheBestOfThoseItIsTold() throws {
        try insertKeptAndTrashedNotes()
        let index = try XCTUnwrap(container.store.fullTextIndexes["Article"])
        let lengths = try container.store.read { db in try DocumentLengths.read(index, in: db) }
        let rank = #"objectgraph_bm25("_fts_Article", ?, NULL, 10, 1)"#
        let thirds = KeySet((0..<1_400).filter { $0 % 3 == 1 })
        for query in queries {
            let match = try XCTUnwrap(FullTextQuery(query).matchExpression)
            let walked = try wordsHits(match)
            let everyHit = try bm25(query)
            if query == "word" {
                XCTAssertTrue(zip(everyHit, everyHit.dropFirst()).contains { $0.score == $1.score }, "\(query): ties, broken by key")
            }
            let expectedAmongThirds = everyHit.filter { thirds.contains($0.key) }
            XCTAssertFalse(expectedAmongThirds.isEmpty, query)
            for count in [40, everyHit.count + 5, 0] {
                for given in [lengths, nil] {
                    for (scoringOnly, filteredInWhere) in [(nil, false), (thirds, false), (nil, true), (thirds, true)] {
                        // Row by row, and walked by the function from its first call where the match is of one
                        // phrase (of several, it walks nothing and the statement row by row runs instead).
                        for walking in [false, true] {
                            let sql = FullTextRanking.bestSelect(
                                rank: rank,
                                fromAndWhere: #"FROM "_fts_Article" WHERE "_fts_Article" MATCH ?2"# + (filteredInWhere ? " AND \(FullTextRanking.hitFilter)" : ""))
                            let walkingSQL = walking ? FullTextRanking.walkSelect(rank: rank, fromAndWhere: #"FROM "_fts_Article" WHERE "_fts_Article" MATCH ?2"#) : nil
                            let (best, hits, features) = try container.store.read { db in
                                try FullTextRanking.best(
                                    count, db, sql: sql, walkingSQL: walkingSQL, arguments: [match.databaseValue], lengths: given,
                                    scoringOnly: scoringOnly, collectingHits: true, filteredInWhere: filteredInWhere, collectingFeatures: true)
                            }
                            // Every hit's features, for one phrase, when every hit reaches the ranking function:
                            // from them, every hit's score is bm25's.
                            let onePhrase = !query.contains(" ") || query.hasPrefix("\"")
                            XCTAssertEqual(features?.keys, onePhrase && !filteredInWhere ? walked : nil, query)
                            if let features {
                                let collection = try XCTUnwrap(container.store.read { db in try FullTextRanking.collection(db, index: index) })
                                let scored = features.best(everyHit.count + 1, among: nil, averageLength: collection.averageLength, rows: collection.rows)
                                XCTAssertEqual(scored.map(\.key), everyHit.map(\.key), query)
                                for (mine, sqlite) in zip(scored, everyHit) {
                                    XCTAssertEqual(mine.score, sqlite.score, accuracy: abs(sqlite.score) * 1e-12, query)
                                }
                            }
                            let label = "\(query), best \(count) of \(scoringOnly == nil ? "all" : "a third"), in WHERE: \(filteredInWhere), walking: \(walking)"
                            XCTAssertEqual(hits.sortedKeys, walked, label)
                            XCTAssertEqual(hits.count, walked.count, label)
                            let wanted = (scoringOnly == nil ? everyHit : expectedAmongThirds).prefix(count)
                            XCTAssertEqual(best.map(\.key), wanted.map(\.key), label)
                            for (mine, sqlite) in zip(best, wanted) {
                                XCTAssertEqual(mine.score, sqlite.score, accuracy: abs(sqlite.score) * 1e-12, label)
                            }
                        }
                    }
                }
            }
        }
    }

    /// A ranking walked by the function (`FullTextRanking.walkSelect`) without collecting the hits
    /// still counts them for the inverse document frequency it leaves out of its scores: the scores
    /// are bm25's. A match with no hit gives no rank.
    func testAWalkedRankingThatDoesNotCollectTheHitsScoresAsBM25() throws {
        let rank = #"objectgraph_bm25("_fts_Article", ?, NULL, 10, 1)"#
        let matchAlone = #"FROM "_fts_Article" WHERE "_fts_Article" MATCH ?2"#
        for query in ["word", "sort*", "\"sort descriptor\"", "nowhere"] {
            let match = try XCTUnwrap(FullTextQuery(query).matchExpression)
            let expected = try bm25(query)
            let (best, hits, _) = try container.store.read { db in
                try FullTextRanking.best(
                    30, db, sql: FullTextRanking.bestSelect(rank: rank, fromAndWhere: matchAlone),
                    walkingSQL: FullTextRanking.walkSelect(rank: rank, fromAndWhere: matchAlone), arguments: [match.databaseValue],
                    lengths: nil, scoringOnly: nil, collectingHits: false, filteredInWhere: false)
            }
            XCTAssertEqual(hits.count, 0, query)
            XCTAssertEqual(best.map(\.key), expected.prefix(30).map(\.key), query)
            for (mine, sqlite) in zip(best, expected) {
                XCTAssertEqual(mine.score, sqlite.score, accuracy: abs(sqlite.score) * 1e-12, query)
            }
            XCTAssertEqual(best.isEmpty, query == "nowhere", query)
        }
    }

    /// The heap that keeps a ranking's best hits keeps exactly the first of them in `ORDER BY score,
    /// key`, whatever order they come in, with many ties.
    func testTheBestRanksAreTheFirstOfTheSortedHits() {
        var generator = SystemRandomNumberGenerator()
        for capacity in [0, 1, 2, 7, 50, 500] {
            let offered = (0..<400).map { key in (score: -Double(Int.random(in: 0..<30, using: &generator)) / 4, key: Int64(key)) }.shuffled()
            var best = FullTextRanking.BestRanks(capacity: capacity)
            for hit in offered { best.offer(score: hit.score, key: hit.key) }
            let expected = offered.sorted { ($0.score, $0.key) < ($1.score, $1.key) }.prefix(capacity)
            XCTAssertEqual(best.sorted().map(\.key), expected.map(\.key), "capacity \(capacity)")
            XCTAssertEqual(best.sorted().map(\.score), expected.map(\.score), "capacity \(capacity)")
        }
    }

    /// Scores offered before a scaling that merges some of them (values one or two bits apart), kept
    /// near misses and all: the best once scaled are those of every pair offered, scaled and sorted.
    func testTheBestRanksOnceScaledAreThoseOfEveryHitScaled() {
        var generator = SeededGenerator(seed: 0x5CA1ED)
        let factors = [1e-6, 0.7, 3.3, 1e-6 * 0.9]
        for capacity in [0, 1, 2, 7, 50] {
            for factor in factors {
                // Clusters of scores a few bits apart, each value offered several times under other keys.
                let offered = (0..<400).map { key -> (score: Double, key: Int64) in
                    var score = -1.9775280898876404 - Double(Int.random(in: 0..<6, using: &generator)) / 8
                    for _ in 0..<Int.random(in: 0..<3, using: &generator) { score = score.nextUp }
                    return (score, Int64(key))
                }.shuffled(using: &generator)
                var best = FullTextRanking.BestRanks(capacity: capacity)
                best.keepNearMisses()
                for hit in offered { best.offer(score: hit.score, key: hit.key) }
                let expected = offered.map { (score: $0.score * factor, key: $0.key) }
                    .sorted { ($0.score, $0.key) < ($1.score, $1.key) }.prefix(capacity)
                let found = best.sorted(scaledBy: factor)
                XCTAssertEqual(found.map(\.key), expected.map(\.key), "capacity \(capacity), factor \(factor)")
                XCTAssertEqual(found.map(\.score), expected.map(\.score), "capacity \(capacity), factor \(factor)")
            }
        }
        // The case the test stands for: two values one bit apart that one product merges.
        let (better, worse) = ((-1.9775280898876404).nextDown, -1.9775280898876404)
        XCTAssertEqual(better * 1e-6, worse * 1e-6)
        var best = FullTextRanking.BestRanks(capacity: 1)
        best.keepNearMisses()
        best.offer(score: better, key: 2)
        best.offer(score: worse, key: 1)
        XCTAssertEqual(best.sorted(scaledBy: 1e-6).map(\.key), [1], "a tie once scaled ranks by key")
    }

    func testAnotherProcesssWriteDropsTheLengths() throws {
        try context.prepareSearch(of: Article.self)
        XCTAssertNotNil(keptLengths)
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO \"_fts_Article\"(\"_fts_Article\", rowid, title, body) SELECT 'delete', \"_pk\", title, body FROM Article WHERE title = 'note 1'")
            try db.execute(sql: "UPDATE Article SET body = body || ' word word word word' WHERE title = 'note 1'")
            try db.execute(sql: "INSERT INTO \"_fts_Article\"(rowid, title, body) SELECT \"_pk\", title, body FROM Article WHERE title = 'note 1'")
        }
        try queue.close()
        try assertScoresAreBM25s("after another process's write")
    }

    func testADocumentsLengthIsTheSumOfItsColumnsVarints() {
        func total(_ bytes: [UInt8], columns: Int) -> Int32? {
            bytes.withUnsafeBytes { FullTextIndex.totalLength(encoded: $0, columns: columns) }
        }
        // 3; 300 (two bytes: 0x82 0x2C); 0.
        XCTAssertEqual(total([0x03, 0x82, 0x2C, 0x00], columns: 3), 303)
        XCTAssertEqual(total([0x03, 0x82], columns: 2), nil, "cut short")
        XCTAssertEqual(total([0x81, 0x80, 0x00], columns: 1), 16_384)
    }
}
