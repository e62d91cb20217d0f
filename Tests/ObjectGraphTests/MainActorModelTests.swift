import Foundation
import ObjectGraph
import XCTest

/// A model isolated to the main actor, in a module without a default isolation: `@Model` makes its
/// conformance to `PersistentModel` isolated to the main actor too, since the members it generates
/// are. (Before, the conformance was nonisolated, and the class did not compile.) The module compiled
/// with the main actor as its default isolation is `ObjectGraphMainActorTests`.
@MainActor
@Model
final class Lamp {
    var room: String
    var watts: Int = 40
    var litAt: Date = Date.now
    init(room: String) { self.room = room }
}

@MainActor
private func lampsInTheStore() throws -> (rooms: [String], watts: [Int], changed: Bool) {
    let container = try ModelContainer(for: Lamp.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    let context = container.mainContext
    let hall = Lamp(room: "hall")
    hall.watts = 60
    context.insert(hall)
    context.insert(Lamp(room: "study"))
    try context.save()
    hall.watts = 75
    let changed = hall.hasChanges
    try context.save()

    let lamps = try ModelContext(container).fetch(FetchDescriptor<Lamp>()).sorted { $0.room < $1.room }
    return (lamps.map(\.room), lamps.map(\.watts), changed)
}

final class MainActorModelTests: XCTestCase {
    func testAMainActorModelIsInsertedChangedAndFetchedOnTheMainActor() async throws {
        let result = try await lampsInTheStore()
        XCTAssertEqual(result.rooms, ["hall", "study"])
        XCTAssertEqual(result.watts, [75, 40])
        XCTAssertTrue(result.changed)
    }
}
