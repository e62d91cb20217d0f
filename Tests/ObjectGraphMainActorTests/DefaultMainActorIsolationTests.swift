import Foundation
import Observation
import ObjectGraph
import XCTest

// This target is compiled with the main actor as its default isolation (SE-0466), as Xcode 26 makes new
// app targets: every declaration without an isolation of its own is `@MainActor`. Models written for
// SwiftData in such a module must compile here as they are, and work.

/// A model as it is written everywhere: no isolation. `@Model` declares it not `Sendable`, which makes
/// the compiler leave it nonisolated rather than give it the module's main actor, so it is used from
/// any actor, as in a module without a default isolation. The attribute macros, `#Index` and
/// `#Unique` are here because what they generate takes the module's default isolation too.
@Model
final class Shelf {
    @Attribute(.unique) var label: String
    @Transient var visits: Int = 0
    var builtAt: Date = Date.now
    @Relationship(deleteRule: .cascade, inverse: \Volume.shelf) var volumes: [Volume] = []
    init(label: String) { self.label = label }
}

enum Binding: String, Codable, CaseIterable {
    case paperback, hardcover
}

@Model
final class Volume {
    #Index<Volume>([\.pages])
    #Unique<Volume>([\.title, \.shelf])
    var title: String
    var pages: Int
    var binding: Binding = Binding.paperback
    var shelf: Shelf?
    init(title: String, pages: Int) {
        self.title = title
        self.pages = pages
    }
}

/// A model the author marked `nonisolated` (SE-0449), as SwiftData's users do to use one off the main actor.
@Model
nonisolated final class Bookmark {
    var page: Int
    init(page: Int) { self.page = page }
}

/// A model isolated to the main actor: its conformance to `PersistentModel` is isolated too (SE-0470),
/// so it is used on the main actor only. Foundation's `#Predicate` and `SortDescriptor` take only
/// `Sendable` key paths, which a main-actor property's are not, so its fetches filter and sort in Swift.
@MainActor
@Model
final class Easel {
    #Index<Easel>([\.name])
    @Attribute(.unique) var name: String
    var setUpAt: Date = Date.now
    @Relationship(deleteRule: .cascade, inverse: \Canvas.easel) var canvases: [Canvas] = []
    init(name: String) { self.name = name }
}

@MainActor
@Model
final class Canvas {
    var subject: String
    var easel: Easel?
    init(subject: String) { self.subject = subject }
}

