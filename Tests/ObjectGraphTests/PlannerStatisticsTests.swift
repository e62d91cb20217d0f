import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// Sensor readings of many kinds: a filter on one kind matches few rows, which only the planner's
/// statistics tell SQLite.
@Model final class SensorReading {
    #Index<SensorReading>([\.deletedAt, \.takenAt], [\.deletedAt, \.kind])
    var kind: String = ""
    var takenAt: Date = Date.now
    var deletedAt: Date?
    init(kind: String, takenAt: Date) {
        self.kind = kind
        self.takenAt = takenAt
    }
}

final class PlannerStatisticsTests: StoreTestCase {
    private let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// Readings of `kinds` kinds in turn (by default 200, so each kind is a small share of the table).
    private func insertReadings(_ count: Int, from first: Int = 0, kinds: Int = 200, into container: ModelContainer) throws {
        let context = ModelContext(container)
        for index in first..<(first + count) {
            context.insert(SensorReading(kind: "kind \(7 + index % kinds)", takenAt: start.addingTimeInterval(Double(index))))
        }
        try context.save()
    }

    /// The newest readings of one kind: a date-ordered walk of the whole table, or a look-up by kind.
    private func newestOfOneKind() -> FetchDescriptor<SensorReading> {
        var descriptor = FetchDescriptor<SensorReading>(
            predicate: #Predicate { $0.deletedAt == nil && $0.kind == "kind 7" },
            sortBy: [SortDescriptor(\.takenAt, order: .reverse)])
        descriptor.fetchLimit = 5
        return descriptor
    }

    /// The plan the store's own reader connections make for the fetch's SELECT.
    private func plan(of descriptor: FetchDescriptor<SensorReading>, in container: ModelContainer) throws -> String {
        let selects = try selects(in: container) { _ = try ModelContext(container).fetch(descriptor) }
        let sql = try XCTUnwrap(selects.last)
        // Arguments as the fetch binds them: the kind, then the OFFSET (the LIMIT is in the SQL).
        XCTAssertTrue(sql.contains("LIMIT 5 OFFSET ?"), sql)
        let arguments: [DatabaseValue] = ["kind 7".databaseValue, 0.databaseValue]
        return try queryPlan(of: sql, arguments: arguments, in: container.store.writer)
    }

    /// The row counts `sqlite_stat1` records, by table (none when it was never written).
    private func analyzedRows() throws -> [String: Int] {
        let rows = try rawRows("SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'").isEmpty
            ? [] : try rawRows("SELECT tbl, stat FROM sqlite_stat1 WHERE idx IS NOT NULL")
        var result: [String: Int] = [:]
        for row in rows {
            let stat: String = row["stat"]
            result[row["tbl"]] = Int(stat.split(separator: " ")[0])
        }
        return result
    }

    func testAFilterOnARareValueUsesItsIndexOnceTheTableIsAnalyzed() throws {
        let container = try makeContainer(SensorReading.self)
        try insertReadings(2000, into: container)

        XCTAssertEqual(try analyzedRows()["SensorReading"], 2000)
        let plan = try plan(of: newestOfOneKind(), in: container)
        XCTAssertTrue(plan.contains("SensorReading_deletedAt_kind_index"), plan)
        let fetched = try ModelContext(container).fetch(newestOfOneKind())
        XCTAssertEqual(fetched.map(\.takenAt), (0..<5).map { start.addingTimeInterval(Double(1800 - $0 * 200)) })
    }

    /// A connection loads statistics when it opens; the store's readers are opened afresh after an analysis.
    func testReadersOpenedBeforeAnAnalysisPlanWithItsStatistics() throws {
        let container = try makeContainer(SensorReading.self)
        // At first every reading is of one kind: the kind index does not narrow anything.
        try insertReadings(1000, kinds: 1, into: container)
        XCTAssertTrue(try plan(of: newestOfOneKind(), in: container).contains("SensorReading_deletedAt_takenAt_index"))

        try insertReadings(2000, from: 1000, into: container)
        XCTAssertEqual(try analyzedRows()["SensorReading"], 3000)
        let plan = try plan(of: newestOfOneKind(), in: container)
        XCTAssertTrue(plan.contains("SensorReading_deletedAt_kind_index"), plan)
    }

    func testASmallTableIsNotAnalyzed() throws {
        let container = try makeContainer(SensorReading.self)
        try insertReadings(PlannerStatistics.minimumRows - 1, into: container)
        XCTAssertEqual(try analyzedRows(), [:])
    }

    func testStatisticsAreRefreshedWhenTheTableHasDoubledNotOnEverySave() throws {
        let container = try makeContainer(SensorReading.self)
        try insertReadings(1000, into: container)
        XCTAssertEqual(try analyzedRows()["SensorReading"], 1000)
        try insertReadings(900, from: 1000, into: container)
        XCTAssertEqual(try analyzedRows()["SensorReading"], 1000, "1,900 rows is not yet twice 1,000")
        try insertReadings(100, from: 1900, into: container)
        XCTAssertEqual(try analyzedRows()["SensorReading"], 2000)

        let context = ModelContext(container)
        try context.delete(model: SensorReading.self, where: #Predicate { $0.kind != "kind 8" })
        try context.save()
        XCTAssertEqual(try analyzedRows()["SensorReading"], 2000, "10 rows left: too few to analyze again")
    }

    func testAStoreEmptiedAndFilledAgainIsAnalyzedAgain() throws {
        let container = try makeContainer(SensorReading.self)
        try insertReadings(2000, into: container)
        XCTAssertEqual(try analyzedRows()["SensorReading"], 2000)
        try container.erase()
        try insertReadings(1000, into: container)
        XCTAssertEqual(try analyzedRows()["SensorReading"], 1000, "1,000 rows is half the 2,000 analyzed")
    }

    func testAStoreFilledWithoutStatisticsIsAnalyzedWhenItOpens() throws {
        do {
            let container = try makeContainer(SensorReading.self)
            try insertReadings(1500, into: container)
        }
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { try $0.execute(sql: "DROP TABLE sqlite_stat1") }
        try queue.close()
        XCTAssertEqual(try analyzedRows(), [:])

        let reopened = try makeContainer(SensorReading.self)
        XCTAssertEqual(try analyzedRows()["SensorReading"], 1500)
        XCTAssertTrue(try plan(of: newestOfOneKind(), in: reopened).contains("SensorReading_deletedAt_kind_index"))
    }

    func testAnIndexAddedToAnAnalyzedStoreIsAnalyzedWhenItOpens() throws {
        do {
            let container = try makeContainer(SensorReading.self)
            try insertReadings(1500, into: container)
        }
        XCTAssertEqual(try analyzedRows()["SensorReading"], 1500)
        // An index the analysis has not seen, as a newly declared #Index is on an existing store.
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { try $0.execute(sql: #"CREATE INDEX "SensorReading_by_hand" ON "SensorReading"("deletedAt", "kind", "takenAt")"#) }
        try queue.close()
        XCTAssertEqual(try rawRows("SELECT idx FROM sqlite_stat1 WHERE idx = 'SensorReading_by_hand'").count, 0)

        _ = try makeContainer(SensorReading.self)
        XCTAssertEqual(try rawRows("SELECT idx FROM sqlite_stat1 WHERE idx = 'SensorReading_by_hand'").count, 1)
    }
}
