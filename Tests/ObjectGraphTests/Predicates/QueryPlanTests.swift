import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// Equality on a unique attribute or a relationship's key must use an index, not scan the table.
final class QueryPlanTests: PredicateTestCase {
    private func plan<T: PersistentModel>(_ predicate: Predicate<T>) throws -> String {
        let layout = try container.store.layout(for: T.self)
        let query = RowQuery(condition: try PredicateTranslator.translate(predicate, layout: layout, store: container.store))
        let (sql, arguments) = query.sql(selecting: SQLiteStore.selectList(layout), from: layout)
        return try queryPlan(of: sql, arguments: arguments, in: container.store.writer)
    }

    func testAUniqueAttributeLookupReadsOneRowOfAHundredThousand() throws {
        try open(Label.self, SnippetFolder.self)
        try container.store.writer.write { db in
            let insert = try db.makeStatement(sql: #"INSERT INTO "Label" ("name", "uses") VALUES (?, ?)"#)
            for index in 0..<100_000 { try insert.execute(arguments: ["label-\(index)", index]) }
        }
        let wanted = "label-77777"
        let predicate = #Predicate<Label> { $0.name == wanted }
        let detail = try plan(predicate)
        XCTAssertTrue(detail.contains("USING INDEX Label_name_unique (name=?)") || detail.contains("USING COVERING INDEX"), detail)
        XCTAssertFalse(detail.contains("SCAN"), detail)

        let found = try ModelContext(container).fetch(FetchDescriptor(predicate: predicate))
        XCTAssertEqual(found.map(\.uses), [77_777])
    }

    func testACountOfTheOwnersOfOneTagReadsThatTagsJoinRowsOnce() throws {
        try open(SnippetFolder.self)
        let tag = SnippetTag(name: "rare")
        context.insert(tag)
        for index in 0..<300 {
            let item = SnippetItem(title: "item \(index)")
            if index % 30 == 0 { item.tags = [tag] }
            context.insert(item)
        }
        try context.save()
        let predicate = #Predicate<SnippetItem> { $0.tags.contains { $0.name == "rare" } }
        let layout = try container.store.layout(for: SnippetItem.self)
        let condition = try PredicateTranslator.translate(predicate, layout: layout, store: container.store, use: .collectingMatches)
        let countSQL = #"SELECT COUNT(*) FROM "SnippetItem" AS "t0" WHERE "# + condition.sql
        let detail = try queryPlan(of: countSQL, arguments: condition.arguments, in: container.store.writer)
        // The tag's join rows are a list made once for the statement, not a subquery run for every item.
        XCTAssertTrue(detail.contains("LIST SUBQUERY"), detail)
        XCTAssertFalse(detail.contains("CORRELATED"), detail)
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor(predicate: predicate)), 10)
    }

    /// A page's limit is in the SQL, where SQLite's planner sees it; a larger one is bound, so that
    /// limits of every size do not each leave a prepared statement behind. Both fetch the same rows.
    func testAPagesLimitIsWrittenIntoTheSQLALargerOneIsBound() throws {
        try open(Label.self)
        for index in 0..<150 { context.insert(Label(name: "label-\(index)", uses: index)) }
        try context.save()
        let layout = try container.store.layout(for: Label.self)
        for (limit, expected) in [(25, "LIMIT 25 OFFSET ?"), (RowQuery.largestLiteralLimit, "LIMIT 100 OFFSET ?"), (101, "LIMIT ? OFFSET ?")] {
            let (sql, arguments) = RowQuery(orderBy: ["\"t0\".\"uses\" ASC"], limit: limit, offset: 3).sql(selecting: "1", from: layout)
            XCTAssertTrue(sql.hasSuffix(expected), sql)
            XCTAssertEqual(arguments.count, sql.filter { $0 == "?" }.count, sql)
            var descriptor = FetchDescriptor<Label>(sortBy: [SortDescriptor(\.uses)])
            (descriptor.fetchLimit, descriptor.fetchOffset) = (limit, 3)
            XCTAssertEqual(try ModelContext(container).fetch(descriptor).map(\.uses), Array(3..<(3 + limit)), "limit \(limit)")
        }
        // Nor is a negative one, which SQLite reads as no limit.
        XCTAssertTrue(RowQuery(limit: -1).sql(selecting: "1", from: layout).0.hasSuffix("LIMIT ? OFFSET ?"))
    }

    func testARelationshipKeyLookupUsesTheForeignKeyIndex() throws {
        try open(SnippetFolder.self)
        let folder = SnippetFolder(name: "Work")
        context.insert(folder)
        try context.save()
        let folderID = folder.persistentModelID
        let detail = try plan(#Predicate<SnippetItem> { $0.folder?.persistentModelID == folderID })
        XCTAssertTrue(detail.contains("USING INDEX SnippetItem_folder_key (folder=?)"), detail)
    }
}
