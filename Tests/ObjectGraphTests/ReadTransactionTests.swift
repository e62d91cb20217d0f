import Foundation
@testable import ObjectGraph
import XCTest

/// `withReadTransaction`: every read on the thread sees the store as it was when the body began,
/// whatever another thread saves meanwhile; counts kept in memory neither leak newer values in nor
/// keep the transaction's older ones; saving inside throws instead of waiting or crashing.
final class ReadTransactionTests: StoreTestCase {
    private static func insert(_ titles: [String], in container: ModelContainer) throws {
        let context = ModelContext(container)
        for title in titles { context.insert(SnippetItem(title: title)) }
        try context.save()
    }

    func testReadsInsideSeeTheStoreAsItWasWhenTheyBegan() throws {
        let container = try makeContainer(SnippetFolder.self)
        try Self.insert(["a", "b"], in: container)
        let context = ModelContext(container)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 2)

        try context.withReadTransaction {
            try onAnotherThread { try Self.insert(["c"], in: container) }
            XCTAssertEqual(try context.fetch(FetchDescriptor<SnippetItem>()).map(\.title).sorted(), ["a", "b"])
            // The count kept from before followed the save to 3: the transaction does not take it.
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 2)
            XCTAssertEqual(try context.counts(of: \SnippetItem.title), ["a": 1, "b": 1])
            // Another context on this thread reads through the same transaction.
            XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<SnippetItem>()), 2)
        }

        // The counts made inside were not kept: they were older than the store.
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 3)
        XCTAssertEqual(try context.counts(of: \SnippetItem.title), ["a": 1, "b": 1, "c": 1])
    }

    func testCountsKeptBeforeServeATransactionWhenNothingChanged() throws {
        let container = try makeContainer(SnippetFolder.self)
        try Self.insert(["a", "b"], in: container)
        let context = ModelContext(container)
        XCTAssertEqual(try context.counts(of: \SnippetItem.title), ["a": 1, "b": 1])
        let queries = try selects(in: container) {
            try context.withReadTransaction {
                XCTAssertEqual(try context.counts(of: \SnippetItem.title), ["a": 1, "b": 1])
            }
        }
        XCTAssertEqual(queries, [])
    }

    func testSavingInsideThrowsAndKeepsTheChanges() throws {
        for inMemory in [false, true] {
            let container = inMemory
                ? try ModelContainer(for: SnippetItem.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
                : try makeContainer(SnippetFolder.self)
            let context = ModelContext(container)
            context.insert(SnippetItem(title: "pending"))
            XCTAssertThrowsError(try context.withReadTransaction { try context.save() }) { error in
                XCTAssertEqual((error as? SwiftDataError)?.code, .saveNotAllowed, "in memory: \(inMemory)")
            }
            XCTAssertTrue(context.hasChanges)
            try context.save()
            XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<SnippetItem>()), 1)
        }
    }

    func testTransactionsOfTwoStoresNest() throws {
        let first = try makeContainer(SnippetFolder.self)
        let second = try ModelContainer(
            for: SnippetItem.self, configurations: ModelConfiguration(url: folder.appendingPathComponent("second.store")))
        try Self.insert(["a"], in: first)
        try Self.insert(["b", "c"], in: second)
        let (one, two) = (ModelContext(first), ModelContext(second))
        try one.withReadTransaction {
            try two.withReadTransaction {
                try one.withReadTransaction {
                    XCTAssertEqual(try one.fetchCount(FetchDescriptor<SnippetItem>()), 1)
                    XCTAssertEqual(try two.fetchCount(FetchDescriptor<SnippetItem>()), 2)
                }
                XCTAssertEqual(try one.fetch(FetchDescriptor<SnippetItem>()).map(\.title), ["a"])
            }
            XCTAssertEqual(try two.fetch(FetchDescriptor<SnippetItem>()).count, 2)
        }
    }

    func testABackupInsideThrowsInsteadOfWaitingForTheTransactionItRunsIn() throws {
        let container = try makeContainer(SnippetFolder.self)
        try Self.insert(["a"], in: container)
        let destination = folder.appendingPathComponent("copy.store")
        let done = DispatchSemaphore(value: 0)
        let failure = LockedValue<(any Error)?>(nil)
        // On a thread of its own: a backup that waited for the transaction would wait forever.
        DispatchQueue.global().async {
            do {
                try ModelContext(container).withReadTransaction { try container.backup(to: destination) }
            } catch {
                failure.withLock { $0 = error }
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + 20) == .success else {
            return XCTFail("the backup waited for the read transaction it ran in")
        }
        XCTAssertEqual((failure.withLock { $0 } as? SwiftDataError)?.code, .saveNotAllowed)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
        try container.backup(to: destination)
        XCTAssertTrue(FileManager.default.fileExists(atPath: destination.path))
    }
}
