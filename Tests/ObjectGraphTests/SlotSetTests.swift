@testable import ObjectGraph
import XCTest

/// `SlotSet` keeps slots 0–63 as bits and the rest in a `Set`: it must answer as a `Set<Int>` does,
/// on both sides of 64, and list its slots in ascending order.
final class SlotSetTests: XCTestCase {
    func testItHoldsWhatASetOfIntsHolds() {
        var random = SystemRandomNumberGenerator()
        for round in 0..<200 {
            var slots: SlotSet = []
            var expected: Set<Int> = []
            for _ in 0..<Int.random(in: 0...20, using: &random) {
                // Mostly low slots, some at the edges of the bits, some far past them.
                let index = [Int.random(in: 0..<64, using: &random), 0, 63, 64, 65, Int.random(in: 64..<300, using: &random)]
                    .randomElement(using: &random) ?? 0
                slots.insert(index)
                expected.insert(index)
            }
            XCTAssertEqual(slots.isEmpty, expected.isEmpty, "round \(round)")
            XCTAssertEqual(Array(slots), expected.sorted(), "round \(round)")
            for index in -1...300 {
                XCTAssertEqual(slots.contains(index), expected.contains(index), "round \(round), slot \(index)")
            }
            slots.removeAll()
            XCTAssertTrue(slots.isEmpty)
            XCTAssertEqual(Array(slots), [])
        }
    }

    func testALiteralAndEquality() {
        let slots: SlotSet = [70, 3, 3, 0]
        XCTAssertEqual(Array(slots), [0, 3, 70])
        var other = SlotSet()
        for index in [0, 70, 3] { other.insert(index) }
        XCTAssertEqual(slots, other)
        other.insert(64)
        XCTAssertNotEqual(slots, other)
    }
}
