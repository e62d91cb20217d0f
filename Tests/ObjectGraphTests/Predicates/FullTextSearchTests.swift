import Foundation
@testable import ObjectGraph
import XCTest
import GRDB

final class FullTextSearchTests: PredicateTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try open(Article.self)
        for (title, body, category) in [
            ("Sorting with descriptors", "How to sort fetched models by date.", "swift"),
            ("Fetching pages", "Use a sort descriptor and a limit to fetch one page.", "swift"),
            ("Café crème", "A recipe with crème fraîche.", "food"),
            ("SQL window functions", "ROW_NUMBER() OVER (PARTITION BY x) for ranking rows.", "sql"),
            ("Sorted sets", "Redis keeps members sorted by score.", "redis"),
        ] {
            context.insert(Article(title: title, body: body, category: category))
        }
        try context.save()
    }

    private func titles(_ query: String, where predicate: Predicate<Article>? = nil) throws -> [String] {
        try context.search(Article.self, for: query, where: predicate, weights: [\.title: 10]).hits.map(\.model.title)
    }

    func testATitleMatchRanksAboveABodyMatch() throws {
        XCTAssertEqual(try titles("descriptor*"), ["Sorting with descriptors", "Fetching pages"])
        XCTAssertEqual(try titles("fetch").first, "Fetching pages")
        XCTAssertEqual(try titles("page"), ["Fetching pages"])
    }

    func testPhrasesPrefixesAndExclusions() throws {
        XCTAssertEqual(try titles("\"sort descriptor\""), ["Fetching pages"])
        XCTAssertEqual(Set(try titles("sort*")), ["Sorting with descriptors", "Fetching pages", "Sorted sets"])
        XCTAssertEqual(Set(try titles("sort* -redis")), ["Sorting with descriptors", "Fetching pages"])
        XCTAssertEqual(try titles("creme"), ["Café crème"], "diacritics are ignored")
        XCTAssertEqual(try titles("CAFÉ"), ["Café crème"], "so is case")
    }

    func testHostileQueriesAreText() throws {
        for query in ["\"", "\"unbalanced", "NEAR(a b)", "a AND", "OR", "(", "*", "-", "title:sql", "^sql", "'; DROP TABLE Article; --", "\u{0}"] {
            XCTAssertNoThrow(try titles(query), query)
        }
        XCTAssertEqual(try titles("ROW_NUMBER()"), ["SQL window functions"])
        XCTAssertEqual(try titles("   "), [])
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Article>()), 5)
    }

    func testSearchCombinesWithAPredicateAndPages() throws {
        XCTAssertEqual(try titles("sort*", where: #Predicate { $0.category == "redis" }), ["Sorted sets"])
        let first = try context.search(Article.self, for: "sort*", limit: 2, offset: 0)
        let second = try context.search(Article.self, for: "sort*", limit: 2, offset: 2)
        XCTAssertEqual(first.totalCount, 3)
        XCTAssertEqual(first.hits.count + second.hits.count, 3)
        XCTAssertTrue(Set(first.hits.map(\.model.title)).isDisjoint(with: second.hits.map(\.model.title)))
    }

    func testExcerptsMarkTheMatchingWords() throws {
        let hit = try XCTUnwrap(context.search(Article.self, for: "redis").hits.first)
        let fragments = try XCTUnwrap(hit.excerpts["body"])
        XCTAssertEqual(fragments.filter(\.isMatch).map(\.text), ["Redis"])
        XCTAssertEqual(fragments.map(\.text).joined(), "Redis keeps members sorted by score.")
    }

    func testTheIndexFollowsInsertsUpdatesAndDeletes() throws {
        let article = try XCTUnwrap(context.fetch(FetchDescriptor<Article>()).first { $0.title == "Sorted sets" })
        article.title = "Ordered collections"
        try context.save()
        XCTAssertEqual(try titles("ordered"), ["Ordered collections"])
        XCTAssertEqual(try titles("sets"), [])
        context.delete(article)
        try context.save()
        XCTAssertEqual(try titles("ordered"), [])
        context.insert(Article(title: "Brand new", body: "fresh text"))
        try context.save()
        XCTAssertEqual(try titles("fresh"), ["Brand new"])
        try context.delete(model: Article.self, where: #Predicate { $0.category == "food" })
        try context.save()
        XCTAssertEqual(try titles("crème"), [])
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { try $0.execute(sql: "INSERT INTO _fts_Article(_fts_Article, rank) VALUES('integrity-check', 1)") }
        try queue.close()
    }

    func testTheIndexIsBuiltForRowsThatExistedBeforeIt() throws {
        let queue = try GRDB.DatabaseQueue(path: storeURL.path)
        try queue.write { try $0.execute(sql: "DROP TABLE _fts_Article") }
        try queue.close()
        context = nil
        container = nil
        try open(Article.self)
        XCTAssertEqual(try titles("redis"), ["Sorted sets"])
    }

    func testQueryParsing() {
        XCTAssertEqual(FullTextQuery("swift \"fetch page\" sql* -core").matchExpression,
                       #"("swift" AND "fetch page" AND "sql" *) NOT "core""#)
        XCTAssertNil(FullTextQuery("-only").matchExpression)
        XCTAssertNil(FullTextQuery("!!! ???").matchExpression)
        XCTAssertEqual(FullTextQuery("say \"hi").matchExpression, #""say" AND "hi""#)
        XCTAssertEqual(FullTextQuery("a\"b").matchExpression, #""a""b""#)
    }
}
