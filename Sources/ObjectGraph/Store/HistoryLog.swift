import Foundation
import GRDB

/// The store's history: one row per save that wrote, in the same transaction as what it wrote, so
/// that the history never lists a change that was rolled back or misses one that committed.
///
/// A transaction's changes are kept as runs (consecutive changes of one kind to one entity, and for
/// updates one set of properties), each a list of row keys: a save of 100,000 new snippets is one
/// run and one row, not 100,000 rows, so that recording costs the insert benchmark little. The
/// runs are text, one line each (see `encode`): `JSONEncoder` took about 4,000 instructions a key.
enum HistoryLog {
    static let table = "_objectgraph_history"

    /// `AUTOINCREMENT`: a transaction's number is never given again, even once `deleteHistory`
    /// removed it, so a token kept by a reader never comes to mean a later transaction.
    static func createTable(in db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(table.quotedIdentifier) (
                "transaction" INTEGER PRIMARY KEY AUTOINCREMENT,
                "timestamp" REAL NOT NULL,
                "author" TEXT,
                "bundle" TEXT NOT NULL,
                "process" TEXT NOT NULL,
                "changes" TEXT NOT NULL)
            """)
    }

    enum Kind: String {
        case insert, update, delete
    }

    /// Consecutive changes of one kind to rows of one entity.
    struct Run: Equatable {
        var entity: String
        var kind: Kind
        /// For updates: the properties written, by name.
        var properties: [String]?
        var keys: [Int64]
        /// For deletes of an entity with `.preserveValueOnDeletion` attributes: their names, and
        /// each deleted row's values of them, in `keys`' order.
        var preserved: [String]?
        var tombstones: [[PreservedValue]]?
    }

    /// A column value as the history keeps it (the column's own form, decoded when read).
    enum PreservedValue: Codable, Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob(Data)

        init(_ value: DatabaseValue) {
            switch value.storage {
            case .null: self = .null
            case .int64(let number): self = .integer(number)
            case .double(let number): self = .real(number)
            case .string(let text): self = .text(text)
            case .blob(let data): self = .blob(data)
            }
        }

        var databaseValue: DatabaseValue {
            switch self {
            case .null: .null
            case .integer(let number): number.databaseValue
            case .real(let number): number.databaseValue
            case .text(let text): text.databaseValue
            case .blob(let data): data.databaseValue
            }
        }
    }

    /// What one save changed, gathered while it writes.
    struct Recorder {
        private(set) var runs: [Run] = []

        private mutating func append(_ key: Int64, kind: Kind, entity: String, properties: [String]? = nil,
                                     tombstone: [PreservedValue]? = nil, preserved: [String]? = nil) {
            if let last = runs.indices.last, runs[last].entity == entity, runs[last].kind == kind,
               runs[last].properties == properties, runs[last].preserved == preserved {
                // In place: a copy of the run would copy its keys at every append.
                runs[last].keys.append(key)
                if let tombstone { runs[last].tombstones?.append(tombstone) }
                return
            }
            runs.append(Run(entity: entity, kind: kind, properties: properties, keys: [key], preserved: preserved,
                            tombstones: tombstone.map { [$0] }))
        }

        mutating func inserted(_ key: Int64, of layout: EntityLayout) {
            append(key, kind: .insert, entity: layout.name)
        }

        /// `slots` in declaration order; an update that wrote nothing is not one.
        mutating func updated(_ key: Int64, of layout: EntityLayout, slots: [Int]) {
            guard !slots.isEmpty else { return }
            append(key, kind: .update, entity: layout.name, properties: slots.map { layout.slots[$0].name })
        }

        /// Notes rows about to be deleted, with the values of their preserved attributes, read now,
        /// while the rows (and any external file they name) are still there. Call before the delete;
        /// `deleted(_:of:)` then records each row the delete removed.
        func tombstones(of layout: EntityLayout, keys: [Int64], externalStorage: ExternalStorage?,
                        in db: Database) throws -> [Int64: [PreservedValue]] {
            let slots = layout.preservedSlots
            guard !slots.isEmpty, !keys.isEmpty else { return [:] }
            let columns = slots.map { "\(RowQuery.alias.quotedIdentifier).\($0.name.quotedIdentifier)" }.joined(separator: ", ")
            let condition = RowQuery.keyIsAmong(keys)
            let sql = "SELECT \(RowQuery.alias.quotedIdentifier).\"_pk\", \(columns) FROM \(layout.name.quotedIdentifier) "
                + "AS \(RowQuery.alias.quotedIdentifier) WHERE \(condition.sql)"
            var values: [Int64: [PreservedValue]] = [:]
            for row in try Row.fetchAll(db, sql: sql, arguments: StatementArguments(columnValues: condition.arguments)) {
                let key: Int64 = row[0]
                values[key] = try slots.enumerated().map { position, slot in
                    var value: DatabaseValue = row[position + 1]
                    // The file goes once the delete commits: the history keeps the value itself.
                    if slot.isExternalStorage, let name = ExternalStorage.referencedFileName(in: value), let externalStorage {
                        value = try externalStorage.read(name).databaseValue
                    }
                    return PreservedValue(value)
                }
            }
            return values
        }

        mutating func deleted(_ key: Int64, of layout: EntityLayout, tombstones: [Int64: [PreservedValue]]) {
            let slots = layout.preservedSlots
            guard !slots.isEmpty else {
                append(key, kind: .delete, entity: layout.name)
                return
            }
            append(key, kind: .delete, entity: layout.name,
                   tombstone: tombstones[key] ?? slots.map { _ in .null }, preserved: slots.map(\.name))
        }

        /// Adds the transaction's row, unless the save changed nothing; returns its number.
        func write(author: String?, in db: Database) throws -> Int64? {
            guard !runs.isEmpty else { return nil }
            try db.execute(
                sql: "INSERT INTO \(HistoryLog.table.quotedIdentifier) (\"timestamp\", \"author\", \"bundle\", \"process\", \"changes\") "
                    + "VALUES (?, ?, ?, ?, ?)",
                arguments: [Date().timeIntervalSince1970, author, HistoryLog.bundleIdentifier, HistoryLog.processIdentifier,
                            try HistoryLog.encode(runs)])
            return db.lastInsertedRowID
        }
    }

    /// One line per run, its fields separated by tabs: kind, entity, the properties (comma-separated),
    /// the keys (comma-separated), and for deletes that preserve values the preserved properties
    /// and the tombstones as JSON. Entity and property names are Swift identifiers, which hold no
    /// tab, newline or comma; JSON escapes both in its strings.
    static func encode(_ runs: [Run]) throws -> String {
        var text: [UInt8] = []
        text.reserveCapacity(runs.reduce(0) { $0 + 32 + $1.keys.count * 8 })
        for run in runs {
            text += Array((run.kind.rawValue + "\t" + run.entity + "\t" + (run.properties ?? []).joined(separator: ",") + "\t").utf8)
            for (position, key) in run.keys.enumerated() {
                if position > 0 { text.append(UInt8(ascii: ",")) }
                appendDecimal(key, to: &text)
            }
            if let preserved = run.preserved, let tombstones = run.tombstones {
                text += Array(("\t" + preserved.joined(separator: ",") + "\t").utf8)
                text += try JSONEncoder().encode(tombstones)
            }
            text.append(UInt8(ascii: "\n"))
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A key's digits, written straight into the text: `String(key)` per key, joined, was about
    /// 1,500 instructions a key, most of a bulk insert's history.
    private static func appendDecimal(_ value: Int64, to text: inout [UInt8]) {
        if value < 0 { text.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                      UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            for index in stride(from: count - 1, through: 0, by: -1) { text.append(buffer[index]) }
        }
    }

    /// The error of a transaction's row that cannot be read, and why.
    private static func unreadable(_ transaction: Int64, _ why: String) -> SwiftDataError {
        SwiftDataError(.storeFailure, "the history of transaction \(transaction) cannot be read: \(why)")
    }

    static func decode(_ text: String, transaction: Int64) throws -> [Run] {
        func unreadable(_ why: String) -> SwiftDataError { Self.unreadable(transaction, why) }
        func names(_ field: Substring) -> [String] {
            field.isEmpty ? [] : field.split(separator: ",").map(String.init)
        }
        return try text.split(separator: "\n").map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 4 || fields.count == 6, let kind = Kind(rawValue: String(fields[0])) else {
                throw unreadable("a change of an unknown form")
            }
            let keys = try fields[3].split(separator: ",").map { field in
                guard let key = Int64(field) else { throw unreadable("a row key that is not a number") }
                return key
            }
            var run = Run(entity: String(fields[1]), kind: kind, properties: kind == .update ? names(fields[2]) : nil, keys: keys)
            if fields.count == 6 {
                run.preserved = names(fields[4])
                do {
                    run.tombstones = try JSONDecoder().decode([[PreservedValue]].self, from: Data(fields[5].utf8))
                } catch {
                    throw unreadable("\(error)")
                }
            }
            return run
        }
    }

    static let bundleIdentifier = Bundle.main.bundleIdentifier ?? ""
    static let processIdentifier = String(ProcessInfo.processInfo.processIdentifier)

    /// One transaction as stored.
    struct Entry {
        let transaction: Int64
        let timestamp: Date
        let author: String?
        let bundle: String
        let process: String
        /// The runs as recorded, decoded when they are first read (`decode(_:transaction:)`).
        let changes: String
    }

    /// The recorded transactions from `least` on, oldest first. A store made before ObjectGraph kept
    /// history has none. A row whose values are not of their columns' kinds (written from outside
    /// ObjectGraph) is an error that names the transaction.
    static func entries(from least: Int64, in db: Database) throws -> [Entry] {
        guard try db.tableExists(table) else { return [] }
        return try Row.fetchAll(db, sql: """
            SELECT "transaction", "timestamp", "author", "bundle", "process", "changes"
            FROM \(table.quotedIdentifier) WHERE "transaction" >= ? ORDER BY "transaction"
            """, arguments: [least]).map { row in
            let transaction: Int64 = row[0]
            return try readable(transaction) {
                Entry(transaction: transaction, timestamp: Date(timeIntervalSince1970: try row.decode(atIndex: 1)),
                      author: try row.decode(atIndex: 2), bundle: try row.decode(atIndex: 3),
                      process: try row.decode(atIndex: 4), changes: try row.decode(atIndex: 5))
            }
        }
    }

    /// `read()`, or a `.storeFailure` that names the transaction whose row could not be read.
    private static func readable<T>(_ transaction: Int64, _ read: () throws -> T) throws -> T {
        do {
            return try read()
        } catch {
            throw unreadable(transaction, "\(error)")
        }
    }

    /// The runs of the transactions after `transaction`, and the newest transaction (`transaction`
    /// itself when there is none after it).
    ///
    /// `complete` is false when a transaction after `transaction` is missing: `deleteHistory` removed
    /// it before this reader saw it. Transactions are numbered one after another (a save that rolls
    /// back takes its number back with it), so a gap is the only trace of what it wrote.
    static func runs(after transaction: Int64, in db: Database) throws -> (runs: [Run], newest: Int64, complete: Bool) {
        guard try db.tableExists(table) else { return ([], transaction, true) }
        var runs: [Run] = []
        var newest = transaction
        var complete = true
        let rows = try Row.fetchCursor(db, sql: """
            SELECT "transaction", "changes" FROM \(table.quotedIdentifier) WHERE "transaction" > ? ORDER BY "transaction"
            """, arguments: [transaction])
        while let row = try rows.next() {
            let number: Int64 = row[0]
            if number != newest + 1 { complete = false }
            newest = number
            runs += try decode(try readable(number) { try row.decode(String.self, atIndex: 1) }, transaction: number)
        }
        return (runs, newest, complete)
    }

    /// The newest transaction number ever given, deleted or not, 0 for none: `AUTOINCREMENT` keeps it.
    static func newestNumberGiven(in db: Database) throws -> Int64 {
        guard try db.tableExists(table) else { return 0 }
        return try Int64.fetchOne(db, sql: "SELECT \"seq\" FROM sqlite_sequence WHERE \"name\" = ?", arguments: [table]) ?? 0
    }

    /// The newest transaction recorded, 0 for none.
    static func newestTransaction(in db: Database) throws -> Int64 {
        guard try db.tableExists(table) else { return 0 }
        return try Int64.fetchOne(db, sql: "SELECT MAX(\"transaction\") FROM \(table.quotedIdentifier)") ?? 0
    }

    static func delete(transactions: [Int64], in db: Database) throws {
        guard !transactions.isEmpty, try db.tableExists(table) else { return }
        try db.execute(sql: "DELETE FROM \(table.quotedIdentifier) WHERE \"transaction\" IN (SELECT value FROM json_each(?))",
                       arguments: [SQLiteStore.jsonArray(transactions)])
    }
}
