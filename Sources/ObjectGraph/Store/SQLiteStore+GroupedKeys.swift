import Foundation
import GRDB

/// The kept pairs of row and group of a count's grouping (see `GroupedKeys`), read in the background.
///
/// Reading them walks every row of the entity (or of its join table): 15–25 ms per grouping at
/// 100,000 snippets, several times one count's cost. A page that finds them missing counts in SQL as
/// before and has them read off its path, so that the first page after the store opens, or after
/// another process's write, is no slower than it was; the pages after it count in memory.
extension SQLiteStore {
    /// The kept pairs of `grouping`; nil (and their reading started in the background) if there are none.
    func keptGroupedKeys(_ layout: EntityLayout, by grouping: CountGrouping) -> GroupedKeys? {
        let sql = groupedKeysSQL(layout, by: grouping)
        if let kept: GroupedKeys = aggregateCache.keptValue(sql: sql.all, arguments: []) { return kept }
        backgroundPreparation.run(key: sql.all) { [self] in
            // A failed read (the store closed meanwhile) leaves the pairs missing: counts stay in SQL.
            // Their groups' sets are made here too, off the path of the page that counts first.
            (try? groupedKeys(layout, by: grouping, inBackground: true))?.prepareCounts()
        }
        return nil
    }

    /// Every saved row's groups for `grouping`, kept; a save reads its own rows' groups again.
    func groupedKeys(_ layout: EntityLayout, by grouping: CountGrouping, inBackground: Bool = false) throws -> GroupedKeys {
        let sql = groupedKeysSQL(layout, by: grouping)
        let upkeep = CountUpkeep(entity: layout.name, count: { keys, db in
            try Self.pairs(db, sql.restricted, [CountUpkeep.keysArgument(keys)])
        }, combine: { old, before, after in
            guard let old = old as? GroupedKeys, let before = before as? GroupedKeys, let after = after as? GroupedKeys else { return nil }
            return old.replacing(before, with: after)
        })
        return try aggregateCache.value(sql: sql.all, arguments: [], upkeep: upkeep) {
            try read(inBackground: inBackground) { db in try Self.pairs(db, sql.all, []) }
        }
    }

    /// The SQL of the pairs of a grouping, and of the same pairs for a save's rows only (their keys
    /// in the first argument).
    private func groupedKeysSQL(_ layout: EntityLayout, by grouping: CountGrouping) -> (all: String, restricted: String) {
        let alias = RowQuery.alias.quotedIdentifier
        let table = layout.name.quotedIdentifier
        switch grouping {
        case .ownColumn(let column):
            return ("SELECT \(alias).\"_pk\", \(column) FROM \(table) AS \(alias)",
                    "SELECT \(alias).\"_pk\", \(column) \(CountUpkeep.fromChangedRows(of: layout.name))")
        case .relatedRows(let related, let ownerColumn, let groupColumn, let ownersAllExist):
            let owner = "\"g\".\(ownerColumn.quotedIdentifier)", group = "\"g\".\(groupColumn.quotedIdentifier)"
            // A join table's rows all have an owner, and are read as they are (testing each owner's
            // key against the table took 0.1 s for the tags of 100,000 snippets, against 10 ms). An
            // inverse foreign key may be NULL, or the key of a row of another entity.
            return ("SELECT \(owner), \(group) FROM \(related.quotedIdentifier) AS \"g\""
                        + (ownersAllExist ? "" : " WHERE \(owner) IN (SELECT \(alias).\"_pk\" FROM \(table) AS \(alias))"),
                    "SELECT \(owner), \(group) \(CountUpkeep.fromChangedRows(of: layout.name)) "
                        + "CROSS JOIN \(related.quotedIdentifier) AS \"g\" ON \(owner) = \(alias).\"_pk\"")
        }
    }

    /// The pairs a statement returns: the owner's key, then the group's value, read straight off the
    /// statement (through GRDB's generic decoding, reading them took twice as long as SQLite).
    private static func pairs(_ db: Database, _ sql: String, _ arguments: [DatabaseValue]) throws -> GroupedKeys {
        let statement = try db.cachedStatement(sql: sql)
        let sqliteStatement = statement.sqliteStatement
        let cursor = try Row.fetchCursor(statement, arguments: StatementArguments(columnValues: arguments))
        var grouped = GroupedKeys()
        while try cursor.next() != nil {
            grouped.append(Int64(sqliteStatement: sqliteStatement, index: 0), DatabaseValue(sqliteStatement: sqliteStatement, index: 1))
        }
        return grouped
    }
}

/// Work a store does off the request path: one piece at a time, on one queue, so that it takes one
/// core at most from the requests; and the same piece at most once a second, so that a store another
/// process writes again and again (which drops every kept result each time) is not read whole for
/// every page. (Started a moment later, to leave the page that asked alone, it was ready for fewer of
/// the pages after it: first visits p50 9–13 -> 11–15 ms, and the first page no faster.)
final class BackgroundPreparation: @unchecked Sendable {
    private let lock = NSLock()
    private var lastStarts: [String: Date] = [:]
    private let queue = DispatchQueue(label: "ObjectGraph.BackgroundPreparation", qos: .utility)
    private let group = DispatchGroup()
    static let interval: TimeInterval = 1

    /// Runs `work` on the background queue, unless work under the same key started less than
    /// `interval` ago.
    func run(key: String, _ work: @escaping @Sendable () -> Void) {
        let now = Date()
        let starts = lock.withLock {
            if let last = lastStarts[key], now.timeIntervalSince(last) < Self.interval { return false }
            lastStarts[key] = now
            return true
        }
        guard starts else { return }
        queue.async(group: group, execute: work)
    }

    /// Waits until no work is queued or running (for tests, which count the statements a call runs).
    func waitUntilIdle() {
        group.wait()
    }
}
