@testable import ObjectGraph
import XCTest

/// `AddressSet` and `MemberIndexes` stand in for `Set<UnsafeRawPointer>` and a dictionary by slot:
/// they must answer as those do, through every growth of the table.
final class AddressSetTests: XCTestCase {
    func testItHoldsWhatASetOfAddressesHolds() {
        var random = SeededGenerator(seed: 11)
        for round in 0..<40 {
            var addresses = AddressSet(minimumCapacity: Int.random(in: 0...40, using: &random))
            var expected: Set<UnsafeRawPointer> = []
            // Addresses as the allocator gives them (16-byte aligned, close together), with repeats,
            // and some far apart, past every size the table grows through.
            let base = UInt.random(in: 1 << 20 ... 1 << 40, using: &random) & ~0xF
            for _ in 0..<Int.random(in: 0...3_000, using: &random) {
                let bits = Bool.random(using: &random)
                    ? base + 16 * UInt.random(in: 0..<2_000, using: &random)
                    : UInt.random(in: 1...UInt.max, using: &random)
                guard let address = UnsafeRawPointer(bitPattern: bits) else { continue }
                addresses.insert(address)
                expected.insert(address)
                XCTAssertTrue(addresses.contains(address), "round \(round)")
            }
            XCTAssertEqual(addresses.count, expected.count, "round \(round)")
            for address in expected {
                XCTAssertTrue(addresses.contains(address), "round \(round)")
            }
            for offset in 0..<2_100 {
                guard let near = UnsafeRawPointer(bitPattern: base + 16 * UInt(offset) + 8) else { continue }
                XCTAssertFalse(addresses.contains(near), "round \(round): an address never inserted")
            }
        }
    }

    func testMemberAddressesKeepASetPerSlot() throws {
        var indexes = SlotMap<AddressSet>()
        XCTAssertTrue(indexes.isEmpty)
        let first = try XCTUnwrap(UnsafeRawPointer(bitPattern: 0x1000))
        let second = try XCTUnwrap(UnsafeRawPointer(bitPattern: 0x2000))
        var folderSnippets = AddressSet()
        folderSnippets.insert(first)
        indexes[3] = folderSnippets
        var tagSnippets = AddressSet()
        tagSnippets.insert(second)
        indexes[7] = tagSnippets
        XCTAssertEqual(indexes[3]?.contains(first), true)
        XCTAssertEqual(indexes[3]?.contains(second), false)
        XCTAssertEqual(indexes[7]?.contains(second), true)
        XCTAssertNil(indexes[5])

        // Taken out, changed and put back, as a link of a member does.
        var taken = try XCTUnwrap(indexes.removeValue(forSlot: 3))
        XCTAssertNil(indexes[3])
        XCTAssertNil(indexes.removeValue(forSlot: 3))
        taken.insert(second)
        indexes[3] = taken
        XCTAssertEqual(indexes[3]?.count, 2)
        XCTAssertEqual(indexes[7]?.count, 1, "the other slot's set is untouched")

        indexes[7] = nil
        XCTAssertNil(indexes[7])
        XCTAssertFalse(indexes.isEmpty)
        indexes.removeAll()
        XCTAssertTrue(indexes.isEmpty)
        XCTAssertNil(indexes[3])
    }
}
