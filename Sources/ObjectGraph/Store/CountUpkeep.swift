import Foundation
import GRDB

/// How a cached count follows a save that changed a few of the rows it counts.
///
/// A count is a sum over rows: each row adds to its group or not, by its own columns, its own join
/// rows and its own full-text entry. A save that changes rows `K` changes only their part, so the new
/// result is the old one, less what `K` added before the save, plus what `K` adds after it. Both are
/// the same query restricted to `K` (a few key lookups), run inside the save's transaction. Trashing a
/// snippet used to drop the counts per tag of every list, 0.15 s each to compute again at 100,000
/// snippets; now it costs two lookups per count.
///
/// A search's first ranks follow a save the same way (the hits among the changed rows taken out, then
/// put back at their places), but only when the save leaves the full-text index alone: bm25 weighs
/// every hit by the whole index, so a change to it moves every score.
struct CountUpkeep: @unchecked Sendable {
    /// The counted entity: the table the count's SQL reads as `t0`, and the only place it names it.
    let entity: String
    /// Tables whose change the result cannot follow, even through the changed rows.
    let refusedTables: Set<String>
    /// The count over the rows with these keys only, in the form `combine` takes.
    let count: (_ keys: [Int64], _ db: Database) throws -> Any
    /// The result brought up to date (`old - before + after`), or nil when the parts do not fit.
    let combine: (_ old: Any, _ before: Any, _ after: Any) -> Any?

    init(
        entity: String, refusing refusedTables: Set<String> = [],
        count: @escaping (_ keys: [Int64], _ db: Database) throws -> Any,
        combine: @escaping (_ old: Any, _ before: Any, _ after: Any) -> Any?
    ) {
        self.entity = entity
        self.refusedTables = refusedTables
        self.count = count
        self.combine = combine
    }

    /// Joins `entity` (as `t0`) to the keys in the statement's first argument, a JSON array, and to
    /// nothing else: each key is one row found by its primary key. (`CROSS JOIN` makes SQLite walk
    /// the keys, not the table.)
    static func fromChangedRows(of entity: String) -> String {
        let alias = RowQuery.alias.quotedIdentifier
        return "FROM json_each(?) AS \"changedRows\" CROSS JOIN \(entity.quotedIdentifier) AS \(alias) "
            + "ON \(alias).\"_pk\" = \"changedRows\".\"value\""
    }

    /// The argument `fromChangedRows(of:)` reads.
    static func keysArgument(_ keys: [Int64]) -> DatabaseValue {
        SQLiteStore.jsonArray(keys).databaseValue
    }

    /// A count of rows (`SELECT COUNT(*)`), restricted by `restrictedSQL`, whose first argument is the keys.
    static func total(entity: String, restrictedSQL: String, arguments: [DatabaseValue]) -> CountUpkeep {
        CountUpkeep(entity: entity, count: { keys, db in
            try Int.fetchOne(
                db.cachedStatement(sql: restrictedSQL),
                arguments: StatementArguments(columnValues: [keysArgument(keys)] + arguments)) ?? 0
        }, combine: { old, before, after in
            guard let old = old as? Int, let before = before as? Int, let after = after as? Int else { return nil }
            let new = old - before + after
            return new >= 0 ? new : nil
        })
    }

    /// Counts per group (`SELECT group, COUNT(*) … GROUP BY 1`), restricted by `restrictedSQL`, whose
    /// first argument is the keys.
    static func grouped(entity: String, restrictedSQL: String, arguments: [DatabaseValue]) -> CountUpkeep {
        CountUpkeep(entity: entity, count: { keys, db in
            try groupedRows(db, sql: restrictedSQL, arguments: [keysArgument(keys)] + arguments)
        }, combine: { old, before, after in
            guard let old = old as? [(DatabaseValue, Int)], let before = before as? [(DatabaseValue, Int)],
                  let after = after as? [(DatabaseValue, Int)] else { return nil }
            var counts = Dictionary(old, uniquingKeysWith: +)
            for (group, count) in before { counts[group, default: 0] -= count }
            for (group, count) in after { counts[group, default: 0] += count }
            // A group's count below zero means the old result did not hold what the save's rows had added.
            guard counts.values.allSatisfy({ $0 >= 0 }) else { return nil }
            return counts.filter { $0.value > 0 }.map { ($0.key, $0.value) }
        })
    }

    /// A set of matching keys (`SELECT _pk`, see `KeySet`), restricted by `restrictedSQL`, whose first
    /// argument is the keys.
    static func keys(entity: String, restrictedSQL: String, arguments: [DatabaseValue]) -> CountUpkeep {
        CountUpkeep(entity: entity, count: { keys, db in
            try Int64.fetchAll(db.cachedStatement(sql: restrictedSQL), arguments: StatementArguments(columnValues: [keysArgument(keys)] + arguments))
        }, combine: { old, before, after in
            guard let old = old as? KeySet, let before = before as? [Int64], let after = after as? [Int64] else { return nil }
            return old.replacing(before, with: after)
        })
    }

    /// The rows of a grouped count: each group's value and its count.
    static func groupedRows(_ db: Database, sql: String, arguments: [DatabaseValue]) throws -> [(DatabaseValue, Int)] {
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(columnValues: arguments)).map { row in
            (row[0] as DatabaseValue, row[1] as Int)
        }
    }
}

/// The rows of one entity a save changes, and whether its counts can follow them.
struct ChangedRows {
    /// Keys of the rows updated, deleted or given new join rows; after the writes, also those inserted.
    var keys: Set<Int64> = []
    /// Tables this save changes only in the rows of `keys`, or their full-text entries and join rows.
    var accountedTables: Set<String> = []
    /// False when some change is not tied to known rows (a batch delete, an insert that took over a
    /// saved row), or when there are too many rows for lookups to beat counting afresh.
    var canKeepCounts = true

    /// A user's save changes a few rows. A bulk save (an import, a folder deleted with its snippets)
    /// would look each of its rows up twice for every cached count, where dropping the counts costs
    /// only the few that are read again; past this many rows, they are dropped.
    static let limit = 256
}

/// A save's upkeep of the cached counts: what the rows it changes counted before it wrote, and,
/// once it has written, each count brought up to date.
struct SaveUpkeep {
    struct Pending {
        let key: AggregateCacheKey
        let serial: UInt64
        let old: Any
        let upkeep: CountUpkeep
        let before: Any
    }

    let pending: [Pending]
    private(set) var updatedValues: [AggregateCacheKey: (value: Any, serial: UInt64)] = [:]

    init(pending: [Pending]) {
        self.pending = pending
    }

    /// Counts the changed rows again after the save's writes, in its transaction, and combines.
    /// `changedRows` now holds the inserted rows' keys too.
    mutating func finish(changedRows: [String: ChangedRows], in db: Database) throws {
        for item in pending {
            guard let rows = changedRows[item.upkeep.entity], rows.canKeepCounts else { continue }
            let after = try item.upkeep.count(Array(rows.keys), db)
            if let value = item.upkeep.combine(item.old, item.before, after) {
                updatedValues[item.key] = (value, item.serial)
            }
        }
    }
}
