import Foundation
import GRDB
@testable import ObjectGraph
@testable import SnippetBox
import XCTest

/// The list page's newest-first window, filtered by folder, language or favourites, is read from an
/// index in that order: SQLite stops after the page instead of sorting every match. At 100,000
/// snippets a language holds thousands of them, and sorting them was most of the page's query.
final class ListQueryPlanTests: LibraryStoreTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        let context = ModelContext(container)
        // As many folders as the demo data has: SQLite chooses a folder's index by its share of the table.
        let folders = (0..<12).map { Folder(name: "Folder \($0)") }
        let languages = CodingLanguage.allCases
        for index in 0..<2_000 {
            let snippet = Snippet(title: "Snippet \(index)", code: "print(\(index))", language: languages[index % languages.count])
            snippet.folder = index % 7 == 0 ? nil : folders[index % folders.count]
            snippet.isFavorite = index % 5 == 0
            snippet.updatedAt = Date(timeIntervalSince1970: 1_700_000_000 + Double(index * 37 % 2_000) * 60)
            context.insert(snippet)
        }
        try context.save()
    }

    /// SQLite's plan for the page of snippets the list page fetches for `query`.
    private func plan(of query: ListQuery, folderKey: PersistentIdentifier? = nil) throws -> String {
        let layout = try container.store.layout(for: Snippet.self)
        let rowQuery = RowQuery(
            condition: try PredicateTranslator.translate(query.predicate(folderKey: folderKey), layout: layout, store: container.store),
            orderBy: try RowQuery.orderBy(query.sortDescriptors, layout: layout, store: container.store), limit: query.pageSize, offset: 0)
        let (sql, arguments) = rowQuery.sql(selecting: "\"t0\".\"_pk\"", from: layout)
        return try container.store.writer.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(arguments))
                .map { $0["detail"] as String }.joined(separator: "\n")
        }
    }

    func testEachFilterReadsTheNewestFromAnIndexWithoutSorting() throws {
        var byLanguage = ListQuery()
        byLanguage.language = .swift
        var favorites = ListQuery()
        favorites.favoritesOnly = true
        var byFolder = ListQuery()
        byFolder.folder = "any"
        let folderKey = try XCTUnwrap(try ModelContext(container).fetch(FetchDescriptor<Folder>()).first).persistentModelID
        for (name, query, key) in [("language", byLanguage, nil), ("favourites", favorites, nil), ("folder", byFolder, folderKey)] {
            let detail = try plan(of: query, folderKey: key)
            XCTAssertTrue(detail.contains("USING INDEX") || detail.contains("USING COVERING INDEX"), "\(name): \(detail)")
            // Ties in the update date may be put in key order ("RIGHT PART OF ORDER BY"); the matches
            // as a whole must not be sorted.
            XCTAssertFalse(detail.contains("USE TEMP B-TREE FOR ORDER BY"), "\(name): \(detail)")
        }
    }

    func testTheUnfilteredPageAlsoReadsInOrder() throws {
        let detail = try plan(of: ListQuery())
        XCTAssertFalse(detail.contains("TEMP B-TREE"), detail)
    }

    /// Titles sort by their stored key, which an index holds in order, in either direction.
    func testATitleOrderIsReadFromAnIndexWithoutSorting() throws {
        for ascending in [true, false] {
            var byTitle = ListQuery()
            (byTitle.sort, byTitle.ascending) = (.title, ascending)
            let detail = try plan(of: byTitle)
            XCTAssertTrue(detail.contains("titleSortKey"), detail)
            XCTAssertFalse(detail.contains("TEMP B-TREE"), detail)
        }
    }

    /// The store keeps counts by their SQL, so a query must make the same SQL on every request: the
    /// tags of "all of these tags" are tested in the URL's order, not in a `Set`'s, which can differ
    /// from one request to the next (it did on the server, and every count was made again).
    func testAllTagsAreTestedInTheURLsOrder() throws {
        let layout = try container.store.layout(for: Snippet.self)
        let (first, second) = (UUID(), UUID())
        for order in [[first, second], [second, first], [first, second, first]] {
            var query = ListQuery()
            query.tagMode = .all
            query.tags = order.map(\.uuidString)
            let arguments = try PredicateTranslator.translate(query.predicate(folderKey: nil), layout: layout, store: container.store).arguments
            let tested = arguments.compactMap { UUID.fromDatabaseValue($0) }
            XCTAssertEqual(tested, [order[0], order[1]], "\(order)")
        }
    }

    /// The plans of every statement the list's total and its counts per folder and per language run
    /// for `query`: the keys of each part of its filter, and each snippet's folder and language.
    private func countPlans(of query: ListQuery) throws -> [(sql: String, plan: String)] {
        let predicate = query.predicate(folderKey: nil)
        let context = ModelContext(container)
        let statements = try container.store.sqlLog.statements {
            _ = try context.fetchCount(FetchDescriptor(predicate: predicate))
            _ = try context.counts(of: \Snippet.folder, where: predicate)
            _ = try context.counts(of: \Snippet.language, where: predicate)
        }.filter { $0.hasPrefix("SELECT") }
        XCTAssertFalse(statements.isEmpty)
        return try statements.map { sql in
            let placeholders = sql.filter { $0 == "?" }.count
            let plan = try container.store.writer.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql,
                                 arguments: StatementArguments(Array(repeating: 1_700_050_000.0, count: placeholders)))
                    .map { $0["detail"] as String }.joined(separator: "\n")
            }
            return (sql, plan)
        }
    }

    /// Whether a plan reads the snippets from an index that holds every column it needs.
    private func readsNoRow(_ plan: String) -> Bool {
        plan.split(separator: "\n").filter { $0.contains(" t0") }.allSatisfy { $0.contains("USING COVERING INDEX") }
    }

    /// A creation-date range's counts are read from an index that holds the creation date, without
    /// reading each snippet's row: at 100,000 snippets, looking up the folder of every snippet created
    /// in a year took 45 ms a count, against 6 ms from an index that holds it.
    func testTheCountsOfACreationDateRangeReadNoRow() throws {
        var createdIn = ListQuery()
        createdIn.createdFrom = Date(timeIntervalSince1970: 1_700_000_000)
        createdIn.createdTo = Date(timeIntervalSince1970: 1_700_100_000)
        let plans = try countPlans(of: createdIn)
        XCTAssertTrue(plans.contains { $0.sql.contains("createdAt") }, "\(plans)")
        for (sql, plan) in plans {
            XCTAssertTrue(readsNoRow(plan), "\(sql): \(plan)")
        }
    }

    /// A date range with both bounds is one part of the list's predicate, whose matching snippets the
    /// store reads and keeps as one set, one stretch of the date index; as two parts, "created since
    /// 2021" alone was most of the library (a first visit of 2021 at 100,000 snippets: 26-31 ms).
    func testADateRangeIsOnePartOfThePredicate() {
        let from = Date(timeIntervalSince1970: 1_700_000_000), to = Date(timeIntervalSince1970: 1_700_100_000)
        for (createdFrom, createdTo) in [(from, to), (from, nil), (nil, to)] as [(Date?, Date?)] {
            var query = ListQuery()
            (query.createdFrom, query.createdTo) = (createdFrom, createdTo)
            (query.updatedFrom, query.updatedTo) = (createdFrom, createdTo)
            // The library (outside the trash), the creation dates, the update dates.
            XCTAssertEqual(Predicates.conjuncts(of: query.predicate(folderKey: nil)).count, 3, "\(String(describing: createdFrom)) \(String(describing: createdTo))")
        }
    }

    /// "Has an image" is tested in an index too. The image's content type is the last column of a
    /// snippet's row, after its code: reading it from the row walks the code's overflow pages, 0.2 s
    /// a count at 100,000 snippets, against 6 ms from the folder or language index that holds it.
    func testTheCountsOfSnippetsWithAnImageReadNoRow() throws {
        var withImage = ListQuery()
        withImage.withImageOnly = true
        let plans = try countPlans(of: withImage)
        XCTAssertTrue(plans.contains { $0.sql.contains("imageContentType") }, "\(plans)")
        for (sql, plan) in plans {
            XCTAssertTrue(readsNoRow(plan), "\(sql): \(plan)")
        }
    }

    /// "Has an image" with a folder or a language: the page is read from the index of that filter,
    /// which holds the image's content type, not from the date index with a look-up of each
    /// snippet's row. With the page's size bound as a parameter SQLite could not tell a page of
    /// 25 from every match, and chose the date index: at 100,000 snippets the first visit of a
    /// folder's snippets with an image took 22 ms for page 1 and 137 ms for page 4 (2 ms this way).
    func testAFilterWithAnImageReadsItsPageFromThatFiltersIndex() throws {
        let folderKey = try XCTUnwrap(try ModelContext(container).fetch(FetchDescriptor<Folder>()).first).persistentModelID
        var inFolder = ListQuery()
        inFolder.folder = "any"
        var inLanguage = ListQuery()
        inLanguage.language = .swift
        for (name, var query, key) in [("folder", inFolder, folderKey), ("language", inLanguage, nil)] {
            query.withImageOnly = true
            let detail = try plan(of: query, folderKey: key)
            let snippetAccess = detail.split(separator: "\n").first { $0.contains("SEARCH t0") || $0.contains("SCAN t0") }
            XCTAssertTrue(snippetAccess?.contains("USING COVERING INDEX") == true, "\(name): \(detail)")
        }
    }

    /// Filters combined are tested in the index that finds the first of them, without reading a row
    /// from the table for each candidate: only the page's keys come out of the window's query.
    func testCombinedFiltersAreTestedAndSortedInAnIndex() throws {
        let folderKey = try XCTUnwrap(try ModelContext(container).fetch(FetchDescriptor<Folder>()).first).persistentModelID
        var folderAndLanguageByCreation = ListQuery()
        folderAndLanguageByCreation.folder = "any"
        folderAndLanguageByCreation.language = .swift
        folderAndLanguageByCreation.sort = .created
        var everyFilter = ListQuery()
        everyFilter.folder = "any"
        everyFilter.language = .python
        everyFilter.favoritesOnly = true
        everyFilter.tags = [UUID().uuidString]
        for (name, query) in [("folder and language by creation", folderAndLanguageByCreation), ("every filter", everyFilter)] {
            let detail = try plan(of: query, folderKey: folderKey)
            let snippetAccess = detail.split(separator: "\n").first { $0.contains("SEARCH t0") || $0.contains("SCAN t0") }
            XCTAssertTrue(snippetAccess?.contains("USING COVERING INDEX") == true, "\(name): \(detail)")
        }
    }
}
