import Foundation
@testable import ObjectGraph
import XCTest

/// `fetch(_:batchSize:)` and `fetchIdentifiers(_:batchSize:)`: the results `fetch` gives, read from
/// the store a batch at a time.
final class BatchedFetchTests: StoreTestCase {
    private func savedNotes(_ count: Int, in container: ModelContainer) throws {
        let context = ModelContext(container)
        for index in 0..<count { context.insert(Note(title: String(format: "note %02d", index), body: index.isMultiple(of: 3) ? "fizz" : "")) }
        try context.save()
    }

    func testItListsWhatFetchListsAndReadsOnlyTheBatchesThatAreRead() throws {
        let container = try makeContainer(Note.self)
        try savedNotes(23, in: container)
        var descriptor = FetchDescriptor<Note>(predicate: #Predicate { $0.body != "fizz" }, sortBy: [SortDescriptor(\.title, order: .reverse)])
        let expected = try ModelContext(container).fetch(descriptor).map(\.title)
        XCTAssertEqual(expected.count, 15)

        let context = ModelContext(container)
        let results = try context.fetch(descriptor, batchSize: 4)
        XCTAssertEqual(results.count, 15)
        XCTAssertEqual(context.registered.count, 0, "counting reads no row")
        XCTAssertEqual(results[5].title, expected[5])
        XCTAssertEqual(context.registered.count, 4, "one batch: positions 4 to 7")
        XCTAssertEqual(results.map(\.title), expected)
        XCTAssertEqual(Array(results.reversed().map(\.title)), expected.reversed())
        XCTAssertEqual(results.last?.title, expected.last)

        descriptor.fetchOffset = 3
        descriptor.fetchLimit = 6
        XCTAssertEqual(try context.fetch(descriptor, batchSize: 4).map(\.title), Array(expected[3..<9]))
        XCTAssertEqual(try context.fetch(descriptor, batchSize: 0).map(\.title), Array(expected[3..<9]), "a batch size below 1 reads one at a time")
        XCTAssertEqual(try context.fetchIdentifiers(descriptor, batchSize: 2).map { $0 }, try context.fetchIdentifiers(descriptor))
    }

    func testTheSameModelsAsFetchAndTheContextsUnsavedChanges() throws {
        let container = try makeContainer(Note.self)
        try savedNotes(6, in: container)
        let context = ModelContext(container)
        let all = FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])
        let fetched = try context.fetch(all)
        XCTAssertTrue(zip(try context.fetch(all, batchSize: 4), fetched).allSatisfy { $0 === $1 }, "the registered instances")

        // Unsaved changes are placed as fetch places them.
        fetched[0].title = "note 99"
        context.delete(fetched[1])
        context.insert(Note(title: "note 03½"))
        XCTAssertEqual(try context.fetch(all, batchSize: 2).map(\.title), try context.fetch(all).map(\.title))
        XCTAssertEqual(try context.fetch(all, batchSize: 2).map(\.title), ["note 02", "note 03", "note 03½", "note 04", "note 05", "note 99"])
    }

    func testARowDeletedElsewhereBeforeItsBatchIsReadComesBackDeleted() throws {
        let container = try makeContainer(Note.self)
        try savedNotes(6, in: container)
        let context = ModelContext(container)
        let all = FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])
        let results = try context.fetch(all, batchSize: 2)
        let identifiers = try context.fetchIdentifiers(all)
        let held = try XCTUnwrap(context.fetch(FetchDescriptor<Note>(predicate: #Predicate { $0.title == "note 05" })).first)

        let other = ModelContext(container)
        try other.delete(model: Note.self, where: #Predicate { $0.title == "note 04" || $0.title == "note 05" })
        try other.save()

        XCTAssertEqual(results.count, 6)
        XCTAssertEqual(results[0].title, "note 00")
        XCTAssertTrue(results[4].isDeleted, "a row gone before its batch was read")
        XCTAssertEqual(results[4].persistentModelID, identifiers[4])
        XCTAssertTrue(results[5] === held, "a model the context holds is its own result, with its values")
        XCTAssertEqual(results[5].title, "note 05")
    }
}
