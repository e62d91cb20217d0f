import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// Equality on a unique attribute or a relationship's key must use an index, not scan the table.
final class QueryPlanTests: PredicateTestCase {
    private func plan<T: PersistentModel>(_ predicate: Predicate<T>) throws -> String {
        let layout = try container.store.layout(for: T.self)
        let query = RowQuery(condition: try PredicateTranslator.translate(predicate, layout: layout))
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
