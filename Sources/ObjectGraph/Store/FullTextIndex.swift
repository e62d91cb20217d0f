import Foundation
import GRDB

/// The FTS5 index of an entity's `@Attribute(.spotlight)` attributes: an external-content table
/// `_fts_<Entity>` whose rows are the entity's rows, kept in step by every save, in its transaction.
struct FullTextIndex {
    let layout: EntityLayout
    let tableName: String
    let columns: [String]
    /// The statements that keep the index in step, made once: saves run them for every row.
    private let removeSQL: String
    private let addSQL: String

    private init(layout: EntityLayout) {
        self.layout = layout
        tableName = "_fts_\(layout.name)"
        columns = layout.spotlightSlots.map(\.name)
        let columnList = columns.map(\.quotedIdentifier).joined(separator: ", ")
        removeSQL = """
            INSERT INTO \(tableName.quotedIdentifier)(\(tableName.quotedIdentifier), rowid, \(columnList))
            SELECT 'delete', "_pk", \(columnList) FROM \(layout.name.quotedIdentifier) WHERE "_pk" = ?
            """
        addSQL = """
            INSERT INTO \(tableName.quotedIdentifier)(rowid, \(columnList))
            SELECT "_pk", \(columnList) FROM \(layout.name.quotedIdentifier) WHERE "_pk" = ?
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

    /// Removes a row's current text from the index; call before the row changes or goes.
    func remove(key: Int64, in db: Database) throws {
        try db.cachedStatement(sql: removeSQL).execute(arguments: [key])
    }

    /// Adds a row's current text to the index; call after the row is written.
    func add(key: Int64, in db: Database) throws {
        try db.cachedStatement(sql: addSQL).execute(arguments: [key])
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
