import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// Models whose rows are gone while the program still reads them: each property with no value in
/// memory reads as its type's empty value (or its declared default) and the model says `isDeleted`,
/// where a read stopped the process.
final class MissingRowTests: StoreTestCase {
    func testTheModelForAnIdentifierWhoseRowIsGoneReadsEmptyValues() throws {
        let container = try makeContainer(Shipment.self)
        let context = ModelContext(container)
        let shipment = Shipment.sample
        context.insert(shipment)
        try context.save()
        let identifier = shipment.persistentModelID
        context.delete(shipment)
        try context.save()

        let placeholder = try XCTUnwrap(ModelContext(container).model(for: identifier) as? Shipment)
        XCTAssertTrue(placeholder.isDeleted)
        XCTAssertEqual(placeholder.persistentModelID, identifier)
        XCTAssertEqual(placeholder.reference, "")
        XCTAssertEqual(placeholder.weight, 0)
        XCTAssertEqual(placeholder.declaredValue, 0)
        XCTAssertEqual(placeholder.shippedAt, Date(timeIntervalSinceReferenceDate: 0))
        XCTAssertEqual(placeholder.tracking.uuidString, "00000000-0000-0000-0000-000000000000")
        XCTAssertEqual(placeholder.mode, .sea, "a CaseIterable enum reads as its first case")
        XCTAssertEqual(placeholder.labels, [])
        XCTAssertFalse(placeholder.insured)
        XCTAssertEqual(placeholder.ratio, 0.5, "a declared default wins over the empty value")
        XCTAssertEqual(placeholder.manifest, Data())
        XCTAssertEqual(placeholder.stops, [:])
        XCTAssertEqual(placeholder.seals, [])
        XCTAssertEqual(placeholder.note, "none", "a declared default wins over the empty value")
        XCTAssertNil(placeholder.carrier)
    }

    /// A column `propertiesToFetch` left out, read after another context deleted the row.
    func testAColumnLeftOutOfAFetchReadsEmptyWhenTheRowWasDeletedBeforeItWasRead() throws {
        let container = try makeContainer(Shipment.self)
        let writer = ModelContext(container)
        writer.insert(Shipment.sample)
        try writer.save()

        let reader = ModelContext(container)
        var descriptor = FetchDescriptor<Shipment>()
        descriptor.propertiesToFetch = [\.reference]
        let partial = try XCTUnwrap(reader.fetch(descriptor).first)
        try writer.delete(model: Shipment.self)
        try writer.save()

        XCTAssertEqual(partial.reference, "SH-1", "what was fetched stays")
        XCTAssertEqual(partial.weight, 0)
        XCTAssertEqual(partial.labels, [])
        XCTAssertEqual(partial.mode, .sea)
    }

    /// A row that is still there reads its values, however the model was reached.
    func testAModelWhoseRowIsThereReadsItsValues() throws {
        let container = try makeContainer(Shipment.self)
        let writer = ModelContext(container)
        let shipment = Shipment.sample
        writer.insert(shipment)
        try writer.save()

        let reader = ModelContext(container)
        var descriptor = FetchDescriptor<Shipment>()
        descriptor.propertiesToFetch = [\.reference]
        let partial = try XCTUnwrap(reader.fetch(descriptor).first)
        XCTAssertEqual(partial.weight, 12)
        XCTAssertEqual(partial.mode, .air)
        let found = try XCTUnwrap(ModelContext(container).model(for: shipment.persistentModelID) as? Shipment)
        XCTAssertFalse(found.isDeleted)
        XCTAssertEqual(found.labels, ["fragile"])
        XCTAssertEqual(found.tracking, shipment.tracking)
        XCTAssertEqual(found.stops, ["Rotterdam": 1])
        XCTAssertEqual(found.seals, ["A"])
    }
}

@Model final class Shipment {
    enum Mode: String, Codable, CaseIterable { case sea, air }

    var reference: String
    var weight: Int
    var declaredValue: Decimal
    var shippedAt: Date
    var tracking: UUID
    var mode: Mode
    var labels: [String]
    var insured: Bool
    var ratio: Double = 0.5
    var manifest: Data
    var stops: [String: Int]
    var seals: Set<String>
    var note: String = "none"
    var carrier: String?

    init(reference: String, weight: Int, declaredValue: Decimal, shippedAt: Date, tracking: UUID, mode: Mode,
         labels: [String], insured: Bool) {
        self.reference = reference
        self.weight = weight
        self.declaredValue = declaredValue
        self.shippedAt = shippedAt
        self.tracking = tracking
        self.mode = mode
        self.labels = labels
        self.insured = insured
        manifest = Data([1])
        stops = ["Rotterdam": 1]
        seals = ["A"]
    }

    static var sample: Shipment {
        Shipment(reference: "SH-1", weight: 12, declaredValue: 99.5, shippedAt: Date(timeIntervalSince1970: 1_700_000_000),
                 tracking: UUID(), mode: .air, labels: ["fragile"], insured: true)
    }
}
