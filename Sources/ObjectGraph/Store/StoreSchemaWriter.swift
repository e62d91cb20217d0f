import Foundation
import GRDB

/// Creates the tables and indexes of a schema, and records the schema in the store's metadata table
/// so that a later open can tell what changed.
struct StoreSchemaWriter {
    static let metadataTable = "_objectgraph_metadata"
    let schema: Schema

    func createOrUpdate(in writer: any DatabaseWriter) throws {
        do {
            try writer.write { db in try createOrUpdate(in: db) }
        } catch let error as SwiftDataError {
            throw error
        } catch {
            throw SwiftDataError(.loadIssueModelContainer, "cannot prepare the store's tables: \(error)")
        }
    }

    /// Creates what is missing (tables, columns, indexes, join tables) and records the schema.
    func createOrUpdate(in db: Database) throws {
        try Self.createMetadataTable(in: db)
        // Every store a container opens has had its dates converted, if it needed it, by `StoreMigrator`.
        try StoredDates.recordCurrentFormIfAbsent(in: db)
        try HistoryLog.createTable(in: db)
        for entity in schema.entities {
            try createOrUpdateTable(of: entity.layout, in: db)
        }
        for entity in schema.entities {
            try FullTextIndex.of(entity.layout)?.createOrUpdate(in: db)
        }
        try recordSchema(in: db)
    }

    /// The CREATE TABLE statement of an entity, under another name when rebuilding it.
    static func createTableSQL(of layout: EntityLayout, named name: String? = nil) -> String {
        // Short fixed-size columns (numbers, dates, flags, enums, keys) come before text and data: SQLite
        // reads a column by walking the record, and a long text spills onto overflow pages that a filter
        // on a later column would have to follow. Statements name their columns, so the order is free.
        let (short, long) = layout.storedColumnSlots.reduce(into: ([PropertySlot](), [PropertySlot]())) { split, slot in
            if holdsLongValues(slot) { split.1.append(slot) } else { split.0.append(slot) }
        }
        let columns = ["\"_pk\" INTEGER PRIMARY KEY AUTOINCREMENT", "\"_version\" INTEGER NOT NULL DEFAULT 1"]
            + (short + long).map(columnDefinition)
        return "CREATE TABLE \((name ?? layout.name).quotedIdentifier) (\(columns.joined(separator: ", ")))"
    }

    private func createOrUpdateTable(of layout: EntityLayout, in db: Database) throws {
        let table = layout.name.quotedIdentifier
        if try db.tableExists(layout.name) {
            let existing = Set(try db.columns(in: layout.name).map(\.name))
            for slot in layout.storedColumnSlots where !existing.contains(slot.name) {
                try addColumn(slot, to: layout, in: db)
            }
        } else {
            try db.execute(sql: Self.createTableSQL(of: layout))
        }
        try createUniqueIndexes(of: layout, in: db)
        // Foreign keys are indexed: loading a to-many side and applying delete rules search by them.
        for slot in layout.foreignKeySlots {
            let index = EntityLayout.foreignKeyIndexName(entity: layout.name, slot: slot).quotedIdentifier
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS \(index) ON \(table)(\(slot.name.quotedIdentifier))")
        }
        try createDeclaredIndexes(of: layout, in: db)
        for slot in layout.toManySlots {
            guard let joinTable = layout.mapping(for: slot).writtenJoinTable else { continue }
            try Self.createJoinTable(joinTable.name, in: db)
        }
    }

    /// One unique index per uniqueness constraint. A unique index ObjectGraph made for a constraint no
    /// longer declared is dropped first, or it would go on refusing what the schema now allows; its
    /// name ends in `_unique`, which tells it from a unique index made by other means. Adding a
    /// constraint to a store whose rows break it fails here, inside the migration's transaction.
    private func createUniqueIndexes(of layout: EntityLayout, in db: Database) throws {
        let table = layout.name.quotedIdentifier
        let declared = Set(layout.uniquenessConstraints.map(\.indexName))
        for index in try db.indexes(on: layout.name)
        where index.origin == .createIndex && index.isUnique && index.name.hasSuffix("_unique") && !declared.contains(index.name) {
            try db.execute(sql: "DROP INDEX IF EXISTS \(index.name.quotedIdentifier)")
        }
        for constraint in layout.uniquenessConstraints {
            let columns = constraint.slots.map(\.name.quotedIdentifier).joined(separator: ", ")
            try db.execute(sql: "CREATE UNIQUE INDEX IF NOT EXISTS \(constraint.indexName.quotedIdentifier) ON \(table)(\(columns))")
        }
    }

    /// The indexes `#Index` declares, created on every open so that a store written before an index
    /// was declared gets it without a migration. An index ObjectGraph made for an index no longer
    /// declared is dropped, as every write would keep paying for it; ObjectGraph's names end in `_index`
    /// (those of unique attributes and foreign keys do not), which tells them from other indexes.
    private func createDeclaredIndexes(of layout: EntityLayout, in db: Database) throws {
        let table = layout.name.quotedIdentifier
        let existing = try db.indexes(on: layout.name).filter { $0.origin == .createIndex && !$0.isUnique }
        let existingColumns = Dictionary(existing.map { ($0.name, $0.columns) }, uniquingKeysWith: { first, _ in first })
        var declared = Set<String>()
        for columns in layout.indexes {
            let name = EntityLayout.indexName(entity: layout.name, columns: columns)
            let columnNames = columns.map(\.columnName)
            declared.insert(name)
            if let found = existingColumns[name] {
                if found == columnNames { continue }
                // The same name on other columns: property names with underscores, changed since.
                try db.execute(sql: "DROP INDEX \(name.quotedIdentifier)")
            }
            let list = columnNames.map(\.quotedIdentifier).joined(separator: ", ")
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS \(name.quotedIdentifier) ON \(table)(\(list))")
        }
        for index in existing where index.name.hasSuffix("_index") && !declared.contains(index.name) {
            try db.execute(sql: "DROP INDEX IF EXISTS \(index.name.quotedIdentifier)")
        }
    }

