import Foundation
@testable import ObjectGraph
import XCTest

/// A record whose catalogue number is unique, filed in one bin and listed under many styles. Its row
/// holds its bin, and it writes the join rows with its styles (`Vinyl.styles` sorts before
/// `VinylStyle.records`), so an upsert replaces both.
@Model final class Vinyl {
    @Attribute(.unique) var catalogueNumber: String
    var title: String
    var bin: VinylBin?
    @Relationship(inverse: \VinylStyle.records) var styles: [VinylStyle] = []
    init(catalogueNumber: String, title: String) {
        self.catalogueNumber = catalogueNumber
        self.title = title
    }
}

@Model final class VinylBin {
    var label: String
    @Relationship(deleteRule: .nullify, inverse: \Vinyl.bin) var records: [Vinyl] = []
    init(label: String) { self.label = label }
}

@Model final class VinylStyle {
    var name: String
    var records: [Vinyl] = []
    init(name: String) { self.name = name }
}

/// A station whose call sign is unique; its broadcasts live in their own rows, each naming it, so an
/// upsert of the station keeps them.
@Model final class Station {
    @Attribute(.unique) var callSign: String
    var frequency: Double
    @Relationship(deleteRule: .cascade, inverse: \Broadcast.station) var broadcasts: [Broadcast] = []
    init(callSign: String, frequency: Double) {
        self.callSign = callSign
        self.frequency = frequency
    }
}

@Model final class Broadcast {
    var title: String
    var station: Station?
    init(title: String) { self.title = title }
}

/// What an upsert does to relationships, in memory as in the store: the inserted model's values
/// replace what the row stores (its to-one relationships, the join rows it writes); a to-many
/// relationship stored in the other models' rows keeps its members and gains the inserted model's.
/// The models on the other side, loaded in the context, show the same.
final class UniqueRelationshipTests: StoreTestCase {
    private func vinylContainer() throws -> ModelContainer {
        let container = try makeContainer(Vinyl.self, VinylBin.self, VinylStyle.self)
        let context = ModelContext(container)
        for label in ["A", "B"] { context.insert(VinylBin(label: label)) }
        for name in ["jazz", "soul"] { context.insert(VinylStyle(name: name)) }
        try context.save()
        let record = Vinyl(catalogueNumber: "BN-1", title: "first pressing")
        context.insert(record)
        record.bin = try bin("A", in: context)
        record.styles = [try style("jazz", in: context)]
        try context.save()
        return container
    }

