import Foundation
@testable import ObjectGraph
import XCTest

/// A point: plain data, so decoded values of it may be kept and shared.
struct GridPoint: Codable, Hashable {
    var x: Double
    var y: Double
}

/// A counter held by reference: a struct that holds one is not plain data.
final class SharedCounter: Codable {
    var count: Int
    init(count: Int) { self.count = count }
}

struct CounterHolder: Codable {
    var counter: SharedCounter
}

@Model final class Marker {
    var name: String
    var point: GridPoint
    var holder: CounterHolder

    init(name: String, point: GridPoint, holder: CounterHolder) {
        self.name = name
        self.point = point
        self.holder = holder
    }
}

/// JSON-coded attributes of plain-data types keep the values they decoded, by text.
final class DecodedValuesTests: StoreTestCase {
    func testPlainDataValuesAreKeptByTextAndBounded() throws {
        let kept = DecodedValues()
        let codec = AttributeCodec.jsonCodec(GridPoint.self, keeping: kept)
        let text = try codec.encode(GridPoint(x: 1, y: 2))
        XCTAssertEqual(try codec.decode(text) as? GridPoint, GridPoint(x: 1, y: 2))
        XCTAssertEqual(try codec.decode(text) as? GridPoint, GridPoint(x: 1, y: 2))
        XCTAssertEqual(kept.count, 1)
        XCTAssertEqual(try codec.decode(try codec.encode(GridPoint(x: 3, y: 4))) as? GridPoint, GridPoint(x: 3, y: 4))
        XCTAssertEqual(kept.count, 2)

        for index in 0..<(DecodedValues.capacity + 10) {
            _ = try codec.decode(try codec.encode(GridPoint(x: Double(index), y: 0.5)))
        }
        XCTAssertLessThanOrEqual(kept.count, DecodedValues.capacity)
        XCTAssertThrowsError(try codec.decode("not json".databaseValue), "a bad text is still an error")
    }

    func testOnlyPlainDataTypesKeepValues() throws {
        XCTAssertTrue(_isPOD(GridPoint.self))
        XCTAssertFalse(_isPOD(CounterHolder.self))
        let container = try makeContainer(Marker.self)
        let context = ModelContext(container)
        for name in ["a", "b"] {
            context.insert(Marker(name: name, point: GridPoint(x: 1, y: 1), holder: CounterHolder(counter: SharedCounter(count: 1))))
        }
        try context.save()

        let reader = ModelContext(container)
        let markers = try reader.fetch(FetchDescriptor<Marker>(sortBy: [SortDescriptor(\.name)]))
        XCTAssertEqual(markers.map(\.point), [GridPoint(x: 1, y: 1), GridPoint(x: 1, y: 1)])
        // Both rows hold the same text. Had the decoded holder been kept, both models would share one
        // counter, and a change through one would show in the other.
        markers[0].holder.counter.count = 5
        XCTAssertEqual(markers[1].holder.counter.count, 1)
        markers[0].point.x = 9
        XCTAssertEqual(markers[1].point, GridPoint(x: 1, y: 1))
    }
}
