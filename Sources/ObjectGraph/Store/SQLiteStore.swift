import Foundation
import GRDB
import Logging

/// The SQLite store behind a container: a table per entity, reached through a GRDB `DatabasePool`
/// (WAL mode: reads run side by side, writes are serialized), or a `DatabaseQueue` in memory.
final class SQLiteStore: @unchecked Sendable {
    let configuration: ModelConfiguration
    let schema: Schema
    let writer: any DatabaseWriter
    /// Identifies the store in `PersistentIdentifier`s: its file path, or a UUID for memory stores.
    let identifier: String
    let externalStorage: ExternalStorage?
    let logger: Logger
    private let layoutsByName: [String: EntityLayout]

    init(configuration: ModelConfiguration, schema: Schema) throws {
        self.configuration = configuration
        self.schema = schema
        self.layoutsByName = Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, $0.layout) })
        var logger = Logger(label: "ObjectGraph")
        let sqlDebug = SQLDebugSetting.isEnabled
        if sqlDebug { logger.logLevel = .debug }
        self.logger = logger

        var grdbConfiguration = Configuration()
        grdbConfiguration.label = "ObjectGraph"
        grdbConfiguration.foreignKeysEnabled = true
        if sqlDebug {
            let traceLogger = logger
            grdbConfiguration.prepareDatabase { db in
                db.trace(options: .profile) { event in
                    traceLogger.debug("\(event.expandedDescription)")
                }
            }
        }
        do {
            if configuration.isStoredInMemoryOnly {
                writer = try DatabaseQueue(configuration: grdbConfiguration)
                identifier = "memory:\(configuration.memoryStoreKey?.uuidString ?? UUID().uuidString)"
                externalStorage = nil
            } else {
                let url = configuration.url
                try FileManager.default.createDirectory(
                    at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                writer = try DatabasePool(path: url.path, configuration: grdbConfiguration)
                identifier = url.standardizedFileURL.path
                externalStorage = ExternalStorage(directory: url.deletingLastPathComponent()
                    .appendingPathComponent(url.lastPathComponent + ".external", isDirectory: true))
            }
        } catch {
            throw SwiftDataError(
                .loadIssueModelContainer,
                "cannot open the store at \(configuration.url.path): \(error)")
        }
        try StoreSchemaWriter(schema: schema).createOrUpdate(in: writer)
        try sweepOrphanedExternalFiles()
    }

    func layout<T: PersistentModel>(for type: T.Type) throws -> EntityLayout {
        try layout(named: Schema.entityName(for: type))
    }

    func layout(named name: String) throws -> EntityLayout {
        guard let layout = layoutsByName[name] else {
            throw SwiftDataError(
                .unknownEntity,
                "\(name) is not part of this container's schema; add it to the ModelContainer's types",
                entity: name)
        }
        return layout
    }

    // MARK: Reading

    /// One stored row: its key and its column values, in the order of `layout.columnSlots`.
    struct FetchedRow {
        let primaryKey: Int64
        let columns: [DatabaseValue]
    }

    func fetchRows(_ layout: EntityLayout, query: RowQuery) throws -> [FetchedRow] {
        let columns = (["_pk"] + layout.columnSlots.map(\.name)).map(\.quotedIdentifier).joined(separator: ", ")
        let (sql, arguments) = query.sql(selecting: columns, from: layout)
        return try writer.read { db in
            let statement = try db.cachedStatement(sql: sql)
            var rows: [FetchedRow] = []
            let cursor = try Row.fetchCursor(statement, arguments: StatementArguments(arguments))
            while let row = try cursor.next() {
                let primaryKey: Int64 = row[0]
                var values: [DatabaseValue] = []
                values.reserveCapacity(layout.columnSlots.count)
                for index in 0..<layout.columnSlots.count { values.append(row[index + 1] as DatabaseValue) }
                rows.append(FetchedRow(primaryKey: primaryKey, columns: values))
            }
            return rows
        }
    }

    func fetchKeys(_ layout: EntityLayout, query: RowQuery) throws -> [Int64] {
        let (sql, arguments) = query.sql(selecting: "_pk".quotedIdentifier, from: layout)
        return try writer.read { db in
            try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(arguments))
        }
    }

    func count(_ layout: EntityLayout, condition: SQLFragment?) throws -> Int {
        var sql = "SELECT COUNT(*) FROM \(layout.name.quotedIdentifier)"
        if let condition { sql += " WHERE \(condition.sql)" }
        return try writer.read { db in
            try Int.fetchOne(db.cachedStatement(sql: sql), arguments: StatementArguments(condition?.arguments ?? [])) ?? 0
        }
    }

    /// Decodes a fetched column into the property's value, reading external files where the column names one.
    func decodeColumn(_ stored: DatabaseValue, slot: PropertySlot, entity: String) throws -> (value: Any, inline: DatabaseValue, externalFile: String?) {
        guard let codec = slot.codec else { return (UnsetValue(), .null, nil) }
        var inline = stored
        var externalFile: String?
        if slot.isExternalStorage, let name = ExternalStorage.referencedFileName(in: stored) {
            guard let externalStorage else {
                throw SwiftDataError(.externalStorageFailure, "\(entity).\(slot.name) refers to an external file in a memory store")
            }
            inline = try externalStorage.read(name).databaseValue
            externalFile = name
        }
        do {
            return (try codec.decode(inline), inline, externalFile)
        } catch let error as SwiftDataError {
            throw error.located(entity: entity, property: slot.name)
        }
    }

    // MARK: Writing

    func save(_ request: SaveRequest) throws -> SaveResult {
        var result = SaveResult()
        var writtenFiles: [String] = []
        var droppedFiles: [String] = []

        func columnValue(_ value: DatabaseValue, slot: PropertySlot, storage: ModelStorage) throws -> DatabaseValue {
            guard slot.isExternalStorage, let externalStorage, ExternalStorage.shouldStoreExternally(value) else {
                return value
            }
            let name = try externalStorage.write(value)
            writtenFiles.append(name)
            result.externalFileNames[ObjectIdentifier(storage), default: [:]][slot.index] = name
            return name.databaseValue
        }

        do {
            var insertRows: [[DatabaseValue]] = []
            for insert in request.inserts {
                insertRows.append(try insert.storage.layout.columnSlots.map {
                    try columnValue(insert.row[$0.index], slot: $0, storage: insert.storage)
                })
            }
            var updateRows: [[DatabaseValue]] = []
            for update in request.updates {
                let slots = update.changedSlots.map { update.storage.layout.slots[$0] }
                updateRows.append(try slots.map { try columnValue(update.row[$0.index], slot: $0, storage: update.storage) })
                for index in update.changedSlots {
                    if let old = update.storage.committedExternalFiles[index] { droppedFiles.append(old) }
                }
            }
            for storage in request.deletes {
                droppedFiles.append(contentsOf: storage.committedExternalFiles.values)
            }

            try writer.write { db in
                for batch in request.batchDeletes {
                    let keys = try Int64.fetchAll(
                        db, sql: "SELECT \("_pk".quotedIdentifier) FROM \(batch.layout.name.quotedIdentifier)"
                            + (batch.condition.map { " WHERE \($0.sql)" } ?? ""),
                        arguments: StatementArguments(batch.condition?.arguments ?? []))
                    droppedFiles += try externalFileNames(of: batch.layout, keys: keys, in: db)
                    for key in keys {
                        try db.cachedStatement(sql: "DELETE FROM \(batch.layout.name.quotedIdentifier) WHERE \"_pk\" = ?")
                            .execute(arguments: [key])
                    }
                    result.batchDeletedKeys[batch.layout.name, default: []].formUnion(keys)
                }
                for storage in request.deletes {
                    guard let key = storage.primaryKey else { continue }
                    try db.cachedStatement(sql: "DELETE FROM \(storage.layout.name.quotedIdentifier) WHERE \"_pk\" = ?")
                        .execute(arguments: [key])
                }
                for (update, values) in zip(request.updates, updateRows) {
                    guard let key = update.storage.primaryKey else { continue }
                    let slots = update.changedSlots.map { update.storage.layout.slots[$0] }
                    try updateRow(update.storage.layout, key: key, slots: slots, values: values, in: db)
                }
                for (insert, values) in zip(request.inserts, insertRows) {
                    let layout = insert.storage.layout
                    if let existing = try existingRow(matchingUniqueValuesOf: layout, values: values, in: db) {
                        droppedFiles += try externalFileNames(of: layout, keys: [existing], in: db)
                        try updateRow(layout, key: existing, slots: layout.columnSlots, values: values, in: db)
                        result.insertOutcomes.append(.tookOverRow(existing))
                    } else {
                        let columns = layout.columnSlots.map(\.name.quotedIdentifier).joined(separator: ", ")
                        let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
                        let sql = values.isEmpty
                            ? "INSERT INTO \(layout.name.quotedIdentifier) DEFAULT VALUES"
                            : "INSERT INTO \(layout.name.quotedIdentifier) (\(columns)) VALUES (\(placeholders))"
                        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(values))
                        result.insertOutcomes.append(.inserted(db.lastInsertedRowID))
                    }
                }
            }
        } catch {
            for name in writtenFiles { externalStorage?.remove(name) }
            throw StoreErrorMapper.map(error, schema: schema)
        }
        for name in droppedFiles { externalStorage?.remove(name) }
        return result
    }

    private func updateRow(_ layout: EntityLayout, key: Int64, slots: [PropertySlot], values: [DatabaseValue], in db: Database) throws {
        let assignments = slots.map { "\($0.name.quotedIdentifier) = ?" } + ["\"_version\" = \"_version\" + 1"]
        let sql = "UPDATE \(layout.name.quotedIdentifier) SET \(assignments.joined(separator: ", ")) WHERE \"_pk\" = ?"
        try db.cachedStatement(sql: sql).execute(arguments: StatementArguments(values + [key.databaseValue]))
    }

    /// The saved row an insert collides with on a unique attribute, which the insert then updates.
    private func existingRow(matchingUniqueValuesOf layout: EntityLayout, values: [DatabaseValue], in db: Database) throws -> Int64? {
        for (position, slot) in layout.columnSlots.enumerated() where slot.isUnique && !values[position].isNull {
            let sql = "SELECT \"_pk\" FROM \(layout.name.quotedIdentifier) WHERE \(slot.name.quotedIdentifier) = ? LIMIT 1"
            if let key = try Int64.fetchOne(db.cachedStatement(sql: sql), arguments: [values[position]]) {
                return key
            }
        }
        return nil
    }

    private func externalFileNames(of layout: EntityLayout, keys: [Int64], in db: Database) throws -> [String] {
        let externalSlots = layout.columnSlots.filter(\.isExternalStorage)
        guard !externalSlots.isEmpty, !keys.isEmpty else { return [] }
        var names: [String] = []
        for slot in externalSlots {
            let sql = "SELECT \(slot.name.quotedIdentifier) FROM \(layout.name.quotedIdentifier) WHERE \"_pk\" = ?"
            let statement = try db.cachedStatement(sql: sql)
            for key in keys {
                if let value = try DatabaseValue.fetchOne(statement, arguments: [key]),
                   let name = ExternalStorage.referencedFileName(in: value) {
                    names.append(name)
                }
            }
        }
        return names
    }

    func deleteAllData() throws {
        try writer.write { db in
            for entity in schema.entities {
                try db.execute(sql: "DELETE FROM \(entity.name.quotedIdentifier)")
            }
        }
        externalStorage?.removeAll()
    }

    /// Removes external files that no row refers to: left by a crash between writing a file and
    /// committing its row, or between committing a delete and removing the file.
    private func sweepOrphanedExternalFiles() throws {
        guard let externalStorage else { return }
        let present = externalStorage.fileNames()
        guard !present.isEmpty else { return }
        var referenced = Set<String>()
        try writer.read { db in
            for entity in schema.entities {
                for slot in entity.layout.columnSlots where slot.isExternalStorage {
                    let sql = "SELECT \(slot.name.quotedIdentifier) FROM \(entity.name.quotedIdentifier) "
                        + "WHERE typeof(\(slot.name.quotedIdentifier)) = 'text'"
                    referenced.formUnion(try String.fetchAll(db, sql: sql))
                }
            }
        }
        for name in present where !referenced.contains(name) {
            externalStorage.remove(name)
        }
    }
}