    /// A join table: one row per related pair, with each side's position in its array.
    static func createJoinTable(_ name: String, in db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(name.quotedIdentifier) (
                "source" INTEGER NOT NULL, "destination" INTEGER NOT NULL,
                "position" INTEGER NOT NULL DEFAULT 0, "inversePosition" INTEGER,
                PRIMARY KEY ("source", "destination"))
            """)
        // The other side's key with the owner's: loading the other side, counting per destination and
        // a relationship condition probed for one destination (snippets with a tag) read the pairs
        // from this index alone, and the probes of one destination stay in its part of the index,
        // where those through the primary key jump across all of it. With both tags of a two-tag
        // filter, the newest page's query went from 4–7 ms to 3 ms in `sqlite3` on 100,000 snippets.
        let index = EntityLayout.joinTableIndexName(table: name)
        let isNew = try !db.indexes(on: name).contains { $0.name == index }
        try db.execute(sql: """
            CREATE INDEX IF NOT EXISTS \(index.quotedIdentifier) ON \(name.quotedIdentifier)("destination", "source")
            """)
        // The index before, on the destination alone, which this one covers.
        try db.execute(sql: "DROP INDEX IF EXISTS \("\(name)_destination".quotedIdentifier)")
        // SQLite prefers the primary key for those probes unless the new index has statistics too.
        if isNew, try db.tableExists("sqlite_stat1") {
            try db.execute(sql: "ANALYZE \(index.quotedIdentifier)")
        }
    }

    /// Strings, data and values stored as JSON can be long; enums with a raw value are short.
    static func holdsLongValues(_ slot: PropertySlot) -> Bool {
        guard !slot.isForeignKey, let codec = slot.codec else { return false }
        let type = slot.wrappedValueType
        if slot.isExternalStorage || type == String.self || type == Data.self { return true }
        return codec.columnType == "TEXT" && !(type is any RawRepresentable.Type)
    }

    static func columnDefinition(_ slot: PropertySlot) -> String {
        // A to-one relationship holds the related row's key; the context, not SQLite, keeps it valid,
        // so that rows can be written in any order within a save.
        if slot.isForeignKey { return slot.name.quotedIdentifier + " INTEGER" }
        guard let codec = slot.codec else { return slot.name.quotedIdentifier }
        // External-storage columns hold either an inline BLOB or a file name, so they get no declared type.
        let type = slot.isExternalStorage ? "" : " \(codec.columnType)"
        return slot.name.quotedIdentifier + type + (codec.isOptional ? "" : " NOT NULL")
    }

    /// A column added to an existing table takes the property's default value in existing rows;
    /// a non-optional property without a default cannot be added without losing rows.
    private func addColumn(_ slot: PropertySlot, to layout: EntityLayout, in db: Database) throws {
        if slot.isForeignKey {
            try db.execute(sql: "ALTER TABLE \(layout.name.quotedIdentifier) ADD COLUMN \(Self.columnDefinition(slot))")
            return
        }
        guard let codec = slot.codec else { return }
        var definition = slot.name.quotedIdentifier + (slot.isExternalStorage ? "" : " \(codec.columnType)")
        var fill: DatabaseValue?
        if !codec.isOptional {
            guard let defaultValue = slot.defaultValue, let encoded = try? codec.encode(defaultValue) else {
                throw SwiftDataError(
                    .incompatibleSchema,
                    "\(layout.name).\(slot.name) is new, not optional and has no default value, so existing "
                        + "\(layout.name) rows cannot get one: give it a default or make it optional",
                    entity: layout.name, property: slot.name)
            }
            fill = encoded
        }
        if fill != nil { definition += " NOT NULL DEFAULT 0" }
        try db.execute(sql: "ALTER TABLE \(layout.name.quotedIdentifier) ADD COLUMN \(definition)")
        if let fill {
            try db.execute(sql: "UPDATE \(layout.name.quotedIdentifier) SET \(slot.name.quotedIdentifier) = ?",
                           arguments: [fill])
        }
    }

    static func createMetadataTable(in db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(metadataTable.quotedIdentifier) (
                "key" TEXT PRIMARY KEY NOT NULL, "value" TEXT NOT NULL)
            """)
    }

    /// The value the metadata table keeps under `key`; nil without one, or without the table.
    static func metadataValue(_ key: String, in db: Database) throws -> String? {
        guard try db.tableExists(metadataTable) else { return nil }
        return try String.fetchOne(
            db, sql: "SELECT \"value\" FROM \(metadataTable.quotedIdentifier) WHERE \"key\" = ?", arguments: [key])
    }

    static func recordedSchema(in db: Database) throws -> StoredSchema? {
        guard let json = try metadataValue("schema", in: db) else { return nil }
        return try? JSONCoding.decoder.decode(StoredSchema.self, from: Data(json.utf8))
    }

    private func recordSchema(in db: Database) throws {
        let description = StoredSchema(schema: schema)
        let json = String(decoding: try JSONCoding.encoder.encode(description), as: UTF8.self)
        let upsert = """
            INSERT INTO \(Self.metadataTable.quotedIdentifier) ("key", "value") VALUES (?, ?)
            ON CONFLICT("key") DO UPDATE SET "value" = excluded."value"
            """
        try db.execute(sql: upsert, arguments: ["schemaVersion", schema.version.description])
        try db.execute(sql: upsert, arguments: ["schema", json])
    }
}
