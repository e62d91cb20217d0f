import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

// The same entity, `Jot`, without and with indexes, as an app's history would have it.

enum UnindexedJots {
    @Model final class Jot {
        var title: String = ""
        var updatedAt: Date = Date.now
        var deletedAt: Date?
        var tray: Tray?
        init(title: String, updatedAt: Date) {
            self.title = title
            self.updatedAt = updatedAt
        }
    }

    @Model final class Tray {
        var name: String = ""
        @Relationship(inverse: \Jot.tray) var jots: [Jot] = []
        init(name: String) { self.name = name }
    }
}

/// A wide row (long text) with a narrow index that starts with the row's key.
enum KeyIndexedNotes {
    @Model final class Note {
        #Index<Note>([\.persistentModelID, \.deletedAt, \.pinned])
        var body: String = ""
        var deletedAt: Date?
        var pinned: Bool = false
        init(body: String) { self.body = body }
    }
}

enum IndexedJots {
    @Model final class Jot {
        #Index<Jot>([\.updatedAt], [\.deletedAt, \.tray], [\.title], [\.updatedAt])
        var title: String = ""
        var updatedAt: Date = Date.now
        var deletedAt: Date?
        var tray: Tray?
        init(title: String, updatedAt: Date) {
            self.title = title
            self.updatedAt = updatedAt
        }
    }

    @Model final class Tray {
        var name: String = ""
        @Relationship(inverse: \Jot.tray) var jots: [Jot] = []
        init(name: String) { self.name = name }
    }
}

/// SwiftData's typed form of `#Index`: `.binary` as the array form, `.rtree` as an ordinary index too.
enum TypedIndexPlaces {
    @Model final class Place {
        #Index<Place>(.binary([\.name]), .rtree([\.latitude, \.longitude]), Schema.Index<Place>.Types.binary([\.visitedAt]))
        var name: String = ""
        var latitude: Double = 0
        var longitude: Double = 0
        var visitedAt: Date?
        init(name: String, latitude: Double, longitude: Double) {
            self.name = name
            self.latitude = latitude
            self.longitude = longitude
        }
    }
}

/// A later version that renames an attribute, which rebuilds the table, and indexes the renamed one.
enum RenamedIndexedJots {
    @Model final class Jot {
        #Index<Jot>([\.changedAt], [\.deletedAt, \.tray])
        var title: String = ""
        @Attribute(originalName: "updatedAt") var changedAt: Date = Date.now
        var deletedAt: Date?
        var tray: Tray?
        init(title: String, changedAt: Date) {
            self.title = title
            self.changedAt = changedAt
        }
    }

    @Model final class Tray {
        var name: String = ""
        @Relationship(inverse: \Jot.tray) var jots: [Jot] = []
        init(name: String) { self.name = name }
    }
}

// Indexes a container must refuse: nothing in the table to index.

@Model final class ToManyIndexed {
    #Index<ToManyIndexed>([\.name], [\.parts])
    var name: String = ""
    @Relationship(inverse: \IndexedPart.owner) var parts: [IndexedPart] = []
    init() {}
}

@Model final class IndexedPart {
    var owner: ToManyIndexed?
    init() {}
}

@Model final class TransientIndexed {
    #Index<TransientIndexed>([\.name, \.cache])
    var name: String = ""
    @Transient var cache: Int = 0
    init() {}
}

@Model final class ComputedIndexed {
    #Index<ComputedIndexed>([\.shout])
    var name: String = ""
    var shout: String { name.uppercased() }
    init() {}
}

@Model final class EphemeralIndexed {
    #Index<EphemeralIndexed>([\.draft])
    var name: String = ""
    @Attribute(.ephemeral) var draft: String = ""
    init() {}
}

// Two entities whose indexes get one name: underscores join entity and property names.
@Model final class Crate_lid {
    #Index<Crate_lid>([\.label])
    var label: String = ""
    init() {}
}

@Model final class Crate {
    #Index<Crate>([\.lid_label])
    var lid_label: String = ""
    init() {}
}

