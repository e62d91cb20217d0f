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

/// A model decoded from a feed's JSON, as SwiftData's sample code for importing data writes it: the
/// class adopts `Codable` itself, with coding keys of its own.
@Model
final class Quake: Codable {
    @Attribute(.unique) var code: String
    var magnitude: Double
    var time: Date
    var location: QuakeLocation?

    enum CodingKeys: String, CodingKey {
        case code, magnitude = "mag", time, location
    }

    init(code: String, magnitude: Double, time: Date) {
        self.code = code
        self.magnitude = magnitude
        self.time = time
    }

    required init(from decoder: Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        code = try values.decode(String.self, forKey: .code)
        magnitude = try values.decode(Double.self, forKey: .magnitude)
        time = try values.decode(Date.self, forKey: .time)
        location = try values.decodeIfPresent(QuakeLocation.self, forKey: .location)
    }

    func encode(to encoder: Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(code, forKey: .code)
        try values.encode(magnitude, forKey: .magnitude)
        try values.encode(time, forKey: .time)
        try values.encodeIfPresent(location, forKey: .location)
    }
}

struct QuakeLocation: Codable, Equatable {
    var latitude: Double
    var longitude: Double
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

    /// Models decoded from JSON by their own `init(from:)`, inserted, saved, fetched by a predicate on
    /// a decoded value and a `Codable` member, and encoded again.
    func testACodableModelIsDecodedSavedFetchedAndEncoded() throws {
        let feed = #"""
            [{"code": "ci41", "mag": 2.5, "time": 0, "location": {"latitude": 34.1, "longitude": -118.2}},
             {"code": "nc73", "mag": 5.1, "time": 3600},
             {"code": "us7k", "mag": 4.4, "time": 7200, "location": {"latitude": -20.5, "longitude": 170.3}}]
            """#
        let decoded = try JSONDecoder().decode([Quake].self, from: Data(feed.utf8))
        let container = try ModelContainer(for: Quake.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(container)
        decoded.forEach { context.insert($0) }
        try context.save()

        let reader = ModelContext(container)
        let strong = try reader.fetch(FetchDescriptor<Quake>(
            predicate: #Predicate { $0.magnitude > 4 }, sortBy: [SortDescriptor(\.time)]))
        XCTAssertEqual(strong.map(\.code), ["nc73", "us7k"])
        let south = try reader.fetch(FetchDescriptor<Quake>(predicate: #Predicate { ($0.location?.latitude ?? 0) < 0 }))
        XCTAssertEqual(south.map(\.code), ["us7k"])
        XCTAssertEqual(south.first?.location, QuakeLocation(latitude: -20.5, longitude: 170.3))

        let encoded = try JSONSerialization.jsonObject(with: JSONEncoder().encode(strong)) as? [[String: Any]]
        XCTAssertEqual(encoded?.map { $0["code"] as? String }, ["nc73", "us7k"])
        XCTAssertEqual(encoded?.map { $0["mag"] as? Double }, [5.1, 4.4])
        XCTAssertNil(encoded?.first?["location"], "an absent location is left out, as encodeIfPresent writes it")
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
