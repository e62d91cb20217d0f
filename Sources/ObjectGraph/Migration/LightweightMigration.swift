import Foundation
import GRDB

/// Carries a store's tables from a recorded schema to the code's schema, for the changes that need
/// no code: attributes and relationships added, removed or renamed (`originalName`), an attribute made
/// optional, or made required with a default, delete rules changed, `.unique` or `#Unique` added or dropped,
/// `.externalStorage` added or removed. Anything else (a type change, a new required attribute without
/// a default) throws an error naming the entity and property, before anything is written.
///
/// A table that changes is rebuilt: created anew, filled from the old one with one INSERT … SELECT,
/// then swapped in. It runs inside the caller's transaction.
struct LightweightMigration {
    let old: StoredSchema
    let new: Schema
    let externalStorage: ExternalStorage?
    /// Files written for values that moved out of rows; removed again if the migration fails.
    private(set) var writtenFiles: [String] = []
    /// Files whose values moved into rows; removed once the migration has committed.
    private(set) var releasedFiles: [String] = []

    init(old: StoredSchema, new: Schema, externalStorage: ExternalStorage?) {
        self.old = old
        self.new = new
        self.externalStorage = externalStorage
    }

    /// Throws, before any change, if the migration cannot be done without losing data.
    func check() throws {
        for entity in new.entities {
            guard let oldEntity = previous(of: entity) else { continue }
            _ = try columnPlan(entity.layout, from: oldEntity)
        }
    }

    mutating func apply(in db: Database) throws {
        try check()
        for entity in new.entities {
            // A renamed entity's table takes its new name first; everything else follows by name.
            if let oldEntity = previous(of: entity), oldEntity.name != entity.name,
               try db.tableExists(oldEntity.name), try !db.tableExists(entity.name) {
                try db.execute(sql: "DROP TABLE IF EXISTS \("_fts_\(oldEntity.name)".quotedIdentifier)")
                try db.execute(sql: "ALTER TABLE \(oldEntity.name.quotedIdentifier) RENAME TO \(entity.name.quotedIdentifier)")
            }
            guard let oldEntity = previous(of: entity), try db.tableExists(entity.name) else { continue }
            let plan = try columnPlan(entity.layout, from: oldEntity)
            // Unique indexes no longer declared are dropped, and new ones made, by `StoreSchemaWriter` after this.
            if plan.needsRebuild {
                try rebuild(entity.layout, plan: plan, in: db)
            }
            try moveExternalValues(entity.layout, from: oldEntity, in: db)
        }
        try migrateJoinTables(in: db)
        let carriedOver = Set(new.entities.compactMap { previous(of: $0)?.name })
        for oldEntity in old.entities where !carriedOver.contains(oldEntity.name) {
            try db.execute(sql: "DROP TABLE IF EXISTS \(oldEntity.name.quotedIdentifier)")
        }
    }

    /// The recorded entity a new one continues: the same name, or the name it declares as original
    /// (see ``OriginallyNamedModel``).
    private func previous(of entity: Schema.Entity) -> StoredSchema.Entity? {
        if let same = old.entity(named: entity.name) { return same }
        guard let original = entity.originalName, new.entitiesByName[original] == nil else { return nil }
        return old.entity(named: original)
    }

    // MARK: Columns

    /// For each column of the new table, the SQL that fills it from the old table.
    struct ColumnPlan {
        var expressions: [String] = ["\"_pk\"", "\"_version\""]
        var arguments: [DatabaseValue] = []
        var needsRebuild = false
    }

    private func columnPlan(_ layout: EntityLayout, from oldEntity: StoredSchema.Entity) throws -> ColumnPlan {
        var plan = ColumnPlan()
        var used = Set<String>()
        for slot in layout.storedColumnSlots {
            let originalName = slot.attribute?.originalName ?? slot.relationship?.originalName ?? slot.name
            let source = [slot.name, originalName].lazy
                .compactMap { oldEntity.property(named: $0) }
                .first { $0.hasColumn ?? true }
            guard let source else {
                plan.needsRebuild = true
                plan.expressions.append(try valueForNewColumn(slot, in: layout))
                if !(slot.isForeignKey || slot.codec?.isOptional == true) {
                    plan.arguments.append(try encodedDefault(of: slot, in: layout))
                }
                continue
            }
            used.insert(source.name)
            if source.name != slot.name { plan.needsRebuild = true }
            try checkCompatible(slot, with: source, in: layout)
            let column = source.name.quotedIdentifier
            let isOptional = slot.isForeignKey || slot.codec?.isOptional == true
            if source.isOptional && !isOptional {
                plan.needsRebuild = true
                guard slot.defaultValue != nil else {
                    throw unsafe(layout, slot, "becomes non-optional without a default value, so rows where it is nil would have none")
                }
                plan.expressions.append("COALESCE(\(column), ?)")
                plan.arguments.append(try encodedDefault(of: slot, in: layout))
            } else {
                if source.isOptional != isOptional { plan.needsRebuild = true }
                plan.expressions.append(column)
            }
        }
        let oldColumns = oldEntity.properties.filter { $0.hasColumn ?? ($0.kind != "toMany") }.map(\.name)
        if oldColumns.contains(where: { !used.contains($0) }) { plan.needsRebuild = true }
        return plan
    }