// An entity whose name is another's unique index.
@Model final class Stamp {
    @Attribute(.unique) var code: String = ""
    init() {}
}

@Model final class Stamp_code_unique {
    var note: String = ""
    init() {}
}

final class IndexTests: StoreTestCase {
    private let start = Date(timeIntervalSince1970: 1_700_000_000)

    private func open(_ types: any PersistentModel.Type...) throws -> ModelContainer {
        try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: storeURL))
    }

    /// The indexes `#Index` made on a table (those ending in `_index`), each with its columns in order.
    private func declaredIndexes(on table: String) throws -> [String: [String]] {
        let queue = try DatabaseQueue(path: storeURL.path)
        defer { try? queue.close() }
        return try queue.read { db in
            var result: [String: [String]] = [:]
            let names = try Row.fetchAll(db, sql: "SELECT name FROM pragma_index_list(?)", arguments: [table])
                .map { $0["name"] as String }
            for name in names where name.hasSuffix("_index") {
                result[name] = try Row.fetchAll(db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [name])
                    .map { $0["name"] as String }
            }
            return result
        }
    }

    /// The plan SQLite makes for a statement ObjectGraph ran, read from the store file.
    private func queryPlan(of sql: String) throws -> String {
        let queue = try DatabaseQueue(path: storeURL.path)
        defer { try? queue.close() }
        let placeholders = sql.filter { $0 == "?" }.count
        return try queryPlan(of: sql, arguments: Array(repeating: DatabaseValue.null, count: placeholders), in: queue)
    }

    /// The SELECT of `Jot` rows a fetch runs (not GRDB's look at `sqlite_master`).
    private func jotSelects(in container: ModelContainer, _ body: () throws -> Void) rethrows -> [String] {
        try container.store.sqlLog.statements(during: body)
            .filter { $0.hasPrefix("SELECT") && $0.contains("FROM \"Jot\"") }
    }

    private func fillUnindexedStore(rows: Int) throws {
        let container = try open(UnindexedJots.Jot.self)
        let context = ModelContext(container)
        let trays = [UnindexedJots.Tray(name: "a"), UnindexedJots.Tray(name: "b")]
        for index in 0..<rows {
            // Dates out of insertion order, with ties, so that sorting has work to do.
            let jot = UnindexedJots.Jot(title: "jot \(index)", updatedAt: start.addingTimeInterval(Double((index * 37) % 101)))
            jot.tray = trays[index % 2]
            if index.isMultiple(of: 5) { jot.deletedAt = start }
            context.insert(jot)
        }
        try context.save()
    }

    private func newestFirst(_ limit: Int) -> FetchDescriptor<IndexedJots.Jot> {
        var descriptor = FetchDescriptor<IndexedJots.Jot>(sortBy: [SortDescriptor(\.updatedAt, order: .reverse)])
        descriptor.fetchLimit = limit
        return descriptor
    }

    // MARK: Creating

    func testDeclaredIndexesAreCreatedWithTheirColumnsInOrder() throws {
        _ = try open(IndexedJots.Jot.self)
        XCTAssertEqual(try declaredIndexes(on: "Jot"), [
            "Jot_updatedAt_index": ["updatedAt"],
            "Jot_deletedAt_tray_index": ["deletedAt", "tray"],
            "Jot_title_index": ["title"],
        ], "a repeated index is created once; a to-one relationship is indexed by its key column")
        XCTAssertEqual(Schema([IndexedJots.Jot.self]).entitiesByName["Jot"]?.indices,
                       [["updatedAt"], ["deletedAt", "tray"], ["title"]])
        XCTAssertEqual(Schema([IndexedJots.Jot.self]).entitiesByName["Tray"]?.indices, [])
    }

    /// Code written for SwiftData's typed `#Index` compiles and gets its indexes; a box of
    /// coordinates is found through the `.rtree` one (an ordinary index here, see `#Index`).
    func testTheTypedFormOfIndexMakesTheSameIndexes() throws {
        let container = try open(TypedIndexPlaces.Place.self)
        XCTAssertEqual(try declaredIndexes(on: "Place"), [
            "Place_name_index": ["name"],
            "Place_latitude_longitude_index": ["latitude", "longitude"],
            "Place_visitedAt_index": ["visitedAt"],
        ])
        let context = ModelContext(container)
        for (name, latitude, longitude) in [("Lisbon", 38.72, -9.14), ("Porto", 41.15, -8.61), ("Oslo", 59.91, 10.75)] {
            context.insert(TypedIndexPlaces.Place(name: name, latitude: latitude, longitude: longitude))
        }
        try context.save()
        let (south, north, west, east): (Double, Double, Double, Double) = (36, 44, -10, 3)
        let box = #Predicate<TypedIndexPlaces.Place> {
            $0.latitude > south && $0.latitude < north && $0.longitude > west && $0.longitude < east
        }
        let inIberia = try context.fetch(FetchDescriptor(predicate: box, sortBy: [SortDescriptor(\TypedIndexPlaces.Place.name)]))
        XCTAssertEqual(inIberia.map(\.name), ["Lisbon", "Porto"])
        let plan = try queryPlan(of: "SELECT name FROM \"Place\" WHERE latitude > 36 AND latitude < 44 AND longitude > -10 AND longitude < 3")
        XCTAssertTrue(plan.contains("Place_latitude_longitude_index"), plan)
    }

    /// `persistentModelID` names the row's key: such an index is a narrow copy of a few columns,
    /// which a lookup by key (a search's hits, a join table's rows) reads instead of the wide rows.
    func testAnIndexMayStartWithTheRowsKey() throws {
        let container = try open(KeyIndexedNotes.Note.self)
        XCTAssertEqual(try declaredIndexes(on: "Note"), [
            "Note_persistentModelID_deletedAt_pinned_index": ["_pk", "deletedAt", "pinned"],
        ])
        XCTAssertEqual(Schema([KeyIndexedNotes.Note.self]).entitiesByName["Note"]?.indices,
                       [["persistentModelID", "deletedAt", "pinned"]])
        let context = ModelContext(container)
        for index in 0..<50 { context.insert(KeyIndexedNotes.Note(body: String(repeating: "long text \(index) ", count: 400))) }
        try context.save()
        // With planner statistics (ObjectGraph gathers them once a table has 1,000 rows), SQLite reads
        // the narrow index rather than each wide row.
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { try $0.execute(sql: "ANALYZE") }
        try queue.close()
        let plan = try queryPlan(of: "SELECT count(*) FROM \"Note\" WHERE \"_pk\" IN (1, 2, 3) AND \"deletedAt\" IS NULL AND \"pinned\" = 0")
        XCTAssertTrue(plan.contains("COVERING INDEX Note_persistentModelID_deletedAt_pinned_index"), plan)
    }

    func testTheNewestFirstFetchReadsTheIndexInsteadOfSortingTheTable() throws {
        let container = try open(IndexedJots.Jot.self)
        let context = ModelContext(container)
        for index in 0..<500 {
            context.insert(IndexedJots.Jot(title: "jot \(index)", updatedAt: start.addingTimeInterval(Double(index % 97))))
        }
        try context.save()

        var fetched: [IndexedJots.Jot] = []
        let selects = try jotSelects(in: container) { fetched = try ModelContext(container).fetch(newestFirst(20)) }
        XCTAssertEqual(selects.count, 1, "\(selects)")
        XCTAssertEqual(fetched.count, 20)
        let plan = try queryPlan(of: try XCTUnwrap(selects.first))
        XCTAssertTrue(plan.contains("COVERING INDEX Jot_updatedAt_index"), plan)
        // Ties on the date go by key in the same direction, which is the index's own order: finding
        // the window's keys sorts nothing (only the 20 rows read by key are put back in order).
        let findingKeys = try XCTUnwrap(plan.components(separatedBy: "SCAN window_keys").first)
        XCTAssertTrue(findingKeys.contains("MATERIALIZE window_keys"), plan)
        XCTAssertFalse(findingKeys.contains("USE TEMP B-TREE"), plan)
    }

    // MARK: Existing stores

    func testAStoreWrittenWithoutIndexesGetsThemOnTheNextOpenAndFetchesTheSameRows() throws {
        try fillUnindexedStore(rows: 300)
        XCTAssertEqual(try declaredIndexes(on: "Jot"), [:])
        var unindexedDescriptor = FetchDescriptor<UnindexedJots.Jot>(sortBy: [SortDescriptor(\.updatedAt, order: .reverse)])
        unindexedDescriptor.fetchLimit = 25
        let before = try ModelContext(try open(UnindexedJots.Jot.self)).fetch(unindexedDescriptor).map(\.title)
        let trashedBefore = try ModelContext(try open(UnindexedJots.Jot.self))
            .fetch(FetchDescriptor<UnindexedJots.Jot>(predicate: #Predicate<UnindexedJots.Jot> { $0.deletedAt != nil }, sortBy: [SortDescriptor(\.title)]))
            .map(\.title)

        let container = try open(IndexedJots.Jot.self)
        XCTAssertEqual(Set(try declaredIndexes(on: "Jot").keys), ["Jot_updatedAt_index", "Jot_deletedAt_tray_index", "Jot_title_index"])
        let context = ModelContext(container)
        XCTAssertEqual(try context.fetch(newestFirst(25)).map(\.title), before)
        let trashedAfter = try context
            .fetch(FetchDescriptor<IndexedJots.Jot>(predicate: #Predicate<IndexedJots.Jot> { $0.deletedAt != nil }, sortBy: [SortDescriptor(\.title)]))
            .map(\.title)
        XCTAssertEqual(trashedAfter, trashedBefore)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<IndexedJots.Jot>()), 300)
        let recorded = try rawRows("SELECT value FROM _objectgraph_metadata WHERE key = 'schemaVersion'")
        XCTAssertEqual(recorded.first?["value"] as String?, "1.0.0")
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: folder.path).contains { $0.hasSuffix(".backup") },
                       "an index needs no migration, so no backup is made")
    }

    /// A join table is indexed by destination then source, which replaces the index on the destination
    /// alone that stores written before have, with planner statistics where the store keeps them.
    func testAJoinTableIsIndexedByDestinationThenSourceInStoresWrittenBefore() throws {
        do {
            let context = ModelContext(try open(Playlist.self, Song.self))
            for name in ["road", "rain", "night"] {
                let playlist = Playlist(name: name)
                playlist.songs = [Song(title: "\(name) 1"), Song(title: "\(name) 2")]
                context.insert(playlist)
            }
            try context.save()
        }
        func indexes() throws -> [String: [String]] {
            let queue = try DatabaseQueue(path: storeURL.path)
            defer { try? queue.close() }
            return try queue.read { db in
                var result: [String: [String]] = [:]
                for index in try db.indexes(on: "_Playlist_songs") where index.origin == .createIndex {
                    result[index.name] = index.columns
                }
                return result
            }
        }
        XCTAssertEqual(try indexes(), ["_Playlist_songs_destination_source": ["destination", "source"]])

        // As a store written before looks: the index on the destination alone, and statistics.
        try DatabaseQueue(path: storeURL.path).write { db in
            try db.execute(sql: #"DROP INDEX "_Playlist_songs_destination_source""#)
            try db.execute(sql: #"CREATE INDEX "_Playlist_songs_destination" ON "_Playlist_songs"("destination")"#)
            try db.execute(sql: "ANALYZE")
        }
        let context = ModelContext(try open(Playlist.self, Song.self))
        XCTAssertEqual(try indexes(), ["_Playlist_songs_destination_source": ["destination", "source"]])
        let analyzed = try rawRows("SELECT idx FROM sqlite_stat1 WHERE tbl = '_Playlist_songs'").map { $0["idx"] as String? }
        XCTAssertTrue(analyzed.contains("_Playlist_songs_destination_source"), "\(analyzed)")
        XCTAssertFalse(analyzed.contains("_Playlist_songs_destination"), "the old index's statistics went with it: \(analyzed)")
        let playlists = try context.fetch(FetchDescriptor<Playlist>(sortBy: [SortDescriptor(\.name)]))
        XCTAssertEqual(playlists.map { $0.songs.map(\.title) }, [["night 1", "night 2"], ["rain 1", "rain 2"], ["road 1", "road 2"]])
    }

    func testAnIndexNoLongerDeclaredIsDroppedButOtherIndexesStay() throws {
        _ = try open(IndexedJots.Jot.self)
        try DatabaseQueue(path: storeURL.path).write { db in
            try db.execute(sql: #"CREATE INDEX "jot_by_title" ON "Jot"("title")"#)
        }
        _ = try open(UnindexedJots.Jot.self)
        XCTAssertEqual(try declaredIndexes(on: "Jot"), [:])
        let remaining = try rawRows("SELECT name FROM pragma_index_list('Jot')").map { $0["name"] as String }
        XCTAssertTrue(remaining.contains("jot_by_title"), "an index ObjectGraph did not make is left alone: \(remaining)")
        XCTAssertTrue(remaining.contains("Jot_tray_key"), "foreign keys stay indexed: \(remaining)")
    }

    /// A lightweight migration that rebuilds the table drops its indexes with it; they are made again.
    func testIndexesExistAfterAMigrationRebuildsTheTable() throws {
        try fillUnindexedStore(rows: 50)
        _ = try open(IndexedJots.Jot.self)
        XCTAssertEqual(try declaredIndexes(on: "Jot")["Jot_updatedAt_index"], ["updatedAt"])
        let container = try open(RenamedIndexedJots.Jot.self)
        XCTAssertEqual(try declaredIndexes(on: "Jot"), [
            "Jot_changedAt_index": ["changedAt"],
            "Jot_deletedAt_tray_index": ["deletedAt", "tray"],
        ])
        let columns = try rawRows("SELECT name FROM pragma_table_info('Jot')").map { $0["name"] as String }
        XCTAssertFalse(columns.contains("updatedAt"), "the table was rebuilt: \(columns)")
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<RenamedIndexedJots.Jot>()), 50)
    }

    // MARK: Refused indexes

    private func assertRefused(_ type: any PersistentModel.Type, mentioning expected: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try open(type), file: file, line: line) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedKeyPath, "\(error)", file: file, line: line)
            XCTAssertTrue("\(error)".contains(expected), "\(error)", file: file, line: line)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: storeURL.path), "refused before the store is created",
                       file: file, line: line)
    }

    func testIndexesOfTwoEntitiesThatWouldShareANameAreRefused() {
        XCTAssertThrowsError(try open(Crate_lid.self, Crate.self)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .loadIssueModelContainer, "\(error)")
            XCTAssertTrue("\(error)".contains(
                "the #Index of Crate on lid_label and the #Index of Crate_lid on label would both be named Crate_lid_label_index"),
                "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: storeURL.path), "refused before the store is created")
        // Apart, each opens with its index.
        XCTAssertNoThrow(try open(Crate_lid.self))
    }

    func testATableNamedLikeAnotherEntitysIndexIsRefused() {
        XCTAssertThrowsError(try open(Stamp.self, Stamp_code_unique.self)) { error in
            XCTAssertTrue("\(error)".contains("would both be named Stamp_code_unique"), "\(error)")
        }
    }

    func testAToManyRelationshipCannotBeIndexed() {
        assertRefused(ToManyIndexed.self, mentioning:
            "the #Index of ToManyIndexed names parts, a to-many relationship, which has no column in ToManyIndexed's table")
    }

    func testATransientPropertyCannotBeIndexed() {
        assertRefused(TransientIndexed.self, mentioning:
            #"the #Index of TransientIndexed names \TransientIndexed.cache, which is not a persisted property of TransientIndexed"#)
    }

    func testAComputedPropertyCannotBeIndexed() {
        assertRefused(ComputedIndexed.self, mentioning: "which is not a persisted property of ComputedIndexed")
    }

    func testAnEphemeralAttributeCannotBeIndexed() {
        assertRefused(EphemeralIndexed.self, mentioning:
            "the #Index of EphemeralIndexed names draft, which is not stored in EphemeralIndexed's table")
    }
}
