import Foundation
@testable import ObjectGraph
import Observation
import XCTest

@Model final class Errand {
    var title: String
    init(title: String) { self.title = title }
}

final class HistoryObserverTests: StoreTestCase {
    private func container() throws -> ModelContainer { try makeContainer(Chore.self, Errand.self) }

    private func save(_ model: any PersistentModel, author: String? = nil, in container: ModelContainer) throws {
        let context = ModelContext(container)
        context.author = author
        context.insert(model)
        try context.save()
    }

    private func newestToken(in container: ModelContainer) throws -> DefaultHistoryToken? {
        try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last?.token
    }

    func testSavesCountWhenTheyChangeAnObservedModelByAnObservedAuthor() throws {
        let container = try container()
        try save(Chore(title: "before"), in: container)
        let chores = try HistoryObserver(observedModels: [Chore.self], modelContainer: container)
        let byImporter = try HistoryObserver(authors: ["importer"], modelContainer: container)
        let anything = try HistoryObserver(modelContainer: container)
        XCTAssertEqual([chores, byImporter, anything].map(\.eventCounter), [0, 0, 0], "what was saved before counts for nothing")

        let told = LockedValue(0)
        withObservationTracking { _ = chores.eventCounter } onChange: { told.withLock { $0 += 1 } }
        try save(Errand(title: "post"), author: "server", in: container)
        XCTAssertEqual([chores, byImporter, anything].map(\.eventCounter), [0, 0, 1])
        XCTAssertEqual(told.withLock { $0 }, 0)
        try save(Chore(title: "dishes"), author: "importer", in: container)
        XCTAssertEqual([chores, byImporter, anything].map(\.eventCounter), [1, 1, 2])
        XCTAssertEqual(told.withLock { $0 }, 1, "observers of the counter are told")

        let newest = try XCTUnwrap(newestToken(in: container))
        for observer in [chores, byImporter, anything] {
            XCTAssertEqual(observer.historyTokens[newest.storeIdentifier] as? DefaultHistoryToken, newest,
                           "the token moves past every transaction read, relevant or not")
        }
    }

    /// A token given starts the count there: the transactions after it are read at the next change.
    func testAGivenTokenStartsTheCountAfterIt() throws {
        let container = try container()
        try save(Errand(title: "first"), in: container)
        let start = try XCTUnwrap(newestToken(in: container))
        try save(Chore(title: "missed while away"), in: container)
        let observer = try HistoryObserver(historyTokens: [start.storeIdentifier: start], observedModels: [Chore.self], modelContainer: container)
        // It counted only when a later save made it read the history, which may not come for long.
        XCTAssertEqual(observer.eventCounter, 1, "the chore saved after the token, while away, counts at once")
        try save(Errand(title: "second"), in: container)
        XCTAssertEqual(observer.eventCounter, 1, "read once")
        try save(Chore(title: "next"), in: container)
        XCTAssertEqual(observer.eventCounter, 2)

        let caughtUp = try HistoryObserver(historyTokens: observer.historyTokens, observedModels: [Chore.self], modelContainer: container)
        XCTAssertEqual(caughtUp.eventCounter, 0, "nothing after the token")
    }

    /// Another process's save is found by the periodic look.
    func testAnotherProcesssSaveIsCounted() throws {
        let container = try container()
        let observer = try HistoryObserver(observedModels: [Chore.self], modelContainer: container)
        observer.otherProcessesCheckInterval = 0.05
        let told = expectation(description: "the counter grows")
        withObservationTracking { _ = observer.eventCounter } onChange: { told.fulfill() }
        try save(Chore(title: "from the other process"), in: try makeContainer(Chore.self, Errand.self))
        wait(for: [told], timeout: 10)
        // Observers are told as the counter is about to change (Observation's `willSet`): the timer's
        // thread may not have changed it yet.
        let deadline = Date().addingTimeInterval(5)
        while observer.eventCounter == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(observer.eventCounter, 1)
    }

    /// History deleted before the observer read it counts once (what it changed is unknown), and
    /// the count goes on from there.
    func testHistoryDeletedBeforeItWasReadCountsOnce() throws {
        let container = try container()
        let observer = try HistoryObserver(observedModels: [Chore.self], modelContainer: container)
        observer.otherProcessesCheckInterval = 0
        // Saved by another container of the file, which this one is not told of at once.
        let other = try makeContainer(Chore.self, Errand.self)
        try save(Chore(title: "gone"), in: other)
        try ModelContext(other).deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        try save(Errand(title: "unobserved"), in: container)
        XCTAssertEqual(observer.eventCounter, 1)
        try save(Errand(title: "unobserved again"), in: container)
        XCTAssertEqual(observer.eventCounter, 1)
        try save(Chore(title: "observed"), in: container)
        XCTAssertEqual(observer.eventCounter, 2)
    }
}