    private func valueForNewColumn(_ slot: PropertySlot, in layout: EntityLayout) throws -> String {
        if slot.isForeignKey || slot.codec?.isOptional == true { return "NULL" }
        guard slot.defaultValue != nil else {
            throw unsafe(layout, slot, "is new, not optional and has no default value, so existing rows cannot get one: "
                + "give it a default, make it optional, or fill it in a custom migration stage")
        }
        return "?"
    }

    private func encodedDefault(of slot: PropertySlot, in layout: EntityLayout) throws -> DatabaseValue {
        guard let codec = slot.codec, let value = slot.defaultValue else {
            throw unsafe(layout, slot, "has no default value")
        }
        return try codec.encode(value)
    }

    private func checkCompatible(_ slot: PropertySlot, with source: StoredSchema.Property, in layout: EntityLayout) throws {
        if slot.isForeignKey {
            guard source.kind == "toOne" else { throw unsafe(layout, slot, "changes from \(source.kind) to a to-one relationship") }
            guard source.destination == slot.relationship?.destination else {
                throw unsafe(layout, slot, "now refers to \(slot.relationship?.destination ?? "?") instead of \(source.destination ?? "?")")
            }
            return
        }
        guard source.kind == "attribute" else { throw unsafe(layout, slot, "changes from a relationship to an attribute") }
        // A transformer's bytes read only through that transformer: adding one, dropping it or
        // changing it changes what the column holds.
        let sourceTransformer = source.options.first { $0.hasPrefix("transformable(by:") }
        let transformer = slot.attribute?.options.first { $0.transformer != nil }?.description
        guard sourceTransformer == transformer else {
            throw unsafe(layout, slot, "changes its value transformer from \(sourceTransformer ?? "none") to \(transformer ?? "none"): "
                + Self.howToChangeType)
        }
        if transformer != nil {
            let newType = StoredSchema.Property.unwrapped("\(slot.valueType)")
            guard newType == source.baseType else {
                throw unsafe(layout, slot, "changes type from \(source.baseType) to \(newType): " + Self.howToChangeType)
            }
            return
        }
        let wasOpaque = source.isOpaqueCodable
        // `.codable` before and after: JSON text either way, which the new type decodes when read
        // (SwiftData's option asks for no migration stage on a change of type either).
        if wasOpaque && slot.isOpaqueCodable { return }
        let newType = StoredSchema.Property.unwrapped("\(slot.valueType)")
        guard newType == source.baseType else {
            throw unsafe(layout, slot, "changes type from \(source.baseType) to \(newType): " + Self.howToChangeType)
        }
        if wasOpaque != slot.isOpaqueCodable, AttributeCodec.make(for: slot.valueType)?.storesJSON != true {
            // A type with a column type of its own (a number, a text, an enum's raw value) is stored
            // as that without `.codable`, and as JSON text with it: the column's values would not read.
            throw unsafe(layout, slot, "\(wasOpaque ? "drops" : "adds") @Attribute(.codable), which changes how \(newType) is stored: "
                + Self.howToChangeType)
        }
    }

    /// What to do instead: a custom stage runs around this step, not in place of it, so it cannot
    /// change how a column is stored either (the message said to write one, which did not help).
    static let howToChangeType = "no migration stage changes how a property is stored, a custom one included (it "
        + "runs before and after this step, not instead of it); declare the new type under another name and carry "
        + "the values over in a custom stage, reading them in willMigrate and writing them in didMigrate"