/// Whether every SQL statement is logged: the launch argument `-com.apple.CoreData.SQLDebug 1`
/// (Core Data's own switch) or `OBJECTGRAPH_SQL_DEBUG=1`.
enum SQLDebugSetting {
    static var isEnabled: Bool {
        if let value = ProcessInfo.processInfo.environment["OBJECTGRAPH_SQL_DEBUG"], value != "0", !value.isEmpty {
            return true
        }
        let arguments = CommandLine.arguments
        if let index = arguments.firstIndex(of: "-com.apple.CoreData.SQLDebug"), index + 1 < arguments.count {
            return (Int(arguments[index + 1]) ?? 0) > 0
        }
        return false
    }
}

/// Turns SQLite's constraint errors into errors that name the entity and property.
enum StoreErrorMapper {
    static func map(_ error: any Error, schema: Schema) -> any Error {
        guard let databaseError = error as? DatabaseError else { return error }
        let message = databaseError.message ?? ""
        let (entity, property) = constrainedColumn(in: message)
        switch databaseError.extendedResultCode {
        case .SQLITE_CONSTRAINT_UNIQUE, .SQLITE_CONSTRAINT_PRIMARYKEY:
            return SwiftDataError(
                .uniqueConstraintViolation,
                "\(entity).\(property) must be unique: another \(entity) already has this \(property). "
                    + "Nothing was saved; change the value or call rollback()",
                entity: entity, property: property)
        case .SQLITE_CONSTRAINT_NOTNULL:
            return SwiftDataError(
                .modelValidationFailure, "\(entity).\(property) needs a value; nothing was saved",
                entity: entity, property: property)
        default:
            return SwiftDataError(.storeFailure, "the store failed to save: \(databaseError)")
        }
    }

    /// "UNIQUE constraint failed: Tag.name" names the table and column.
    private static func constrainedColumn(in message: String) -> (String, String) {
        guard let colon = message.lastIndex(of: ":") else { return ("?", "?") }
        let qualified = message[message.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        let first = qualified.split(separator: ",").first.map(String.init) ?? qualified
        let parts = first.split(separator: ".", maxSplits: 1).map(String.init)
        return parts.count == 2 ? (parts[0], parts[1]) : ("?", first)
    }
}

extension String {
    /// The string as an SQLite identifier: in double quotes, inner quotes doubled.
    var quotedIdentifier: String { "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}
