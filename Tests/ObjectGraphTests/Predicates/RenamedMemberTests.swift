import Foundation
@testable import ObjectGraph
import XCTest

/// A place whose `CodingKeys` store `latitude` as "lat" and leave `note` out.
struct RenamedSpot: Codable, Equatable {
    var latitude: Double
    var longitude: Double
    var label: String?
    var note = ""

    enum CodingKeys: String, CodingKey {
        case latitude = "lat"
        case longitude, label
    }
}

struct SpotRoute: Codable {
    var start: RenamedSpot
    var legs: Int
}

@Model final class Waypoint {
    var name: String
    var spot: RenamedSpot
    var route: SpotRoute?
    var stops: [RenamedSpot] = []

    init(name: String, spot: RenamedSpot) {
        self.name = name
        self.spot = spot
    }
}

/// A place only `testValuesSavedAfterTheStoreWasReadShowTheirKeys` saves, so that its keys are
/// unknown until then.
struct BeaconSpot: Codable {
    var latitude: Double
    var longitude: Double

    enum CodingKeys: String, CodingKey {
        case latitude = "lat"
        case longitude
    }
}

@Model final class Beacon {
    var name: String
    var spot: BeaconSpot
    init(name: String, spot: BeaconSpot) {
        self.name = name
        self.spot = spot
    }
}

/// Another program (or an older build) that wrote a store: its places have plain keys.
enum OtherProgram {
    struct Spot: Codable {
        var lat: Double
        var longitude: Double
    }

    @Model final class Marker {
        var name: String
        var spot: Spot
        init(name: String, spot: Spot) {
            self.name = name
            self.spot = spot
        }
    }
}

/// This program, reading that store with a type that renames "lat" to `latitude`. No test encodes
/// its `Spot`, so only the stored rows can show what it keeps where.
enum ThisProgram {
    struct Spot: Codable {
        var latitude: Double
        var longitude: Double

        enum CodingKeys: String, CodingKey {
            case latitude = "lat"
            case longitude
        }
    }

    @Model final class Marker {
        var name: String
        var spot: Spot
        init(name: String, spot: Spot) {
            self.name = name
            self.spot = spot
        }
    }
}

/// A member of a `Codable` attribute is read from the column's JSON by its name. A member the type's
/// `CodingKeys` store under another key (or not at all) was read as NULL: a predicate on it matched
/// nothing and a sort on it sorted nothing, silently. Now both are refused, naming the member, once
/// JSON the type wrote shows it; members that keep their names are read as before.
final class RenamedMemberTests: PredicateTestCase {
    private func addWaypoints() throws {
        let north = Waypoint(name: "north", spot: RenamedSpot(latitude: 50, longitude: 3, note: "windy"))
        north.route = SpotRoute(start: RenamedSpot(latitude: 48, longitude: 2), legs: 2)
        north.stops = [RenamedSpot(latitude: 49, longitude: 1)]
        let south = Waypoint(name: "south", spot: RenamedSpot(latitude: -30, longitude: 5))
        south.route = SpotRoute(start: RenamedSpot(latitude: -31, longitude: 7), legs: 1)
        context.insert(north)
        context.insert(south)
        try context.save()
    }