    private func bin(_ label: String, in context: ModelContext) throws -> VinylBin {
        try XCTUnwrap(context.fetch(FetchDescriptor<VinylBin>(predicate: #Predicate { $0.label == label })).first)
    }

    private func style(_ name: String, in context: ModelContext) throws -> VinylStyle {
        try XCTUnwrap(context.fetch(FetchDescriptor<VinylStyle>(predicate: #Predicate { $0.name == name })).first)
    }

    /// The store, read by a context of its own: the one record's bin and styles, and each bin's and style's records.
    private func assertStored(
        in container: ModelContainer, bin expectedBin: String?, styles expectedStyles: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let fresh = ModelContext(container)
        let records = try fresh.fetch(FetchDescriptor<Vinyl>())
        XCTAssertEqual(records.map(\.title), ["reissue"], file: file, line: line)
        XCTAssertEqual(records.first?.bin?.label, expectedBin, file: file, line: line)
        XCTAssertEqual(records.first?.styles.map(\.name), expectedStyles, file: file, line: line)
        for label in ["A", "B"] {
            XCTAssertEqual(try bin(label, in: fresh).records.count, label == expectedBin ? 1 : 0, "bin \(label)", file: file, line: line)
        }
        for name in ["jazz", "soul"] {
            XCTAssertEqual(try style(name, in: fresh).records.count, expectedStyles.contains(name) ? 1 : 0, "style \(name)", file: file, line: line)
        }
    }

    func testAnUpsertThatFilesARecordElsewhereTakesItOutOfTheBinAndStylesItLeft() throws {
        let container = try vinylContainer()
        let context = ModelContext(container)
        let binA = try bin("A", in: context), binB = try bin("B", in: context)
        let jazz = try style("jazz", in: context), soul = try style("soul", in: context)
        // The saved record is held only through the relationships loaded here.
        XCTAssertEqual(binA.records.map(\.title), ["first pressing"])
        XCTAssertEqual(jazz.records.map(\.title), ["first pressing"])
        XCTAssertEqual(soul.records.count, 0)

        let reissue = Vinyl(catalogueNumber: "BN-1", title: "reissue")
        context.insert(reissue)
        reissue.bin = binB
        reissue.styles = [soul]
        try context.save()

        XCTAssertEqual(binA.records.count, 0, "the record left bin A")
        XCTAssertEqual(jazz.records.count, 0, "the record is no longer jazz")
        XCTAssertEqual(binB.records.map(\.title), ["reissue"])
        XCTAssertEqual(soul.records.map(\.title), ["reissue"])
        // One model stands for the row: the one the context held before, now showing the reissue.
        XCTAssertTrue(binB.records.first === soul.records.first)
        XCTAssertEqual(binB.records.first?.persistentModelID, reissue.persistentModelID)
        XCTAssertFalse(context.hasChanges)
        try assertStored(in: container, bin: "B", styles: ["soul"])
    }

    func testAnUpsertThatLeavesTheBinEmptyTakesTheRecordOutOfIt() throws {
        let container = try vinylContainer()
        let context = ModelContext(container)
        let binA = try bin("A", in: context)
        XCTAssertEqual(binA.records.count, 1)
        context.insert(Vinyl(catalogueNumber: "BN-1", title: "reissue"))
        try context.save()
        XCTAssertEqual(binA.records.count, 0)
        try assertStored(in: container, bin: nil, styles: [])
    }

    func testAnUpsertOfARecordTheContextHoldsMovesItBetweenTheLoadedBinsAndStyles() throws {
        let container = try vinylContainer()
        let context = ModelContext(container)
        let original = try XCTUnwrap(context.fetch(FetchDescriptor<Vinyl>()).first)
        XCTAssertEqual(original.bin?.label, "A")
        let binA = try bin("A", in: context), binB = try bin("B", in: context)
        let jazz = try style("jazz", in: context), soul = try style("soul", in: context)
        XCTAssertEqual([binA.records.count, binB.records.count, jazz.records.count, soul.records.count], [1, 0, 1, 0])

        let reissue = Vinyl(catalogueNumber: "BN-1", title: "reissue")
        context.insert(reissue)
        reissue.bin = binB
        reissue.styles = [soul]
        try context.save()

        XCTAssertEqual(original.title, "reissue")
        XCTAssertTrue(original.bin === binB)
        XCTAssertEqual(original.styles.map(\.name), ["soul"])
        XCTAssertEqual([binA.records.count, binB.records.count, jazz.records.count, soul.records.count], [0, 1, 0, 1])
        XCTAssertTrue(binB.records.first === original, "the bin lists the model the context held, not a second one")
        XCTAssertTrue(soul.records.first === original)
        try assertStored(in: container, bin: "B", styles: ["soul"])
    }

    func testAnUpsertIntoTheBinTheRecordWasInListsItOnce() throws {
        let container = try vinylContainer()
        let context = ModelContext(container)
        let binA = try bin("A", in: context)
        let saved = try XCTUnwrap(binA.records.first)
        let reissue = Vinyl(catalogueNumber: "BN-1", title: "reissue")
        context.insert(reissue)
        reissue.bin = binA
        XCTAssertEqual(binA.records.count, 2, "until the save, two models of one catalogue number")
        try context.save()

        XCTAssertEqual(binA.records.count, 1)
        XCTAssertTrue(binA.records.first === saved)
        XCTAssertEqual(saved.title, "reissue")
        // Deleting the bin nullifies the one record's bin and leaves the record.
        context.delete(binA)
        try context.save()
        let fresh = ModelContext(container)
        let records = try fresh.fetch(FetchDescriptor<Vinyl>())
        XCTAssertEqual(records.map(\.title), ["reissue"])
        XCTAssertNil(records.first?.bin)
    }

    func testTwoPendingInsertsOfOneCatalogueNumberLeaveOnlyTheLaterBinListingTheRecord() throws {
        let container = try makeContainer(Vinyl.self, VinylBin.self, VinylStyle.self)
        let context = ModelContext(container)
        let binA = VinylBin(label: "A"), binB = VinylBin(label: "B")
        context.insert(binA)
        context.insert(binB)
        let first = Vinyl(catalogueNumber: "BN-1", title: "first pressing"), reissue = Vinyl(catalogueNumber: "BN-1", title: "reissue")
        context.insert(first)
        context.insert(reissue)
        first.bin = binA
        reissue.bin = binB
        try context.save()

        XCTAssertEqual(binA.records.count, 0)
        XCTAssertEqual(binB.records.map(\.title), ["reissue"])
        XCTAssertTrue(binB.records.first === first, "the earlier insert stands for the row")
        let fresh = ModelContext(container)
        XCTAssertEqual(try bin("A", in: fresh).records.count, 0)
        XCTAssertEqual(try bin("B", in: fresh).records.map(\.title), ["reissue"])
    }

    /// A store holding station WXYZ on 101.1 with its morning broadcast.
    private func stationContainer() throws -> ModelContainer {
        let container = try makeContainer(Station.self, Broadcast.self)
        let context = ModelContext(container)
        let station = Station(callSign: "WXYZ", frequency: 101.1)
        context.insert(station)
        station.broadcasts = [Broadcast(title: "morning")]
        try context.save()
        return container
    }

    func testAnUpsertedStationKeepsItsSavedBroadcastsAndGainsTheNewOnes() throws {
        let container = try stationContainer()
        // Not held by the context: the upserted model stands for the row.
        let context = ModelContext(container)
        let upserted = Station(callSign: "WXYZ", frequency: 99.5)
        context.insert(upserted)
        let evening = Broadcast(title: "evening")
        upserted.broadcasts = [evening]
        try context.save()
        XCTAssertEqual(upserted.broadcasts.map(\.title).sorted(), ["evening", "morning"])
        XCTAssertTrue(evening.station === upserted)

        let fresh = ModelContext(container)
        let stations = try fresh.fetch(FetchDescriptor<Station>())
        XCTAssertEqual(stations.map(\.frequency), [99.5])
        XCTAssertEqual(stations.first?.broadcasts.map(\.title).sorted(), ["evening", "morning"])
    }

    func testAnUpsertOfAStationTheContextHoldsShowsEveryBroadcastOnThatModel() throws {
        let container = try stationContainer()
        let context = ModelContext(container)
        let held = try XCTUnwrap(context.fetch(FetchDescriptor<Station>()).first)
        let morning = try XCTUnwrap(held.broadcasts.first)
        let upserted = Station(callSign: "WXYZ", frequency: 99.5)
        context.insert(upserted)
        let evening = Broadcast(title: "evening")
        upserted.broadcasts = [evening]
        try context.save()

        XCTAssertEqual(held.frequency, 99.5)
        XCTAssertEqual(held.broadcasts.map(\.title).sorted(), ["evening", "morning"])
        XCTAssertTrue(morning.station === held)
        XCTAssertTrue(evening.station === held, "the new broadcast refers to the model the context held")
    }

    func testPendingInsertsOfOneStationKeepTheBroadcastsOfEach() throws {
        let container = try makeContainer(Station.self, Broadcast.self)
        let context = ModelContext(container)
        let stations = [101.1, 99.5, 88.0].map { Station(callSign: "WXYZ", frequency: $0) }
        let broadcasts = ["morning", "noon", "evening"].map { Broadcast(title: $0) }
        for (station, broadcast) in zip(stations, broadcasts) {
            context.insert(station)
            station.broadcasts = [broadcast]
        }
        try context.save()

        XCTAssertEqual(stations[0].frequency, 88.0, "the last insert's values")
        XCTAssertEqual(stations[0].broadcasts.map(\.title), ["morning", "noon", "evening"])
        XCTAssertTrue(broadcasts.allSatisfy { $0.station === stations[0] }, "the broadcasts refer to the earliest insert, which stands for the row")
        let fresh = ModelContext(container)
        XCTAssertEqual(try fresh.fetch(FetchDescriptor<Station>()).first?.broadcasts.map(\.title).sorted(), ["evening", "morning", "noon"])
    }

    // MARK: An upsert beside the context's own edits of the row it takes over

    /// A save applies its edits, then its inserts: an insert that takes over a row the context also
    /// edited wins, and the edit is no conflict with the context's own upsert (it threw `.saveConflict`).
    func testAnUpsertOverARecordWhoseStylesTheContextChangedSavesTheUpsertsStyles() throws {
        let container = try vinylContainer()
        let context = ModelContext(container)
        let held = try XCTUnwrap(context.fetch(FetchDescriptor<Vinyl>()).first)
        let soul = try style("soul", in: context)
        held.styles.append(soul)
        let reissue = Vinyl(catalogueNumber: "BN-1", title: "reissue")
        context.insert(reissue)
        reissue.bin = try bin("B", in: context)
        reissue.styles = [try style("jazz", in: context)]
        try context.save()

        XCTAssertEqual(held.styles.map(\.name), ["jazz"])
        try assertStored(in: container, bin: "B", styles: ["jazz"])
    }

    /// The same from the styles' side: a style that took the saved record in before the upsert does
    /// not keep it once the upsert's styles replace the record's.
    func testAStyleThatTookTheRecordInBeforeAnUpsertLosesItToTheUpsertsStyles() throws {
        let container = try vinylContainer()
        let context = ModelContext(container)
        let held = try XCTUnwrap(context.fetch(FetchDescriptor<Vinyl>()).first)
        try style("soul", in: context).records.append(held)
        let reissue = Vinyl(catalogueNumber: "BN-1", title: "reissue")
        context.insert(reissue)
        reissue.bin = try bin("B", in: context)
        reissue.styles = [try style("jazz", in: context)]
        try context.save()

        try assertStored(in: container, bin: "B", styles: ["jazz"])
    }

    /// After an upsert gave a held record the insert's styles, giving it back its old ones saves them:
    /// the record compared them with the styles it had before, found no change, and wrote nothing.
    func testStylesGivenBackAfterAnUpsertAreSaved() throws {
        let container = try vinylContainer()
        let context = ModelContext(container)
        let held = try XCTUnwrap(context.fetch(FetchDescriptor<Vinyl>()).first)
        let jazz = try style("jazz", in: context)
        XCTAssertEqual(held.styles.map(\.name), ["jazz"])
        let reissue = Vinyl(catalogueNumber: "BN-1", title: "reissue")
        context.insert(reissue)
        reissue.bin = try bin("B", in: context)
        try context.save()
        XCTAssertEqual(held.styles.count, 0)

        held.styles = [jazz]
        try context.save()
        try assertStored(in: container, bin: "B", styles: ["jazz"])
    }

    /// Two pending inserts of one catalogue number, each given the style the saved record just left,
    /// whose records are not loaded: the style takes the one row in once (the style's list of records
    /// to take in named the row twice, and the second join row of the pair broke the save).
    func testTwoPendingInsertsOfOneNumberGivenTheStyleTheSavedRecordLeftSave() throws {
        let container = try vinylContainer()
        let context = ModelContext(container)
        let jazz = try style("jazz", in: context)
        let held = try XCTUnwrap(context.fetch(FetchDescriptor<Vinyl>()).first)
        held.styles.removeAll { $0 === jazz }
        for title in ["first", "reissue"] {
            let record = Vinyl(catalogueNumber: "BN-1", title: title)
            context.insert(record)
            record.styles = [jazz]
        }
        try context.save()
        try assertStored(in: container, bin: nil, styles: ["jazz"])
    }

    /// A held record whose columns the context edited in the save that upserted it shows the upsert's
    /// values and the row's version after it: its next edit saves (it kept the edit's values as saved
    /// and an older version, and the next save threw `.saveConflict`).
    func testARecordEditedInTheSaveThatUpsertedItSavesItsNextEdit() throws {
        let container = try vinylContainer()
        let context = ModelContext(container)
        let held = try XCTUnwrap(context.fetch(FetchDescriptor<Vinyl>()).first)
        held.title = "edited"
        held.bin = try bin("B", in: context)
        let reissue = Vinyl(catalogueNumber: "BN-1", title: "reissue")
        context.insert(reissue)
        try context.save()
        XCTAssertEqual(held.title, "reissue")
        XCTAssertNil(held.bin)

        held.title = "reissue"
        held.bin = try bin("A", in: context)
        try context.save()
        XCTAssertFalse(context.hasChanges)
        let fresh = ModelContext(container)
        let stored = try fresh.fetch(FetchDescriptor<Vinyl>())
        XCTAssertEqual(stored.map(\.title), ["reissue"])
        XCTAssertEqual(stored.first?.bin?.label, "A")
    }

    /// A model an upsert merged into the held record reads and writes the record's values; given to
    /// a relationship, it stands for the record: a style given both listed the one row twice.
    func testAModelMergedByAnUpsertStandsForTheRecordInARelationship() throws {
        let container = try vinylContainer()
        let context = ModelContext(container)
        let held = try XCTUnwrap(context.fetch(FetchDescriptor<Vinyl>()).first)
        let reissue = Vinyl(catalogueNumber: "BN-1", title: "reissue")
        context.insert(reissue)
        try context.save()
        let soul = try style("soul", in: context)
        soul.records.append(reissue)
        soul.records.append(held)
        XCTAssertEqual(soul.records.count, 1)
        XCTAssertTrue(soul.records.first === held)
        try context.save()
        XCTAssertEqual(soul.records.count, 1)
        try assertStored(in: container, bin: nil, styles: ["soul"])
    }
}
