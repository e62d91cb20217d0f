import ObjectGraph
import XCTest

// Models written exactly as SwiftData's documentation writes them, with `import ObjectGraph`
// in place of `import SwiftData`: if this file compiles, such code ports unchanged.

@Model
class Trip {
    #Unique<Trip>([\.name, \.startDate, \.endDate])
    #Index<Trip>([\.name], [\.startDate], [\.endDate], [\.name, \.startDate, \.endDate])
    @Attribute(.unique, .preserveValueOnDeletion) var name: String
    var destination: String
    var startDate: Date
    var endDate: Date
    @Relationship(deleteRule: .cascade, inverse: \LivingAccommodation.trip)
    var livingAccommodation: LivingAccommodation?
    @Transient
    var tripDuration: TimeInterval = 0

    init(name: String, destination: String, startDate: Date, endDate: Date) {
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
    }
}

@Model
class LivingAccommodation {
    var address: String
    var placeName: String
    var trip: Trip?

    init(address: String, placeName: String) {
        self.address = address
        self.placeName = placeName
    }
}

@Model
class RemoteImage {
    @Attribute(.unique) var sourceURL: URL
    @Attribute(.externalStorage) var data: Data?

    init(sourceURL: URL, data: Data? = nil) {
        self.sourceURL = sourceURL
        self.data = data
    }
}

@Model
final class Item {
    var timestamp: Date

    init(timestamp: Date) {
        self.timestamp = timestamp
    }
}

enum SampleTripsSchemaV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Visit.self] }

    @Model
    final class Visit {
        var city: String
        init(city: String) { self.city = city }
    }
}

enum SampleTripsMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [SampleTripsSchemaV1.self] }
    static var stages: [MigrationStage] { [] }
}

final class SwiftDataSourceCompatibilityTests: XCTestCase {
    func testDocumentationStyleCodeCompilesAndRuns() throws {
        let configuration = ModelConfiguration(isStoredInMemoryOnly: true)
        let container = try ModelContainer(for: Trip.self, RemoteImage.self, Item.self, configurations: configuration)
        let context = ModelContext(container)

        let trip = Trip(name: "Summer", destination: "Lisbon", startDate: .now, endDate: .now.addingTimeInterval(86_400))
        context.insert(trip)
        context.insert(RemoteImage(sourceURL: URL(string: "https://example.com/a.png")!))
        context.insert(Item(timestamp: .now))
        if context.hasChanges {
            try context.save()
        }

        let descriptor = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate, order: .reverse)])
        let trips = try context.fetch(descriptor)
        XCTAssertEqual(trips.map(\.name), ["Summer"])
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Item>()), 1)
        let batched: FetchResultsCollection<Trip> = try context.fetch(descriptor, batchSize: 10)
        XCTAssertEqual(batched.map(\.name), ["Summer"])

        let observer = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) { notification in
            let deleted = notification.userInfo?[ModelContext.NotificationKey.deletedIdentifiers.rawValue] as? [PersistentIdentifier]
            XCTAssertEqual(deleted?.count, 1)
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        context.delete(trip)
        context.processPendingChanges()
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Trip>()), 0)
    }

    /// History as iOS 18 code reads it: transactions after a kept token, changes matched by model type.
    func testHistoryCodeCompilesAndRuns() throws {
        let container = try ModelContainer(for: Trip.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        context.author = "app"
        let trip = Trip(name: "Autumn", destination: "Porto", startDate: .now, endDate: .now.addingTimeInterval(86_400))
        context.insert(trip)
        try context.save()
        let firstToken = try XCTUnwrap(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last?.token)

        trip.destination = "Braga"
        try context.save()
        context.delete(trip)
        try context.save()

        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
        descriptor.predicate = #Predicate { transaction in
            transaction.token > firstToken && transaction.author == "app"
        }
        var seen: [String] = []
        for transaction in try context.fetchHistory(descriptor) {
            for change in transaction.changes {
                switch change {
                case .insert(let insert as DefaultHistoryInsert<Trip>):
                    seen.append("inserted \(insert.changedPersistentIdentifier.entityName)")
                case .update(let update as DefaultHistoryUpdate<Trip>):
                    seen.append("updated \(update.updatedAttributes.contains { $0 == \Trip.destination } ? "destination" : "?")")
                case .delete(let delete as DefaultHistoryDelete<Trip>):
                    seen.append("deleted \(delete.tombstone[\.name] as? String ?? "?")")
                default:
                    break
                }
            }
        }
        XCTAssertEqual(seen, ["updated destination", "deleted Autumn"])
    }

    func testVersionedSchemaAndMigrationPlanTypesCompile() throws {
        let container = try ModelContainer(
            for: Schema(versionedSchema: SampleTripsSchemaV1.self),
            migrationPlan: SampleTripsMigrationPlan.self,
            configurations: [ModelConfiguration(isStoredInMemoryOnly: true)])
        XCTAssertEqual(container.schema.version, Schema.Version(1, 0, 0))
        XCTAssertNotNil(container.migrationPlan)
    }
}
