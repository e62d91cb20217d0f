@testable import ObjectGraph
import XCTest

/// `SlotMap` stands where dictionaries by slot were: it must answer as one would.
final class SlotMapTests: XCTestCase {
    func testValuesAreSetReplacedRemovedAndListedAsADictionaryWouldHoldThem() {
        var map = SlotMap<[Int64]>()
        var reference: [Int: [Int64]] = [:]
        XCTAssertTrue(map.isEmpty)
        let steps: [(slot: Int, value: [Int64]?)] = [(3, [1, 2]), (1, []), (3, [7]), (5, [9]), (1, nil), (4, nil), (5, nil), (2, [4])]
        for step in steps {
            map[step.slot] = step.value
            reference[step.slot] = step.value
            for slot in 0...6 { XCTAssertEqual(map[slot], reference[slot], "slot \(slot) after setting \(step.slot)") }
            XCTAssertEqual(map.isEmpty, reference.isEmpty)
            XCTAssertEqual(Dictionary(uniqueKeysWithValues: map.map { ($0.slot, $0.value) }), reference)
        }
    }
}
