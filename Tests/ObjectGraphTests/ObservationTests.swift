import Foundation
@testable import ObjectGraph
import Observation
import XCTest

/// A model's changes skip its Observation registrar until the model is first read (`@Model`'s
/// `_$hasBeenRead`): no one can be observing it before then, and everything after is observed.
final class ObservationTests: StoreTestCase {
    func testAModelChangedBeforeItsFirstReadIsObservedOnceRead() {
        let note = Note(title: "new")
        note.title = "changed before any read"
        let changes = Tally()
        withObservationTracking { _ = note.title } onChange: { changes.add() }
        note.title = "observed"
        XCTAssertEqual(changes.count, 1)
        note.title = "after the one change tracking tells"
        XCTAssertEqual(changes.count, 1, "withObservationTracking tells only the first change")
        withObservationTracking { _ = note.title } onChange: { changes.add() }
        note.title = "observed again"
        XCTAssertEqual(changes.count, 2)
        XCTAssertEqual(note.title, "observed again")
    }

    /// The observer is told before the change (`willSet`), and may read the model there.
    func testAnObserverCanReadTheModelWhenToldOfAChange() {
        let note = Note(title: "before")
        // The change is told on this thread, inside the setter: the closure only needs to be `@Sendable`.
        nonisolated(unsafe) let observed = note
        let seen = Tally()
        withObservationTracking { _ = note.title } onChange: { seen.add(observed.title) }
        note.title = "after"
        XCTAssertEqual(seen.texts, ["before"])
        XCTAssertEqual(note.title, "after")
    }

    func testAFetchedModelIsObservedFromItsFirstRead() throws {
        let container = try makeContainer(Note.self)
        let writer = ModelContext(container)
        writer.insert(Note(title: "saved"))
        try writer.save()

        let fetched = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<Note>()).first)
        let changes = Tally()
        withObservationTracking { _ = fetched.title } onChange: { changes.add() }
        fetched.title = "edited"
        XCTAssertEqual(changes.count, 1)
    }

    /// A change to a property the tracking did not read is not told, though the model has been read.
    func testOnlyThePropertiesReadAreObserved() {
        let budget = Budget(name: "food")
        let changes = Tally()
        withObservationTracking { _ = budget.name } onChange: { changes.add() }
        budget.transactions = [Transaction(note: "bread", amount: 2)]
        XCTAssertEqual(changes.count, 0)
        budget.name = "groceries"
        XCTAssertEqual(changes.count, 1)
    }
}

/// What observers were told, from the `@Sendable` closures Observation calls.
private final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var told: [String] = []
    var count: Int { lock.withLock { told.count } }
    var texts: [String] { lock.withLock { told } }
    func add(_ text: String = "") { lock.withLock { told.append(text) } }
}
