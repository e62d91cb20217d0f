import Foundation
import ObjectGraph
import Observation
import XCTest

@Model final class Chore {
    var title: String
    var room: String?
    var done: Bool = false
    /// Not stored: a predicate on it cannot be fetched.
    @Transient var scratch: String = ""
    init(title: String, room: String? = nil) {
        self.title = title
        self.room = room
    }
}

/// How many times observation reported a change of what `read` reads: each report re-arms the
/// tracking, as a view that renders again would.
private final class ChangeCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var changes: Int { lock.withLock { count } }

    func track(_ read: @escaping @Sendable () -> Void) {
        withObservationTracking(read) { [self] in
            lock.withLock { count += 1 }
        }
    }
}

final class ResultsObserverTests: StoreTestCase {
    private func titles(_ models: [Chore]) -> [String] { models.map(\.title) }

    private func openChores(in context: ModelContext) throws -> ResultsObserver<Chore, Never> {
        try ResultsObserver<Chore, Never>(
            filterBy: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.title)], modelContext: context)
    }

    func testResultsFollowTheContextsPendingChangesAndItsSaves() throws {
        let context = ModelContext(try makeContainer(Chore.self))
        let dishes = Chore(title: "dishes")
        context.insert(dishes)
        try context.save()
        let observer = try openChores(in: context)
        XCTAssertEqual(titles(observer.results), ["dishes"])

        let counter = ChangeCounter()
        counter.track { _ = observer.results }
        let laundry = Chore(title: "laundry")
        context.insert(laundry)
        XCTAssertEqual(counter.changes, 1, "an insert tells observers")
        XCTAssertEqual(titles(observer.results), ["dishes", "laundry"], "a pending insert is fetched, as the descriptor includes pending changes")

        counter.track { _ = observer.results }
        dishes.done = true
        XCTAssertEqual(counter.changes, 2, "an edit of a saved model tells observers")
        XCTAssertEqual(titles(observer.results), ["laundry"])

        counter.track { _ = observer.results }
        laundry.title = "ironing"
        XCTAssertEqual(counter.changes, 3, "an edit of a new model tells observers")
        XCTAssertEqual(titles(observer.results), ["ironing"])

        counter.track { _ = observer.results }
        context.rollback()
        XCTAssertEqual(counter.changes, 4, "a rollback tells observers")
        XCTAssertEqual(titles(observer.results), ["dishes"])

        counter.track { _ = observer.results }
        context.delete(dishes)
        XCTAssertEqual(counter.changes, 5, "a delete tells observers")
        XCTAssertEqual(titles(observer.results), [])
        try context.save()
        XCTAssertEqual(titles(observer.results), [])
    }

    /// A save through another context of the same store (a background import) changes the results;
    /// a save to another store does not.
    func testResultsFollowSavesOfOtherContextsOfTheStore() throws {
        let container = try makeContainer(Chore.self)
        let observer = try openChores(in: ModelContext(container))
        XCTAssertEqual(titles(observer.results), [])

        let counter = ChangeCounter()
        counter.track { _ = observer.results }
        let elsewhere = try ModelContainer(
            for: Schema([Chore.self]), configurations: ModelConfiguration(url: folder.appendingPathComponent("other.store")))
        let unrelated = ModelContext(elsewhere)
        unrelated.insert(Chore(title: "elsewhere"))
        try unrelated.save()
        XCTAssertEqual(counter.changes, 0, "another store's save is not this store's")

        let importer = ModelContext(container)
        importer.insert(Chore(title: "windows"))
        importer.insert(Chore(title: "bins"))
        XCTAssertEqual(counter.changes, 0, "another context's pending changes are its own")
        try importer.save()
        XCTAssertEqual(counter.changes, 1)
        XCTAssertEqual(titles(observer.results), ["bins", "windows"])

        // Changes heard of before the results are read again are one fetch, one report.
        counter.track { _ = observer.results }
        importer.insert(Chore(title: "attic"))
        try importer.save()
        importer.insert(Chore(title: "cellar"))
        try importer.save()
        XCTAssertEqual(counter.changes, 2)
        let reads = selects(in: container) {
            XCTAssertEqual(titles(observer.results), ["attic", "bins", "cellar", "windows"])
            XCTAssertEqual(titles(observer.results), ["attic", "bins", "cellar", "windows"])
        }
        XCTAssertEqual(reads.filter { $0.contains("\"Chore\"") }.count, 1, "one fetch for two saves and two reads: \(reads)")
    }

    /// Another process's save (here another container of the same file, which is another connection
    /// as another process's is) is found by the observer's periodic look, and observers are told.
    func testAnotherProcesssSaveIsNoticedByThePeriodicLook() throws {
        let observer = try openChores(in: ModelContext(try makeContainer(Chore.self)))
        observer.otherProcessesCheckInterval = 0.05
        XCTAssertEqual(titles(observer.results), [])
        let told = expectation(description: "observers told of another process's save")
        withObservationTracking { _ = observer.results } onChange: { told.fulfill() }

        let otherProcess = ModelContext(try makeContainer(Chore.self))
        otherProcess.insert(Chore(title: "garden"))
        try otherProcess.save()
        wait(for: [told], timeout: 10)
        XCTAssertEqual(titles(observer.results), ["garden"])
    }

    /// With the look stopped, another process's save is fetched after `refresh()`.
    func testRefreshFetchesAnotherProcesssSaveWithTheLookStopped() throws {
        let observer = try openChores(in: ModelContext(try makeContainer(Chore.self)))
        observer.otherProcessesCheckInterval = 0
        XCTAssertEqual(titles(observer.results), [])
        let otherProcess = ModelContext(try makeContainer(Chore.self))
        otherProcess.insert(Chore(title: "garden"))
        try otherProcess.save()
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(titles(observer.results), [], "nothing told it, so it kept what it had")
        observer.refresh()
        XCTAssertEqual(titles(observer.results), ["garden"])
    }

    func testChangingTheCriteriaFetchesAgain() throws {
        let context = ModelContext(try makeContainer(Chore.self))
        for (title, done) in [("dishes", true), ("laundry", false), ("bins", false)] {
            let chore = Chore(title: title)
            chore.done = done
            context.insert(chore)
        }
        try context.save()
        let observer = try openChores(in: context)
        XCTAssertEqual(titles(observer.results), ["bins", "laundry"])

        let counter = ChangeCounter()
        counter.track { _ = observer.results }
        observer.sortBy = [SortDescriptor(\.title, order: .reverse)]
        XCTAssertEqual(counter.changes, 1)
        XCTAssertEqual(titles(observer.results), ["laundry", "bins"])
        observer.filterBy = nil
        XCTAssertEqual(titles(observer.results), ["laundry", "dishes", "bins"])
        var descriptor = observer.fetchDescriptor
        descriptor.fetchLimit = 1
        observer.fetchDescriptor = descriptor
        XCTAssertEqual(titles(observer.results), ["laundry"])
    }

    func testSectionsGroupTheResultsByTheirValueInOrder() throws {
        let context = ModelContext(try makeContainer(Chore.self))
        for (title, room) in [("oven", "kitchen"), ("bath", "bathroom"), ("dishes", "kitchen"), ("post", nil), ("mirror", "bathroom")] {
            context.insert(Chore(title: title, room: room))
        }
        try context.save()
        let observer = try ResultsObserver<Chore, String>(
            sortBy: [SortDescriptor(\.title)], sectionBy: \.room, modelContext: context)
        let sections = try XCTUnwrap(observer.sections)
        XCTAssertEqual(sections.map(\.title), ["", "bathroom", "kitchen"], "nil first, as it sorts first, titled \"\"")
        XCTAssertEqual(sections.map { $0.map(\.title) }, [["post"], ["bath", "mirror"], ["dishes", "oven"]])
        XCTAssertEqual(sections.map(\.id), sections.map(\.title))
        XCTAssertEqual(titles(observer.results), ["post", "bath", "mirror", "dishes", "oven"], "the section's value sorts first")

        context.insert(Chore(title: "fridge", room: "kitchen"))
        XCTAssertEqual(observer.sections?.last.map { $0.map(\.title) }, ["dishes", "fridge", "oven"])
        XCTAssertNil(try openChores(in: context).sections, "no sections without sectionBy")
    }

    /// The first fetch's error is the initializer's; a later one is kept in `fetchError`, with the
    /// results as they were.
    func testFetchErrorsAreReported() throws {
        let context = ModelContext(try makeContainer(Chore.self))
        context.insert(Chore(title: "dishes"))
        try context.save()
        XCTAssertThrowsError(try ResultsObserver<Chore, Never>(
            filterBy: #Predicate { $0.scratch == "dishes" }, modelContext: context)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedPredicate, "\(error)")
        }
        let observer = try openChores(in: context)
        XCTAssertNil(observer.fetchError)
        observer.filterBy = #Predicate { $0.scratch == "dishes" }
        XCTAssertEqual(titles(observer.results), ["dishes"], "the results before the failed fetch")
        XCTAssertEqual((observer.fetchError as? SwiftDataError)?.code, .unsupportedPredicate)
        observer.filterBy = nil
        XCTAssertNil(observer.fetchError)
    }

    /// An observer let go of is forgotten by the context and the notifications.
    func testAnObserverLetGoOfIsForgotten() throws {
        let context = ModelContext(try makeContainer(Chore.self))
        weak var released: ResultsObserver<Chore, Never>?
        do {
            let observer = try openChores(in: context)
            released = observer
            XCTAssertEqual(titles(observer.results), [])
        }
        XCTAssertNil(released)
        context.insert(Chore(title: "dishes"))
        try context.save()
    }
}