    private func unsafe(_ layout: EntityLayout, _ slot: PropertySlot, _ reason: String) -> SwiftDataError {
        SwiftDataError(
            .migrationFailure, "\(layout.name).\(slot.name) \(reason). The store was not changed",
            entity: layout.name, property: slot.name)
    }

    private func rebuild(_ layout: EntityLayout, plan: ColumnPlan, in db: Database) throws {
        let temporary = "_objectgraph_rebuild_\(layout.name)"
        try db.execute(sql: "DROP TABLE IF EXISTS \(temporary.quotedIdentifier)")
        try db.execute(sql: StoreSchemaWriter.createTableSQL(of: layout, named: temporary))
        let columns = (["_pk", "_version"] + layout.storedColumnSlots.map(\.name)).map(\.quotedIdentifier)
        try db.execute(
            sql: "INSERT INTO \(temporary.quotedIdentifier) (\(columns.joined(separator: ", "))) "
                + "SELECT \(plan.expressions.joined(separator: ", ")) FROM \(layout.name.quotedIdentifier)",
            arguments: StatementArguments(columnValues: plan.arguments))
        try db.execute(sql: "DROP TABLE \(layout.name.quotedIdentifier)")
        try db.execute(sql: "ALTER TABLE \(temporary.quotedIdentifier) RENAME TO \(layout.name.quotedIdentifier)")
    }

    // MARK: External storage

    private mutating func moveExternalValues(_ layout: EntityLayout, from oldEntity: StoredSchema.Entity, in db: Database) throws {
        guard let externalStorage else { return }
        let table = layout.name.quotedIdentifier
        for slot in layout.columnSlots {
            let originalName = slot.attribute?.originalName ?? slot.name
            guard let source = oldEntity.property(named: slot.name) ?? oldEntity.property(named: originalName) else { continue }
            let column = slot.name.quotedIdentifier
            if slot.isExternalStorage && !source.isExternalStorage {
                let rows = try Row.fetchAll(db, sql: """
                    SELECT "_pk", \(column) AS value FROM \(table) WHERE typeof(\(column)) = 'blob' AND length(\(column)) > ?
                    """, arguments: [ExternalStorage.thresholdBytes])
                for row in rows {
                    let name = try externalStorage.write(row["value"] as DatabaseValue)
                    writtenFiles.append(name)
                    try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \"_pk\" = ?", arguments: [name, row["_pk"] as Int64])
                }
            } else if !slot.isExternalStorage && source.isExternalStorage {
                let rows = try Row.fetchAll(db, sql: """
                    SELECT "_pk", \(column) AS value FROM \(table) WHERE typeof(\(column)) = 'text'
                    """)
                for row in rows {
                    let name: String = row["value"]
                    let data = try externalStorage.read(name)
                    try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE \"_pk\" = ?", arguments: [data, row["_pk"] as Int64])
                    releasedFiles.append(name)
                }
            }
        }
    }

    // MARK: Join tables

    /// Join tables follow their relationships: kept when unchanged, copied when the relationship was
    /// renamed (or its writing side changed), dropped when no relationship uses them any more.
    private func migrateJoinTables(in db: Database) throws {
        var kept = Set<String>()
        for entity in new.entities {
            for slot in entity.layout.toManySlots {
                guard let table = entity.layout.mapping(for: slot).writtenJoinTable else { continue }
                kept.insert(table.name)
                if try db.tableExists(table.name) { continue }
                guard let oldEntity = previous(of: entity) else { continue }
                let originalName = slot.relationship?.originalName ?? slot.name
                guard let source = oldEntity.property(named: slot.name) ?? oldEntity.property(named: originalName),
                      let oldTable = source.joinTable, try db.tableExists(oldTable) else { continue }
                try StoreSchemaWriter.createJoinTable(table.name, in: db)
                let sameSide = source.writesJoinTable ?? true
                let select = sameSide
                    ? #"SELECT "source", "destination", "position", "inversePosition""#
                    : #"SELECT "destination", "source", COALESCE("inversePosition", 0), "position""#
                try db.execute(sql: """
                    INSERT OR IGNORE INTO \(table.name.quotedIdentifier) ("source", "destination", "position", "inversePosition")
                    \(select) FROM \(oldTable.quotedIdentifier)
                    """)
            }
        }
        let oldTables = Set(old.entities.flatMap { $0.properties.compactMap(\.joinTable) })
        for table in oldTables where !kept.contains(table) {
            try db.execute(sql: "DROP TABLE IF EXISTS \(table.quotedIdentifier)")
        }
    }
}
