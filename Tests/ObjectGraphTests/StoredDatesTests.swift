import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

struct DateSpan: Codable, Hashable {
    var start: Date
    var end: Date
    var label: String
}

@Model final class DatedEntry {
    var title: String
    @Attribute(.preserveValueOnDeletion) var at: Date
    var due: Date?
    var span: DateSpan
    var reminders: [Date] = []

    init(title: String, at: Date, due: Date? = nil, span: DateSpan, reminders: [Date] = []) {
        self.title = title
        self.at = at
        self.due = due
        self.span = span
        self.reminders = reminders
    }
}

/// A Codable enum with a date in a case's associated value.
enum Milestone: Codable, Hashable {
    case planned(on: Date)
    case done
}

/// Every other shape a date takes inside a JSON column.
@Model final class DatedShapes {
    var name: String
    @Attribute(.codable) var opaqueDate: Date
    var byName: [String: Date]
    var distinct: Set<Date>
    var milestone: Milestone
    var maybeSpan: DateSpan?
    @Attribute(.unique) var uniqueDate: Date

    init(name: String, date: Date) {
        self.name = name
        self.opaqueDate = date
        self.byName = ["start": date]
        self.distinct = [date]
        self.milestone = .planned(on: date)
        self.maybeSpan = DateSpan(start: date, end: date, label: name)
        self.uniqueDate = date
    }
}

enum DatedV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Visit.self] }

    @Model final class Visit {
        var place: String
        var at: Date
        init(place: String, at: Date) {
            self.place = place
            self.at = at
        }
    }
}

enum DatedV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Visit.self] }

    @Model final class Visit {
        var place: String
        var at: Date
        var year: Int = 0
        init(place: String, at: Date) {
            self.place = place
            self.at = at
        }
    }
}

/// Fills V2's new `year` from each visit's date, as a stage reads it.
enum DatedMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [DatedV1.self, DatedV2.self] }
    static var stages: [MigrationStage] {
        [.custom(fromVersion: DatedV1.self, toVersion: DatedV2.self, willMigrate: nil, didMigrate: { context in
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
            for visit in try context.fetch(FetchDescriptor<DatedV2.Visit>()) {
                visit.year = calendar.component(.year, from: visit.at)
            }
            try context.save()
        })]
    }
}

final class StoredDatesTests: StoreTestCase {
    /// Dates as a server writes them (now, with its fraction of a second) and at random since 2001:
    /// most of them needed one more bit than seconds since 1970 in a `Double` keep.
    private func sampleDates(count: Int) -> [Date] {
        var random = SystemRandomNumberGenerator()
        return [Date.now, Date(timeIntervalSinceReferenceDate: 0.1), Date(timeIntervalSinceReferenceDate: -1e9 / 3)]
            + (0..<count).map { _ in Date(timeIntervalSinceReferenceDate: Double.random(in: 0...1e9, using: &random)) }
    }

