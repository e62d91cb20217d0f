import Foundation
import GRDB
import GRDBSQLite

/// The FTS5 index of an entity's `@Attribute(.spotlight)` attributes: an external-content table
/// `_fts_<Entity>` whose rows are the entity's rows, kept in step by every save, in its transaction.
struct FullTextIndex {
    let layout: EntityLayout
    let tableName: String
    let columns: [String]
    /// The statements that keep the index in step, made once. Each takes a JSON array of row keys:
    /// SQLite 3.40's FTS5 writes its pending entries to disk at every statement savepoint, and a
    /// statement per row made a save of 2,000 rows flush its index 2,000 times.
    private let removeSQL: String
    private let addSQL: String

    private init(layout: EntityLayout) {
        self.layout = layout
        tableName = "_fts_\(layout.name)"
        columns = layout.spotlightSlots.map(\.name)
        let columnList = columns.map(\.quotedIdentifier).joined(separator: ", ")
        let rows = "FROM \(layout.name.quotedIdentifier) WHERE \"_pk\" IN (SELECT value FROM json_each(?))"
        removeSQL = """
            INSERT INTO \(tableName.quotedIdentifier)(\(tableName.quotedIdentifier), rowid, \(columnList))
            SELECT 'delete', "_pk", \(columnList) \(rows)
            """
        addSQL = """
            INSERT INTO \(tableName.quotedIdentifier)(rowid, \(columnList))
            SELECT "_pk", \(columnList) \(rows)
            """
    }

    static func of(_ layout: EntityLayout) -> FullTextIndex? {
        layout.spotlightSlots.isEmpty ? nil : FullTextIndex(layout: layout)
    }

    /// Creates the index, or rebuilds it when its columns changed (or it is new on existing rows).
    func createOrUpdate(in db: Database) throws {
        if try db.tableExists(tableName) {
            let existing = try db.columns(in: tableName).map(\.name)
            if existing == columns { return }
            try db.execute(sql: "DROP TABLE \(tableName.quotedIdentifier)")
        }
        let columnList = columns.map(\.quotedIdentifier).joined(separator: ", ")
        try db.execute(sql: """
            CREATE VIRTUAL TABLE \(tableName.quotedIdentifier) USING fts5(\(columnList),
                content=\(layout.name.quotedIdentifier), content_rowid='_pk', tokenize='unicode61 remove_diacritics 2')
            """)
        try db.execute(sql: "INSERT INTO \(tableName.quotedIdentifier)(\(tableName.quotedIdentifier)) VALUES('rebuild')")
    }

    /// Removes rows' current text from the index; call before the rows change or go, and only for
    /// rows whose text is in it (FTS5 cannot tell, and a wrong removal corrupts its counts).
    func remove(keys: [Int64], in db: Database) throws {
        guard !keys.isEmpty else { return }
        try db.cachedStatement(sql: removeSQL).execute(arguments: [SQLiteStore.jsonArray(keys)])
    }

    /// The condition that the row under `alias` (the indexed entity) matches the statement's next
    /// argument, a MATCH expression, for counts over a few rows found by key: FTS5 finds a row of a
    /// MATCH by its rowid only through an equality, so the row is looked for, not listed among all hits.
    func rowMatchCondition(alias: String) -> String {
        let fts = tableName.quotedIdentifier
        return "EXISTS (SELECT 1 FROM \(fts) WHERE \(fts) MATCH ? AND \(fts).rowid = \(alias).\"_pk\")"
    }

    /// The index's table of document lengths (FTS5's `<index>_docsize`), which it rewrites with the
    /// document's entry.
    var lengthsTableName: String { tableName + "_docsize" }

    /// The tables a change of the index's entries writes.
    var writtenTables: [String] { [tableName, lengthsTableName] }

    /// Reads every document's length, the aggregate cache's key for them.
    var documentLengthsSQL: String { "SELECT \"id\", \"sz\" FROM \(lengthsTableName.quotedIdentifier)" }

