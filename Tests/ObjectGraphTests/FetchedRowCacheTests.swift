import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// Fetched rows are kept, like counts, until a save writes a table or column their query reads:
/// the same fetch again reads no row from SQLite, yet every context sees every committed change.
final class FetchedRowCacheTests: StoreTestCase {
    private func makeContainer(rowCacheBytes: Int? = nil) throws -> ModelContainer {
        var configuration = ModelConfiguration(url: storeURL)
        if let rowCacheBytes { configuration.fetchedRowCacheBytes = rowCacheBytes }
        return try ModelContainer(for: Schema([SnippetItem.self, SnippetFolder.self]), configurations: configuration)
    }

    private static func insert(_ titles: [String], in container: ModelContainer) throws {
        let context = ModelContext(container)
        for title in titles { context.insert(SnippetItem(title: title)) }
        try context.save()
    }

    private func titles(in container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<SnippetItem>(sortBy: [SortDescriptor(\.title)])).map(\.title)
    }

    func testARepeatedFetchReadsNoRowAgain() throws {
        let container = try makeContainer()
        try Self.insert(["a", "b"], in: container)
        XCTAssertEqual(try titles(in: container), ["a", "b"])
        var again: [String] = []
        let selects = try selects(in: container) { again = try titles(in: container) }
        XCTAssertEqual(again, ["a", "b"])
        XCTAssertEqual(selects, [])
    }

    func testEveryKindOfSaveIsSeenByTheNextFetch() throws {
        let container = try makeContainer()
        try Self.insert(["a", "b"], in: container)
        XCTAssertEqual(try titles(in: container), ["a", "b"])

        try Self.insert(["c"], in: container)
        XCTAssertEqual(try titles(in: container), ["a", "b", "c"])

        let writer = ModelContext(container)
        let b = try XCTUnwrap(writer.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == "b" })).first)
        b.title = "z"
        try writer.save()
        XCTAssertEqual(try titles(in: container), ["a", "c", "z"])

        let a = try XCTUnwrap(writer.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == "a" })).first)
        writer.delete(a)
        try writer.save()
        XCTAssertEqual(try titles(in: container), ["c", "z"])

        try writer.delete(model: SnippetItem.self, where: #Predicate { $0.title == "c" })
        try writer.save()
        XCTAssertEqual(try titles(in: container), ["z"])
    }

    func testASaveKeepsTheRowsOfTablesItDidNotWrite() throws {
        let container = try makeContainer()
        try Self.insert(["a"], in: container)
        XCTAssertEqual(try titles(in: container), ["a"])
        let context = ModelContext(container)
        context.insert(SnippetFolder(name: "Work"))
        try context.save()
        let selects = try selects(in: container) { XCTAssertEqual(try titles(in: container), ["a"]) }
        XCTAssertEqual(selects, [])
    }

    func testAWriteFromOutsideTheContainerIsSeen() throws {
        let container = try makeContainer()
        try Self.insert(["a", "b"], in: container)
        XCTAssertEqual(try titles(in: container), ["a", "b"])
        // Another connection, as another process (a command-line tool) would write.
        let outside = try DatabaseQueue(path: storeURL.path)
        try outside.write { db in
            try db.execute(sql: "UPDATE \"SnippetItem\" SET \"title\" = 'y', \"_version\" = \"_version\" + 1 WHERE \"title\" = 'a'")
        }
        XCTAssertEqual(try titles(in: container), ["b", "y"])
    }

    func testRowsReadInsideAnOlderReadTransactionAreNotKept() throws {
        let container = try makeContainer()
        try Self.insert(["a", "b"], in: container)
        let context = ModelContext(container)
        try context.withReadTransaction {
            try onAnotherThread { try Self.insert(["c"], in: container) }
            XCTAssertEqual(try titles(in: container), ["a", "b"])
        }
        XCTAssertEqual(try titles(in: container), ["a", "b", "c"])
    }

    /// Reads inside a read transaction do not look for other processes' writes again: one that
    /// commits meanwhile is not in the transaction's snapshot, and is seen once it ends.
    func testAWriteFromOutsideDuringAReadTransactionIsSeenAfterIt() throws {
        let container = try makeContainer()
        try Self.insert(["a", "b"], in: container)
        XCTAssertEqual(try titles(in: container), ["a", "b"])
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<SnippetItem>()), 2)
        let outside = try DatabaseQueue(path: storeURL.path)
        let context = ModelContext(container)
        try context.withReadTransaction {
            try outside.write { db in try db.execute(sql: "INSERT INTO \"SnippetItem\" (\"title\") VALUES ('c')") }
            XCTAssertEqual(try titles(in: container), ["a", "b"])
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 2)
        }
        XCTAssertEqual(try titles(in: container), ["a", "b", "c"])
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 3)
        // And one that committed before the transaction began is seen inside it.
        try outside.write { db in try db.execute(sql: "INSERT INTO \"SnippetItem\" (\"title\") VALUES ('d')") }
        try context.withReadTransaction {
            XCTAssertEqual(try titles(in: container), ["a", "b", "c", "d"])
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 4)
        }
    }

    func testChangingAFetchedModelLeavesTheKeptRowAsItWas() throws {
        let container = try makeContainer()
        try Self.insert(["a"], in: container)
        let editing = ModelContext(container)
        let model = try XCTUnwrap(editing.fetch(FetchDescriptor<SnippetItem>()).first)
        model.title = "unsaved"
        XCTAssertEqual(try titles(in: container), ["a"])
        editing.rollback()
        XCTAssertEqual(model.title, "a")
    }

    func testRowsHeavierThanASixteenthOfTheBudgetAreReadEachTime() throws {
        let container = try makeContainer(rowCacheBytes: 16 * 1024)
        try Self.insert([String(repeating: "x", count: 2_000)], in: container)
        XCTAssertEqual(try titles(in: container).first?.count, 2_000)
        let selects = try selects(in: container) { XCTAssertEqual(try titles(in: container).first?.count, 2_000) }
        XCTAssertEqual(selects.count, 1)
    }

    func testABudgetOfZeroKeepsNoRows() throws {
        let container = try makeContainer(rowCacheBytes: 0)
        try Self.insert(["a"], in: container)
        XCTAssertEqual(try titles(in: container), ["a"])
        let selects = try selects(in: container) { XCTAssertEqual(try titles(in: container), ["a"]) }
        XCTAssertEqual(selects.count, 1)
    }

    /// A server reads each session by its id: lookups seen once must not push out the kept counts,
    /// which cost far more to make again (a common word's ranking, 0.1 s at 100,000 snippets).
    func testManyOneOffLookupsKeepTheCounts() throws {
        let container = try makeContainer()
        try Self.insert(["a", "b"], in: container)
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<SnippetItem>()), 2)
        for index in 0..<600 {
            let title = "missing \(index)"
            XCTAssertTrue(try ModelContext(container).fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == title })).isEmpty)
        }
        let selects = try selects(in: container) {
            XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<SnippetItem>()), 2)
        }
        XCTAssertEqual(selects, [])
    }
}
