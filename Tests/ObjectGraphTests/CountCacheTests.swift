import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// Counts are kept until the store changes: asked again they run no query, and after any write
/// (this context, another one, or another connection to the file) they are computed afresh.
final class CountCacheTests: StoreTestCase {
    private func saveSnippets(_ titles: [String], folder name: String?, in container: ModelContainer) throws {
        let context = ModelContext(container)
        let folder = name.map { SnippetFolder(name: $0) }
        for title in titles {
            let snippet = SnippetItem(title: title)
            snippet.folder = folder
            context.insert(snippet)
        }
        try context.save()
    }

    func testARepeatedCountRunsNoQuery() throws {
        let container = try makeContainer(SnippetFolder.self)
        try saveSnippets(["a", "b"], folder: "Work", in: container)
        let context = ModelContext(container)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 2)
        XCTAssertEqual(try context.counts(of: \SnippetItem.folder).count, 1)
        let again = try selects(in: container) {
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 2)
            XCTAssertEqual(try ModelContext(container).counts(of: \SnippetItem.folder).values.first, 2)
        }
        XCTAssertEqual(again, [])
    }

    func testCountsFollowSavesOfAnyContext() throws {
        let container = try makeContainer(SnippetFolder.self)
        try saveSnippets(["a"], folder: "Work", in: container)
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.folder == nil })), 0)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[nil], nil)

        try saveSnippets(["b", "c"], folder: nil, in: container)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.folder == nil })), 2)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[nil], 2)

        let writer = ModelContext(container)
        for snippet in try writer.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.folder == nil })) {
            writer.delete(snippet)
        }
        try writer.save()
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[nil], nil)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetItem>()), 1)
    }

    func testCountsFollowWritesFromOutsideTheContainer() throws {
        let container = try makeContainer(SnippetFolder.self)
        try saveSnippets(["a", "b"], folder: nil, in: container)
        let context = ModelContext(container)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 2)
        XCTAssertEqual(try context.counts(of: \SnippetItem.title), ["a": 1, "b": 1])

        // Another connection, as another process (a command-line tool) would write.
        let outside = try DatabaseQueue(path: storeURL.path)
        try outside.write { db in
            try db.execute(sql: "INSERT INTO \"SnippetItem\" (\"title\") VALUES ('c')")
        }
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 3)
        XCTAssertEqual(try context.counts(of: \SnippetItem.title), ["a": 1, "b": 1, "c": 1])
    }
}