    /// Every document's length in tokens, all columns together, by row key.
    func documentLengths(in db: Database) throws -> [(key: Int64, length: Int32)] {
        try lengths(db.cachedStatement(sql: documentLengthsSQL), arguments: [])
    }

    /// The lengths of the documents of `keys` that there are.
    func documentLengths(of keys: [Int64], in db: Database) throws -> [(key: Int64, length: Int32)] {
        let sql = documentLengthsSQL + " WHERE \"id\" IN (SELECT value FROM json_each(?))"
        return try lengths(db.cachedStatement(sql: sql), arguments: [SQLiteStore.jsonArray(keys)])
    }

    /// How the kept lengths follow a save that rewrote a few entries: those documents' lengths read again.
    var lengthsUpkeep: CountUpkeep {
        CountUpkeep(entity: layout.name, count: { keys, db in
            (keys, try documentLengths(of: keys, in: db))
        }, combine: { old, _, after in
            guard let old = old as? DocumentLengths, let (keys, new) = after as? ([Int64], [(key: Int64, length: Int32)]) else { return nil }
            return old.replacing(keys, with: new)
        })
    }

    /// The lengths a statement returns (key, `_docsize` entry), read straight off the statement:
    /// through GRDB's rows, reading 100,000 took about twice as long.
    private func lengths(_ statement: Statement, arguments: StatementArguments) throws -> [(key: Int64, length: Int32)] {
        var lengths: [(key: Int64, length: Int32)] = []
        let sqliteStatement = statement.sqliteStatement
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        while try rows.next() != nil {
            let key = sqlite3_column_int64(sqliteStatement, 0)
            let entry = UnsafeRawBufferPointer(
                start: sqlite3_column_blob(sqliteStatement, 1), count: Int(sqlite3_column_bytes(sqliteStatement, 1)))
            // A row with a malformed entry is left out: its length is then read by FTS5 itself.
            if let length = Self.totalLength(encoded: entry, columns: columns.count) { lengths.append((key, length)) }
        }
        return lengths
    }

    /// The sum of a `_docsize` entry's lengths: one SQLite varint per column.
    static func totalLength(encoded bytes: UnsafeRawBufferPointer, columns: Int) -> Int32? {
        var offset = 0
        var total: UInt64 = 0
        for _ in 0..<columns {
            var value: UInt64 = 0
            var finished = false
            // Seven bits a byte, high bit set on all but the last; a ninth byte holds eight.
            for position in 0..<9 where !finished {
                guard offset < bytes.count else { return nil }
                let byte = bytes[offset]
                offset += 1
                if position == 8 {
                    value = (value << 8) | UInt64(byte)
                    finished = true
                } else {
                    value = (value << 7) | UInt64(byte & 0x7f)
                    finished = byte & 0x80 == 0
                }
            }
            total &+= value
        }
        return total <= UInt64(Int32.max) ? Int32(total) : nil
    }

    /// Adds rows' current text to the index; call after the rows are written.
    func add(keys: [Int64], in db: Database) throws {
        guard !keys.isEmpty else { return }
        try db.cachedStatement(sql: addSQL).execute(arguments: [SQLiteStore.jsonArray(keys)])
    }
}

/// The rows of one save whose full-text entries are out of the index until the save ends, by
/// entity: removed before their rows changed (or new), added back in one statement per entity.
struct PendingFullTextEntries {
    private(set) var keysByEntity: [String: Set<Int64>] = [:]

    func contains(_ key: Int64, of entity: String) -> Bool { keysByEntity[entity]?.contains(key) == true }

    mutating func insert(_ keys: [Int64], of entity: String) {
        keysByEntity[entity, default: []].formUnion(keys)
    }
}

extension EntityLayout {
    /// Text attributes marked `.spotlight`, which the full-text index covers, in declaration order.
    var spotlightSlots: [PropertySlot] {
        columnSlots.filter { slot in
            slot.attribute?.options.contains(.spotlight) == true && slot.wrappedValueType == String.self
        }
    }
}