    func testEveryDateReadsBackEqualToTheDateSaved() throws {
        let dates = sampleDates(count: 200)
        do {
            let context = ModelContext(try makeContainer(DatedEntry.self))
            for (index, date) in dates.enumerated() {
                let span = DateSpan(start: date, end: date.addingTimeInterval(1 / 3), label: "\(index)")
                context.insert(DatedEntry(title: "\(index)", at: date, due: date, span: span, reminders: [date, span.end]))
            }
            try context.save()
        }
        let context = ModelContext(try makeContainer(DatedEntry.self))
        let entries = try context.fetch(FetchDescriptor<DatedEntry>()).sorted { Int($0.title) ?? 0 < Int($1.title) ?? 0 }
        XCTAssertEqual(entries.count, dates.count)
        var unequal = 0
        for (entry, date) in zip(entries, dates) {
            let end = date.addingTimeInterval(1 / 3)
            if entry.at != date || entry.due != date || entry.span.start != date || entry.span.end != end || entry.reminders != [date, end] {
                unequal += 1
            }
        }
        XCTAssertEqual(unequal, 0, "of \(dates.count) entries, \(unequal) read a date back unequal to the one saved")

        // Edited and unsaved, an entry is tested in Swift; saved, in SQL: both find it by its date.
        for entry in entries { entry.title += " (edited)" }
        var missed: [Int] = []
        for (index, date) in dates.enumerated() where index % 10 == 0 {
            let found = try context.fetch(FetchDescriptor<DatedEntry>(predicate: #Predicate { $0.at == date && $0.due == date }))
            if found.count != 1 { missed.append(index) }
        }
        try context.save()
        for (index, date) in dates.enumerated() where index % 10 == 0 {
            let found = try context.fetch(FetchDescriptor<DatedEntry>(predicate: #Predicate { $0.at == date && $0.due == date }))
            if found.count != 1 { missed.append(index) }
        }
        XCTAssertEqual(missed, [], "entries a fetch by their own date did not find")
    }

    /// A store as ObjectGraph wrote it before dates were kept in seconds since 2001: no record of the
    /// form, and seconds since 1970 in its Date columns, the JSON of its Codable attributes and its
    /// history's tombstones. Each value is written here as that earlier version wrote it.
    private func makeStoreInTheEarlierForm() throws -> (keptKey: Int64, Date) {
        let noon = Date(timeIntervalSince1970: 1_700_000_000.25)
        let keptKey: Int64
        do {
            let context = ModelContext(try makeContainer(DatedEntry.self))
            let kept = DatedEntry(title: "kept", at: noon, span: DateSpan(start: noon, end: noon, label: "k"))
            let gone = DatedEntry(title: "gone", at: noon, span: DateSpan(start: noon, end: noon, label: "g"))
            context.insert(kept)
            context.insert(gone)
            try context.save()
            keptKey = try XCTUnwrap(kept.persistentModelID.primaryKey)
            context.delete(gone)
            try context.save()
        }
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { db in
            try db.execute(sql: "DELETE FROM _objectgraph_metadata WHERE key = 'dates'")
            try db.execute(sql: """
                UPDATE DatedEntry SET at = 1700000000.123, due = 1600000000.5,
                    span = '{"end":1700000100,"label":"k","start":1700000000.123}', reminders = '[1700000000.123,-1000000]'
                WHERE _pk = ?
                """, arguments: [keptKey])
            // The deleted entry's tombstone kept its `at` in the column's form.
            let changes = try String.fetchAll(db, sql: "SELECT changes FROM _objectgraph_history WHERE instr(changes, '[[') > 0")
            XCTAssertEqual(changes.count, 1)
            let written = String(noon.timeIntervalSinceReferenceDate)
            XCTAssertTrue(changes[0].contains(written), changes[0])
            try db.execute(sql: "UPDATE _objectgraph_history SET changes = replace(changes, ?, '1700000000.25')", arguments: [written])
        }
        try queue.close()
        return (keptKey, noon)
    }

    func testAStoreInTheEarlierFormReadsItsDatesAsBeforeAndIsConvertedOnce() throws {
        let (keptKey, noon) = try makeStoreInTheEarlierForm()
        for _ in 0..<2 { // the second open converts nothing again
            let context = ModelContext(try makeContainer(DatedEntry.self))
            let kept = try XCTUnwrap(try context.fetch(FetchDescriptor<DatedEntry>()).first)
            XCTAssertEqual(kept.at, Date(timeIntervalSince1970: 1_700_000_000.123))
            XCTAssertEqual(kept.due, Date(timeIntervalSince1970: 1_600_000_000.5))
            XCTAssertEqual(kept.span, DateSpan(start: Date(timeIntervalSince1970: 1_700_000_000.123),
                                               end: Date(timeIntervalSince1970: 1_700_000_100), label: "k"))
            XCTAssertEqual(kept.reminders, [Date(timeIntervalSince1970: 1_700_000_000.123), Date(timeIntervalSince1970: -1_000_000)])

            let cutoff = Date(timeIntervalSince1970: 1_650_000_000)
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<DatedEntry>(predicate: #Predicate { $0.at > cutoff })), 1)
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<DatedEntry>(predicate: #Predicate { $0.due.flatMap { $0 < cutoff } ?? false })), 1)

            let deletes = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).flatMap(\.changes).compactMap { change in
                if case .delete(let delete as DefaultHistoryDelete<DatedEntry>) = change { return delete } else { return nil }
            }
            XCTAssertEqual(deletes.count, 1)
            XCTAssertEqual(deletes.first?.tombstone[\DatedEntry.at] as? Date, noon)
        }
        XCTAssertEqual(try rawRows("SELECT value FROM _objectgraph_metadata WHERE key = 'dates'").first?["value"] as String?,
                       "secondsSinceReferenceDate")
        // The store as it was is kept beside it, once.
        let copies = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            .filter { $0.hasPrefix("test.store.dates1970-") && $0.hasSuffix(".backup") }
        XCTAssertEqual(copies.count, 1, "\(copies)")
        let copy = try DatabaseQueue(path: folder.appendingPathComponent(copies[0]).path)
        XCTAssertEqual(try copy.read { try Double.fetchOne($0, sql: "SELECT at FROM DatedEntry WHERE _pk = ?", arguments: [keptKey]) },
                       1_700_000_000.123)
        try copy.close()
        let stored = try XCTUnwrap(try rawRows("SELECT at, span FROM DatedEntry WHERE _pk = \(keptKey)").first)
        XCTAssertEqual(stored["at"] as Double, 1_700_000_000.123 - 978_307_200)
        XCTAssertEqual(stored["span"] as String, #"{"end":721692900,"label":"k","start":\#(1_700_000_000.123 - 978_307_200)}"#)
    }

    func testEveryShapeOfADateInJSONIsConvertedAndThoseWithoutDatesAreLeftAsWritten() throws {
        do {
            let context = ModelContext(try makeContainer(DatedShapes.self, DatedEntry.self))
            context.insert(DatedShapes(name: "a", date: .now))
            context.insert(DatedEntry(title: "t", at: .now, span: DateSpan(start: .now, end: .now, label: "t")))
            try context.save()
        }
        // As the earlier form wrote them: `JSONEncoder` with `.secondsSince1970`, sorted keys.
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { db in
            try db.execute(sql: "DELETE FROM _objectgraph_metadata WHERE key = 'dates'")
            try db.execute(sql: """
                UPDATE DatedShapes SET opaqueDate = '1700000000.123', byName = '{"start":1700000000.123}',
                    "distinct" = '[1700000000.123]', milestone = '{"planned":{"on":1700000000.123}}',
                    maybeSpan = '{"end":1700000000.123,"label":"a","start":1700000000.123}', uniqueDate = 1700000000.123
                """)
            try db.execute(sql: "UPDATE DatedEntry SET reminders = '[]', span = 'not JSON'")
        }
        try queue.close()
        let context = ModelContext(try makeContainer(DatedShapes.self, DatedEntry.self))
        let expected = Date(timeIntervalSince1970: 1_700_000_000.123)
        let shapes = try XCTUnwrap(try context.fetch(FetchDescriptor<DatedShapes>()).first)
        XCTAssertEqual(shapes.opaqueDate, expected)
        XCTAssertEqual(shapes.byName, ["start": expected])
        XCTAssertEqual(shapes.distinct, [expected])
        XCTAssertEqual(shapes.milestone, .planned(on: expected))
        XCTAssertEqual(shapes.maybeSpan, DateSpan(start: expected, end: expected, label: "a"))
        XCTAssertEqual(shapes.uniqueDate, expected)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<DatedShapes>(predicate: #Predicate { $0.uniqueDate == expected })), 1)
        // Text without dates, and text its type cannot read, stay as written.
        let entry = try XCTUnwrap(try rawRows("SELECT reminders, span FROM DatedEntry").first)
        XCTAssertEqual(entry["reminders"] as String, "[]")
        XCTAssertEqual(entry["span"] as String, "not JSON")
    }

    func testContainersOpeningOneStoreInTheEarlierFormAtOnceConvertItOnce() throws {
        _ = try makeStoreInTheEarlierForm()
        let url = storeURL
        let read = LockedValue<[Date]>([])
        let failures = LockedValue<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let container = try ModelContainer(for: Schema([DatedEntry.self]), configurations: ModelConfiguration(url: url))
                let dates = try ModelContext(container).fetch(FetchDescriptor<DatedEntry>()).map(\.at)
                read.withLock { $0 += dates }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
        XCTAssertEqual(read.withLock { $0 }, Array(repeating: Date(timeIntervalSince1970: 1_700_000_000.123), count: 4))
    }

    func testAMigrationStageReadsTheDatesOfAStoreInTheEarlierForm() throws {
        do {
            let context = ModelContext(try ModelContainer(
                for: Schema(versionedSchema: DatedV1.self), migrationPlan: DatedMigrationPlan.self,
                configurations: ModelConfiguration(url: storeURL)))
            context.insert(DatedV1.Visit(place: "Lisbon", at: .now))
            try context.save()
        }
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { db in
            try db.execute(sql: "DELETE FROM _objectgraph_metadata WHERE key = 'dates'")
            try db.execute(sql: "UPDATE Visit SET at = 1700000000") // 14 November 2023, in the earlier form
        }
        try queue.close()
        let context = ModelContext(try ModelContainer(
            for: Schema(versionedSchema: DatedV2.self), migrationPlan: DatedMigrationPlan.self,
            configurations: ModelConfiguration(url: storeURL)))
        let visit = try XCTUnwrap(try context.fetch(FetchDescriptor<DatedV2.Visit>()).first)
        XCTAssertEqual(visit.at, Date(timeIntervalSince1970: 1_700_000_000))
        XCTAssertEqual(visit.year, 2023, "the stage read the date in the form the store held it")
    }

    func testAnUnreadableHistoryRowDoesNotStopTheConversion() throws {
        _ = try makeStoreInTheEarlierForm()
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { db in
            try db.execute(sql: """
                INSERT INTO _objectgraph_history (timestamp, author, bundle, process, changes)
                VALUES (0, NULL, '', '', 'delete	DatedEntry		9	at	[[not JSON')
                """)
        }
        try queue.close()
        let context = ModelContext(try makeContainer(DatedEntry.self))
        XCTAssertEqual(try context.fetch(FetchDescriptor<DatedEntry>()).map(\.at), [Date(timeIntervalSince1970: 1_700_000_000.123)])
        // Reading the history still names the row, as it did before the conversion.
        XCTAssertThrowsError(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()))
    }

    func testAStoreInTheEarlierFormIsSaidToNeedAnUpdateWithoutBeingChanged() throws {
        let schema = Schema([DatedEntry.self])
        XCTAssertFalse(try ModelContainer.storeNeedsUpdate(at: storeURL, for: schema), "no file yet")
        _ = try makeStoreInTheEarlierForm()
        let written = try Data(contentsOf: storeURL)
        XCTAssertTrue(try ModelContainer.storeNeedsUpdate(at: storeURL, for: schema))
        XCTAssertEqual(try Data(contentsOf: storeURL), written)
        _ = try makeContainer(DatedEntry.self)
        XCTAssertFalse(try ModelContainer.storeNeedsUpdate(at: storeURL, for: schema))
    }

    func testAStoreWithDatesInAnUnknownFormIsRefusedAndLeftUntouched() throws {
        do {
            let context = ModelContext(try makeContainer(DatedEntry.self))
            context.insert(DatedEntry(title: "x", at: .now, span: DateSpan(start: .now, end: .now, label: "x")))
            try context.save()
        }
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { try $0.execute(sql: "UPDATE _objectgraph_metadata SET value = 'millisecondsSince1601' WHERE key = 'dates'") }
        try queue.close()
        let before = try Data(contentsOf: storeURL)
        for open in [{ _ = try self.makeContainer(DatedEntry.self) }, { _ = try ModelContainer.storeNeedsUpdate(at: self.storeURL, for: Schema([DatedEntry.self])) }] {
            XCTAssertThrowsError(try open()) { error in
                XCTAssertEqual((error as? SwiftDataError)?.code, .loadIssueModelContainer)
                XCTAssertTrue("\(error)".contains("millisecondsSince1601"), "\(error)")
            }
        }
        XCTAssertEqual(try Data(contentsOf: storeURL), before)
    }
}