@ModelActor
actor Librarian {
    /// Shelves a volume of each title on a new shelf, off the main actor.
    func shelve(_ titles: [String], on label: String) throws {
        let shelf = Shelf(label: label)
        modelContext.insert(shelf)
        for (offset, title) in titles.enumerated() {
            shelf.volumes.append(Volume(title: title, pages: 100 * (offset + 1)))
        }
        try modelContext.save()
    }

    func titles(longerThan pages: Int) throws -> [String] {
        let descriptor = FetchDescriptor<Volume>(
            predicate: #Predicate { $0.pages > pages }, sortBy: [SortDescriptor(\.title)])
        return try modelContext.fetch(descriptor).map(\.title)
    }
}

/// The steps on the main actor: these functions take the module's default isolation.
func shelvesOnTheMainContext() throws -> (titles: [String], shelfOfFirst: String?, hardcovers: Int, shelves: Int) {
    let container = try ModelContainer(for: Shelf.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    let shelf = Shelf(label: "Poetry")
    container.mainContext.insert(shelf)
    let odes = Volume(title: "Odes", pages: 80)
    odes.binding = .hardcover
    shelf.volumes.append(contentsOf: [Volume(title: "Sonnets", pages: 154), odes])
    try container.mainContext.save()

    // Another context reads the rows, with a predicate through the relationship and an enum.
    let reader = ModelContext(container)
    let poetry = try reader.fetch(FetchDescriptor<Volume>(
        predicate: #Predicate { $0.shelf?.label == "Poetry" }, sortBy: [SortDescriptor(\.pages)]))
    let hardcover = Binding.hardcover
    let hardcovers = try reader.fetchCount(FetchDescriptor<Volume>(predicate: #Predicate { $0.binding == hardcover }))

    // A second shelf with the label takes the first one's row over (`.unique`).
    container.mainContext.insert(Shelf(label: "Poetry"))
    try container.mainContext.save()
    let shelves = try ModelContext(container).fetchCount(FetchDescriptor<Shelf>())
    return (poetry.map(\.title), poetry.first?.shelf?.label, hardcovers, shelves)
}

func easelsOnTheMainContext() throws -> (names: [String], subjects: [String], canvasesAfterDelete: Int, identified: String?) {
    let container = try ModelContainer(for: Easel.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    let context = container.mainContext
    let studio = Easel(name: "Studio")
    let garden = Easel(name: "Garden")
    context.insert(studio)
    context.insert(garden)
    studio.canvases.append(contentsOf: [Canvas(subject: "Pears"), Canvas(subject: "Jug")])
    garden.canvases.append(Canvas(subject: "Roses"))
    try context.save()

    let reader = ModelContext(container)
    let easels = try reader.fetch(FetchDescriptor<Easel>()).sorted { $0.name < $1.name }
    let subjects = (easels.last?.canvases ?? []).map(\.subject)
    let identified = (reader.model(for: studio.persistentModelID) as? Easel)?.name

    context.delete(studio)
    try context.save()
    let canvasesLeft = try ModelContext(container).fetchCount(FetchDescriptor<Canvas>())
    return (easels.map(\.name), subjects, canvasesLeft, identified)
}

func easelChangeIsObserved() throws -> Int {
    let container = try ModelContainer(for: Easel.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    let easel = Easel(name: "Attic")
    container.mainContext.insert(easel)
    try container.mainContext.save()
    let changes = ChangeCount()
    withObservationTracking { _ = easel.name } onChange: { changes.increment() }
    easel.name = "Loft"
    return changes.value
}

/// Counts `onChange` calls, which Observation makes from a `@Sendable` closure.
nonisolated final class ChangeCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}

// `nonisolated`, and its tests not `@MainActor`: XCTest on Linux finds test methods by casting them to
// nonisolated functions, which fails for main-actor ones. The tests `await` the main-actor steps.
nonisolated final class DefaultMainActorIsolationTests: XCTestCase {
    func testAModelWithoutIsolationIsSavedAndFetchedOnTheMainContext() async throws {
        let result = try await shelvesOnTheMainContext()
        XCTAssertEqual(result.titles, ["Odes", "Sonnets"])
        XCTAssertEqual(result.shelfOfFirst, "Poetry")
        XCTAssertEqual(result.hardcovers, 1)
        XCTAssertEqual(result.shelves, 1)
    }

    func testAModelWithoutIsolationIsUsedByAModelActorOffTheMainActor() async throws {
        let container = try ModelContainer(for: Shelf.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let librarian = Librarian(modelContainer: container)
        try await librarian.shelve(["Atlas", "Bestiary", "Chronicle"], on: "Reference")
        let long = try await librarian.titles(longerThan: 150)
        XCTAssertEqual(long, ["Bestiary", "Chronicle"])
    }

    func testAModelDeclaredNonisolatedIsUsedFromAnyContext() throws {
        let container = try ModelContainer(for: Bookmark.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.insert(Bookmark(page: 12))
        context.insert(Bookmark(page: 40))
        try context.save()
        let later = try ModelContext(container).fetch(FetchDescriptor<Bookmark>(
            predicate: #Predicate { $0.page > 20 }))
        XCTAssertEqual(later.map(\.page), [40])
    }

    func testAMainActorModelIsSavedFetchedRelatedAndCascadedOnTheMainActor() async throws {
        let result = try await easelsOnTheMainContext()
        XCTAssertEqual(result.names, ["Garden", "Studio"])
        XCTAssertEqual(result.subjects, ["Pears", "Jug"])
        XCTAssertEqual(result.identified, "Studio")
        XCTAssertEqual(result.canvasesAfterDelete, 1, "deleting the easel cascades to its two canvases")
    }

    func testAChangeToAMainActorModelIsObserved() async throws {
        let changes = try await easelChangeIsObserved()
        XCTAssertEqual(changes, 1)
    }
}
