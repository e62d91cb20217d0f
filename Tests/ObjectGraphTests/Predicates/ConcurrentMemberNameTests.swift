import Foundation
@testable import ObjectGraph
import XCTest

/// Another reading of the store `OtherProgram` writes (`RenamedMemberTests`): `latitude` is stored as
/// "lat". Its decoding can be held at a gate, to stop one thread in the middle of reading the store's
/// sample of stored JSON. Nothing else decodes this `Spot`, so only the store's sample shows its keys.
enum LaterSurvey {
    struct Spot: Codable {
        var latitude: Double
        var longitude: Double

        enum CodingKeys: String, CodingKey {
            case latitude = "lat"
            case longitude
        }

        init(from decoder: Decoder) throws {
            DecodingGate.passThrough()
            let container = try decoder.container(keyedBy: CodingKeys.self)
            latitude = try container.decode(Double.self, forKey: .latitude)
            longitude = try container.decode(Double.self, forKey: .longitude)
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

/// Holds the first decoding after it is armed until released; every other decoding passes.
enum DecodingGate {
    private static let state = LockedValue((armed: false, entered: DispatchSemaphore(value: 0), release: DispatchSemaphore(value: 0)))

    static func arm() -> (entered: DispatchSemaphore, release: DispatchSemaphore) {
        state.withLock { state in
            state.armed = true
            return (state.entered, state.release)
        }
    }

    static func passThrough() {
        let held: (entered: DispatchSemaphore, release: DispatchSemaphore)? = state.withLock { state in
            guard state.armed else { return nil }
            state.armed = false
            return (state.entered, state.release)
        }
        guard let held else { return }
        held.entered.signal()
        held.release.wait()
    }
}

/// The stored JSON is sampled once per store, the first time SQL is about to read a member. The store
/// was marked as sampled before the sample was read: a second thread arriving meanwhile found the
/// mark, learned nothing, and read the renamed member by its name, as NULL in every row — a predicate
/// that matched nothing, silently.
final class ConcurrentMemberNameTests: PredicateTestCase {
    func testAReaderArrivingWhileTheStoreIsSampledStillSeesMembersStoredUnderAnotherKey() throws {
        do {
            let writer = try ModelContainer(for: OtherProgram.Marker.self, configurations: ModelConfiguration(url: storeURL))
            let context = ModelContext(writer)
            context.insert(OtherProgram.Marker(name: "ridge", spot: OtherProgram.Spot(lat: 57, longitude: -5)))
            context.insert(OtherProgram.Marker(name: "col", spot: OtherProgram.Spot(lat: 46, longitude: 7)))
            try context.save()
        }
        try open(LaterSurvey.Marker.self)

        // The first reader samples the store and is held while decoding the first value it read.
        let gate = DecodingGate.arm()
        let firstReaderDone = DispatchSemaphore(value: 0)
        let firstReaderResult = LockedValue<Result<[String], any Error>?>(nil)
        let container = try XCTUnwrap(self.container)
        Thread.detachNewThread {
            let reader = ModelContext(container)
            let result = Result { try reader.fetch(FetchDescriptor(predicate: #Predicate<LaterSurvey.Marker> { $0.spot.longitude > 0 })).map(\.name) }
            firstReaderResult.withLock { $0 = result }
            firstReaderDone.signal()
        }
        XCTAssertEqual(gate.entered.wait(timeout: .now() + 30), .success, "the first reader never sampled the store")

        // A second reader meanwhile: the renamed member must be refused, not read as NULL.
        let second = ModelContext(container)
        let onLatitude = #Predicate<LaterSurvey.Marker> { $0.spot.latitude > 50 }
        XCTAssertThrowsError(try second.fetch(FetchDescriptor(predicate: onLatitude)), "read as NULL: matched nothing") { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedPredicate)
            XCTAssertTrue("\(error)".contains("does not store latitude under the key \"latitude\""), "\(error)")
        }

        gate.release.signal()
        XCTAssertEqual(firstReaderDone.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(try firstReaderResult.withLock { $0 }?.get(), ["col"])
        XCTAssertThrowsError(try second.fetch(FetchDescriptor(predicate: onLatitude)))
    }
}
