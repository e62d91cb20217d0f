import Foundation
import GRDB

/// Keeps SQLite's query-planner statistics (`sqlite_stat1`, which `ANALYZE` writes) in step with the
/// size of the store's tables.
///
/// Without statistics SQLite assumes every index narrows a search equally, so for a filter on
/// folder, language and favourite sorted by date it walks the date index through the whole table
/// rather than the folder index through a few thousand rows: at 100,000 snippets, 250 ms against
/// 10 ms. `ANALYZE` costs about 0.1 s at that size, so it runs only when a table has grown or shrunk
/// by half since it was last analyzed, and never for small tables, where every plan is fast.
final class PlannerStatistics: @unchecked Sendable {
    /// Below this many rows a table is not analyzed.
    static let minimumRows = 1000

    private struct TableState {
        /// The row count `sqlite_stat1` records for the table, or nil when it was never analyzed.
        var analyzedRows: Int?
        /// The current row count, kept up to date from saves.
        var rows: Int
    }

    /// The entity tables whose size decides, by name.
    private let state: LockedValue<[String: TableState]>
    /// Every table analyzed when one of them needs it: the entity tables and the join tables.
    private let analyzedTables: [String]

    /// Reads the recorded statistics and the current row counts, and analyzes at once if they differ
    /// too much (a store filled by an earlier version, or by another program).
    init(entityTables: [String], joinTables: [String], writer: any DatabaseWriter) throws {
        analyzedTables = entityTables + joinTables
        let initial = try writer.read { db -> [String: TableState] in
            var analyzed: [String: Int] = [:]
            var analyzedIndexes: Set<String> = []
            if try db.tableExists("sqlite_stat1") {
                for row in try Row.fetchAll(db, sql: "SELECT tbl, idx, stat FROM sqlite_stat1 WHERE idx IS NOT NULL") {
                    let table: String = row[0]
                    analyzedIndexes.insert(row[1])
                    let stat: String? = row[2]
                    if let first = stat?.split(separator: " ").first, let count = Int(first) { analyzed[table] = count }
                }
            }
            var tables: [String: TableState] = [:]
            for table in entityTables {
                let rows = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.quotedIdentifier)") ?? 0
                // An index declared since the last analysis has no statistics, and SQLite then guesses
                // that it narrows a search well: a new (deletedAt, isFavorite, updatedAt) index was
                // chosen for every newest-first page, and sorted all 100,000 rows (0.3 s a page).
                let hasUnanalyzedIndex = try db.indexes(on: table).contains { !analyzedIndexes.contains($0.name) }
                tables[table] = TableState(analyzedRows: hasUnanalyzedIndex ? nil : analyzed[table], rows: rows)
            }
            return tables
        }
        state = LockedValue(initial)
        try analyzeIfNeeded(writer: writer)
    }

    /// Records a save's inserted and deleted rows per entity table, and analyzes if a table's size
    /// moved far enough from its statistics.
    func recordChanges(inserted: [String: Int], deleted: [String: Int], writer: any DatabaseWriter) throws {
        state.withLock { tables in
            for (table, count) in inserted { tables[table]?.rows += count }
            for (table, count) in deleted {
                guard let rows = tables[table]?.rows else { continue }
                tables[table]?.rows = max(0, rows - count)
            }
        }
        try analyzeIfNeeded(writer: writer)
    }

    /// Records that every table was emptied (`deleteAllData`).
    func recordEmptied(writer: any DatabaseWriter) throws {
        state.withLock { tables in
            for name in tables.keys { tables[name]?.rows = 0 }
        }
        try analyzeIfNeeded(writer: writer)
    }

    private func analyzeIfNeeded(writer: any DatabaseWriter) throws {
        let stale = state.withLock { tables in tables.contains { Self.isStale($0.value) } }
        guard stale else { return }
        try writer.writeWithoutTransaction { db in
            for table in analyzedTables { try db.execute(sql: "ANALYZE \(table.quotedIdentifier)") }
        }
        state.withLock { tables in
            for (name, table) in tables { tables[name]?.analyzedRows = table.rows }
        }
        // A connection loads statistics when it opens: readers opened before would keep planning
        // without them.
        (writer as? DatabasePool)?.invalidateReadOnlyConnections()
    }

    private static func isStale(_ table: TableState) -> Bool {
        guard table.rows >= minimumRows else { return false }
        guard let analyzed = table.analyzedRows, analyzed > 0 else { return true }
        return table.rows >= analyzed * 2 || table.rows * 2 <= analyzed
    }
}