    private func assertRefused<T: PersistentModel>(
        _ predicate: Predicate<T>, naming member: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        let reader = ModelContext(container)
        for attempt in [{ _ = try reader.fetch(FetchDescriptor(predicate: predicate)) },
                        { _ = try reader.fetchCount(FetchDescriptor(predicate: predicate)) }] {
            XCTAssertThrowsError(try attempt(), file: file, line: line) { error in
                XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedPredicate, file: file, line: line)
                let message = "\(error)"
                XCTAssertTrue(message.contains("does not store \(member) under the key \"\(member)\""), message, file: file, line: line)
                XCTAssertTrue(message.contains("CodingKeys"), message, file: file, line: line)
            }
        }
    }

    func testPredicatesOnMembersStoredUnderAnotherKeyAreRefused() throws {
        try open(Waypoint.self)
        try addWaypoints()

        // Renamed, left out, nested in an optional, and an array's element: each was NULL in SQL.
        assertRefused(#Predicate<Waypoint> { $0.spot.latitude > 0 }, naming: "latitude")
        assertRefused(#Predicate<Waypoint> { $0.spot.note == "windy" }, naming: "note")
        assertRefused(#Predicate<Waypoint> { ($0.route?.start.latitude ?? 0) > 0 }, naming: "latitude")
        assertRefused(#Predicate<Waypoint> { $0.stops.contains { $0.latitude > 0 } }, naming: "latitude")

        // Members stored under their own names are read as before, checked against `evaluate`; so is
        // one that is nil in every value (no key, rightly), which shows nothing about its name.
        try assertPredicate(#Predicate<Waypoint> { $0.spot.longitude > 4 }, selects: ["south"], label: \.name)
        try assertPredicate(#Predicate<Waypoint> { ($0.route?.start.longitude ?? 0) < 3 }, selects: ["north"], label: \.name)
        try assertPredicate(#Predicate<Waypoint> { ($0.route?.legs ?? 0) == 2 }, selects: ["north"], label: \.name)
        try assertPredicate(#Predicate<Waypoint> { $0.stops.contains { $0.longitude == 1 } }, selects: ["north"], label: \.name)
        try assertPredicate(#Predicate<Waypoint> { $0.spot.label == nil }, selects: ["north", "south"], label: \.name)
    }

    func testSortsOnMembersStoredUnderAnotherKeyAreRefused() throws {
        try open(Waypoint.self)
        try addWaypoints()
        let reader = ModelContext(container)
        for sort in [SortDescriptor(\Waypoint.spot.latitude), SortDescriptor(\Waypoint.route?.start.latitude)] {
            XCTAssertThrowsError(try reader.fetch(FetchDescriptor(sortBy: [sort]))) { error in
                XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedSortDescriptor)
                XCTAssertTrue("\(error)".contains("does not store latitude under the key \"latitude\""), "\(error)")
            }
        }
        let byLongitude = try reader.fetch(FetchDescriptor(sortBy: [SortDescriptor(\Waypoint.spot.longitude, order: .reverse)]))
        XCTAssertEqual(byLongitude.map(\.name), ["south", "north"])
        let byStart = try reader.fetch(FetchDescriptor(sortBy: [SortDescriptor(\Waypoint.route?.start.longitude)]))
        XCTAssertEqual(byStart.map(\.name), ["north", "south"])
    }

    /// A store written before this process started (here by another program's type, with the same
    /// keys): nothing encoded a `ThisProgram.Spot` in this process, so only the stored rows show its keys.
    func testStoredRowsShowMembersStoredUnderAnotherKey() throws {
        do {
            let writer = try ModelContainer(for: OtherProgram.Marker.self, configurations: ModelConfiguration(url: storeURL))
            let context = ModelContext(writer)
            context.insert(OtherProgram.Marker(name: "pier", spot: OtherProgram.Spot(lat: 51, longitude: 4)))
            context.insert(OtherProgram.Marker(name: "dune", spot: OtherProgram.Spot(lat: 52, longitude: 6)))
            try context.save()
        }
        try open(ThisProgram.Marker.self)
        assertRefused(#Predicate<ThisProgram.Marker> { $0.spot.latitude > 51.5 }, naming: "latitude")
        try assertPredicate(#Predicate<ThisProgram.Marker> { $0.spot.longitude > 5 }, selects: ["dune"], label: \.name)
        // What SQL would not read, the models still hold: they decode with the type's own keys.
        XCTAssertEqual(try context.fetch(FetchDescriptor<ThisProgram.Marker>()).map(\.spot.latitude).sorted(), [51, 52])
    }

    /// The store was read while it held no beacon; values saved since show their keys as they are encoded.
    func testValuesSavedAfterTheStoreWasReadShowTheirKeys() throws {
        try open(Beacon.self)
        let latitudeAbove = #Predicate<Beacon> { $0.spot.latitude > 10 }
        XCTAssertEqual(try context.fetch(FetchDescriptor(predicate: latitudeAbove)).count, 0, "nothing stored, nothing known")
        context.insert(Beacon(name: "lighthouse", spot: BeaconSpot(latitude: 40, longitude: 9)))
        try context.save()
        assertRefused(latitudeAbove, naming: "latitude")
        try assertPredicate(#Predicate<Beacon> { $0.spot.longitude == 9 }, selects: ["lighthouse"], label: \.name)
    }
}

/// `JSONMemberNames` on values and the JSON they were written as.
final class JSONMemberNamesTests: XCTestCase {
    private struct Reading: Codable {
        var value: Double
        var unit: String

        init(value: Double, unit: String) {
            self.value = value
            self.unit = unit
        }

        /// Written as one text, "21.5 C": it has no members to read by key.
        init(from decoder: Decoder) throws {
            let text = try decoder.singleValueContainer().decode(String.self)
            let parts = text.split(separator: " ")
            value = Double(parts.first ?? "") ?? 0
            unit = parts.count > 1 ? String(parts[1]) : ""
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode("\(value) \(unit)")
        }
    }

    private struct Station: Codable {
        var name: String
        var readings: [String: Reading]
        var spots: [RenamedSpot]
    }

    func testMembersAreFoundThroughDictionariesArraysAndValuesWrittenAsOneValue() throws {
        let names = JSONMemberNames()
        let station = Station(
            name: "pier", readings: ["noon": Reading(value: 21.5, unit: "C")],
            spots: [RenamedSpot(latitude: 1, longitude: 2)])
        let json = String(decoding: try JSONCoding.encoder.encode(station), as: UTF8.self)
        XCTAssertFalse(names.isStoredElsewhere("value", of: Reading.self), "nothing seen yet")
        names.learn(from: station, json: json)

        XCTAssertFalse(names.isStoredElsewhere("name", of: Station.self))
        XCTAssertFalse(names.isStoredElsewhere("readings", of: Station.self))
        XCTAssertTrue(names.isStoredElsewhere("value", of: Reading.self))
        XCTAssertTrue(names.isStoredElsewhere("unit", of: Reading.self))
        XCTAssertTrue(names.isStoredElsewhere("latitude", of: RenamedSpot.self))
        XCTAssertFalse(names.isStoredElsewhere("longitude", of: RenamedSpot.self))
        XCTAssertFalse(names.isStoredElsewhere("label", of: RenamedSpot.self), "nil: its key is left out by right")
        XCTAssertTrue(names.memberType("readings", of: Station.self) == [String: Reading].self)
        XCTAssertTrue(names.memberType("longitude", of: RenamedSpot.self) == Double.self)
        XCTAssertNil(names.memberType("longitude", of: OtherProgram.Spot.self))
    }
}
