import Foundation
import GRDB
@testable import ObjectGraph
@testable import SnippetBox
import XCTest

/// The list page's newest-first window, filtered by folder, language or favourites, is read from an
/// index in that order: SQLite stops after the page instead of sorting every match. At 100,000
/// snippets a language holds thousands of them, and sorting them was most of the page's query.
final class ListQueryPlanTests: XCTestCase {
    private var folder: URL!
    private var container: ModelContainer!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("plans-\(UUID().uuidString)")
        container = try SnippetStore.openContainer(at: folder.appendingPathComponent("library.store"))
        let context = ModelContext(container)
        let folders = (0..<5).map { Folder(name: "Folder \($0)") }
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

    override func tearDownWithError() throws {
        container = nil
        try? FileManager.default.removeItem(at: folder)
    }

    /// SQLite's plan for the page of snippets the list page fetches for `query`.
    private func plan(of query: ListQuery, folderKey: PersistentIdentifier? = nil) throws -> String {
        let layout = try container.store.layout(for: Snippet.self)
        let rowQuery = RowQuery(
            condition: try PredicateTranslator.translate(query.predicate(folderKey: folderKey), layout: layout),
            orderBy: try RowQuery.orderBy(query.sortDescriptors, layout: layout), limit: query.pageSize, offset: 0)
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
            XCTAssertFalse(detail.contains("TEMP B-TREE"), "\(name): \(detail)")
        }
    }

    func testTheUnfilteredPageAlsoReadsInOrder() throws {
        let detail = try plan(of: ListQuery())
        XCTAssertFalse(detail.contains("TEMP B-TREE"), detail)
    }
}
