import Foundation
import GRDB
import Logging

/// The SQLite store behind a container: a table per entity, reached through a GRDB `DatabasePool`
/// (WAL mode: reads run side by side, writes are serialized), or a `DatabaseQueue` in memory.
final class SQLiteStore: @unchecked Sendable {
    /// How long a connection waits for another's lock on the file (another container's or another
    /// process's save, or its open turning the log on) before it gives up. SQLite's default is not
    /// to wait: two containers on one file, or two processes, had saves refused at once with
    /// "database is locked" whenever they met. Saves are short, so ten seconds is room for many, and
    /// still an answer rather than a hang.
    static let busyMode = Database.BusyMode.timeout(10)

    let configuration: ModelConfiguration
    let schema: Schema
    let writer: any DatabaseWriter
    /// Identifies the store in `PersistentIdentifier`s: its file path, or a UUID for memory stores.
    let identifier: String
    let externalStorage: ExternalStorage?
    /// Removes the external files saves drop, once no read transaction that may see them is open;
    /// nil for a store in memory, which has none.
    let externalFileRetirement: ExternalFileRetirement?
    let logger: Logger
    /// Every statement the store runs: logged when SQL debugging is on, and observable by tests.
    let sqlLog: SQLLog
    private let layoutsByName: [String: EntityLayout]
    let joinTableColumnsByEntity: [String: [(table: String, column: String)]]
    /// Every join table, once each, by name.
    let joinTableNames: [String]
    /// The full-text index of each entity that has `.spotlight` attributes.
    let fullTextIndexes: [String: FullTextIndex]
    private let insertSQLByEntity: [String: String]
    typealias RequiredReference = (layout: EntityLayout, slot: PropertySlot, destination: String)
    /// The to-one relationships that are not optional, which a save's deletes must not leave
    /// referring to a row that is gone (see `refuseDeletesLeavingRequiredReferences`).
    private let requiredReferences: [RequiredReference]
    /// Each entity's `selectList` with every column read, by its layout: a list page's fetches made
    /// it a dozen times, a hundredth of the page.
    private let selectListByLayout: [ObjectIdentifier: String]
    /// Counts already computed, until the store changes.
    let aggregateCache: AggregateCache
    /// What read transactions and the cache know this store by.
    let identity = StoreIdentity()
    /// Reads kept pairs of row and group off the request path (see `keptGroupedKeys`).
    let backgroundPreparation = BackgroundPreparation()
    /// The hit features kept (see `HitFeatures`): those of the last eight common words ranked, 12 MB
    /// at most for words in three quarters of 100,000 snippets.
    let keptHitFeatures = KeptResultRing(capacity: 8)
    /// Analyzes the tables when their size has moved far from the planner's statistics; nil for a
    /// migration stage's working copy.
    private var plannerStatistics: PlannerStatistics?
    /// The shared claim on the external folder while the store is open; nil for a migration stage's
    /// working copy, which shares the folder of the store it migrates.
    private var externalFolderUse: ExternalFolderUse?

    /// Opens (creating or migrating) the store of a configuration. `migrationPlan` says how to carry an
    /// older store forward; `migrates: false` opens it as it is, for the contexts of a migration stage.
    init(
        configuration: ModelConfiguration, schema: Schema,
        migrationPlan: (any SchemaMigrationPlan.Type)? = nil, migrates: Bool = true
    ) throws {
        self.configuration = configuration
        self.schema = schema
        self.layoutsByName = Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, $0.layout) })
        self.joinTableColumnsByEntity = Self.joinTableColumns(of: schema)
        self.joinTableNames = Set(joinTableColumnsByEntity.values.joined().map(\.table)).sorted()
        self.insertSQLByEntity = Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, Self.insertSQL(of: $0.layout)) })
        self.requiredReferences = Self.requiredReferences(of: schema)
        self.selectListByLayout = Dictionary(uniqueKeysWithValues: schema.entities.map {
            (ObjectIdentifier($0.layout), Self.selectList($0.layout))
        })
        self.fullTextIndexes = Dictionary(uniqueKeysWithValues: schema.entities.compactMap { entity in
            FullTextIndex.of(entity.layout).map { (entity.name, $0) }
        })
        var logger = Logger(label: "ObjectGraph")
        let sqlDebug = SQLDebugSetting.isEnabled
        if sqlDebug { logger.logLevel = .debug }
        self.logger = logger

        var grdbConfiguration = Configuration()
        grdbConfiguration.label = "ObjectGraph"
        grdbConfiguration.busyMode = Self.busyMode
        grdbConfiguration.foreignKeysEnabled = true
        let sqlLog = SQLLog(logger: sqlDebug ? logger : nil)
        self.sqlLog = sqlLog
        grdbConfiguration.prepareDatabase { db in
            StringFunctions.register(in: db)
            NumberFunctions.register(in: db)
            FullTextRanking.register(in: db)
            // The connection by identifier: the closure is kept by the connection itself.
            let connection = ObjectIdentifier(db)
            db.trace(options: .profile) { event in sqlLog.record(event, connection: connection) }
            // No memory map (`PRAGMA mmap_size`): it made the list page about a tenth faster, but every
            // reader connection maps the file on its own and the kernel counts each mapped page once
            // per connection in the server's RSS: 471–850 MB under load at 100,000 snippets (the
            // process's own memory, RssAnon, was 14 MB of it), against a 150 MB target.
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
                let external = ExternalStorage(directory: url.deletingLastPathComponent()
                    .appendingPathComponent(Self.externalFolderName(for: url, configuration: configuration), isDirectory: true))
                if migrates {
                    try StoreMigrator(url: url, schema: schema, plan: migrationPlan, externalStorage: external,
                                      configuration: configuration).migrateIfNeeded()
                }
                let pool = try DatabasePool(path: url.path, configuration: grdbConfiguration)
                // GRDB sets NORMAL when it turns WAL on, which may lose the last commits in a power
                // cut. FULL syncs the log at every commit, so a save that returned is on disk. Only
                // the writer connection commits, so it is the one that needs it.
                try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
                writer = pool
                identifier = url.standardizedFileURL.path
                externalStorage = external
            }
        } catch let error as SwiftDataError {
            throw error
        } catch {
            throw SwiftDataError(
                .loadIssueModelContainer,
                "cannot open the store at \(configuration.url.path): \(error)")
        }
        externalFileRetirement = externalStorage.map { storage in ExternalFileRetirement { storage.remove($0) } }
        let writerForVersion = writer
        aggregateCache = AggregateCache(
            store: identity,
            storePath: configuration.isStoredInMemoryOnly ? nil : configuration.url.path,
            rowBudget: configuration.fetchedRowCacheBytes,
            readWriterDataVersion: {
                try? writerForVersion.writeWithoutTransaction { try AggregateCache.dataVersion(in: $0) }
            })
        try StoreSchemaWriter(schema: schema).createOrUpdate(in: writer)
        // Another process's saves are read from the history from here on (see `AggregateCache`).
        let newestTransaction = try writer.read { db in try HistoryLog.newestTransaction(in: db) }
        aggregateCache.startFollowingHistory(from: newestTransaction) { [weak self] in self?.recordedWrites(after: $0) }
        // A migration stage's copy shares the external folder with the store it migrates, whose rows
        // still refer to files the copy may no longer need: only a store opened for use is swept.
        if migrates {
            externalFolderUse = try claimExternalFolder()
            do {
                plannerStatistics = try PlannerStatistics(
                    entityTables: schema.entities.map(\.name), joinTables: joinTableNames, writer: writer)
            } catch {
                // Statistics make plans faster, not data right: a store that cannot be analyzed (a
                // read-only file, say) still opens.
                logger.warning("could not read or refresh the query planner's statistics: \(error)")
            }
        }
    }

    /// External files sit beside the store in `<store file>.external`; a migration stage's working copy
    /// shares the folder of the store it migrates.
    private static func externalFolderName(for url: URL, configuration: ModelConfiguration) -> String {
        var name = url.lastPathComponent
        if name.hasSuffix(".migrating") { name = String(name.dropLast(".migrating".count)) }
        return name + ".external"
    }

    /// Closes the store's connections; used when a migration stage is done with its copy.
    func close() {
        try? (writer as? DatabasePool)?.close()
        try? (writer as? DatabaseQueue)?.close()
    }

    /// Rows deleted through this store, by entity, for a migration's row-count check.
    private let deletedRows = LockedValue<[String: Int]>([:])
    var deletedRowCounts: [String: Int] { deletedRows.withLock { $0 } }

    /// Whether `learnStoredMemberNames` has read this store's JSON columns.
    let storedMemberNamesLearned = LockedValue(false)

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

    /// One stored row: its key and its column values.
    struct FetchedRow {
        let primaryKey: Int64
        /// The row's `_version`, which each update increments: a context that read an older version
        /// cannot overwrite a newer one.
        let version: Int64
        /// The column values by slot index (`.null` for slots without a column), the shape of a
        /// storage's committed row: a model made from the row shares this array as its committed row
        /// rather than copying it column by column.
        let valuesBySlot: [DatabaseValue]
    }

    /// The primary key and stored columns of an entity's table under an alias, in `FetchedRow` order.
    /// With `unloaded`, those slots' columns are not read (`NULL` stands in their place), as
    /// `FetchDescriptor.propertiesToFetch` asks.
    static func selectList(_ layout: EntityLayout, alias: String = RowQuery.alias, unloaded: Set<Int> = []) -> String {
        let key = "\(alias.quotedIdentifier).\"_pk\", \(alias.quotedIdentifier).\"_version\""
        return ([key] + layout.storedColumnSlots.map { slot in
            unloaded.contains(slot.index) ? "NULL" : "\(alias.quotedIdentifier).\(slot.name.quotedIdentifier)"
        }).joined(separator: ", ")
    }

    /// `selectList` under the usual alias, the one made when the store opened where it can be.
    func selectList(_ layout: EntityLayout, unloaded: Set<Int> = []) -> String {
        if unloaded.isEmpty, let made = selectListByLayout[ObjectIdentifier(layout)] { return made }
        return Self.selectList(layout, unloaded: unloaded)
    }

    func fetchRows(_ layout: EntityLayout, query: RowQuery, unloaded: Set<Int> = []) throws -> [FetchedRow] {
        let (sql, arguments) = query.windowSQL(selecting: selectList(layout, unloaded: unloaded), from: layout)
        return try readRows(layout, sql: sql, arguments: arguments, leadingColumns: 0).map(\.row)
    }

    /// Runs a SELECT whose columns are `leadingColumns` extra values followed by `selectList(layout)`
    /// (key, version, stored columns).
    ///
    /// The rows are kept, like counts, until a save writes a table or column the SQL names
    /// (`ModelConfiguration.fetchedRowCacheBytes`): a list page asks for the same few rows on every
    /// visit, and copying each snippet's code out of SQLite was the largest part of fetching them.
    func readRows(
        _ layout: EntityLayout, sql: String, arguments: [DatabaseValue], leadingColumns: Int
    ) throws -> [(leading: [DatabaseValue], row: FetchedRow)] {
        guard aggregateCache.rowBudget > 0 else {
            return try readRowsFromStore(layout, sql: sql, arguments: arguments, leadingColumns: leadingColumns)
        }
        let limit = aggregateCache.rowResultLimit
        return try aggregateCache.rows(sql: sql, arguments: arguments, weigh: { Self.bytesHeld(by: $0, upTo: limit) }) {
            try readRowsFromStore(layout, sql: sql, arguments: arguments, leadingColumns: leadingColumns)
        }
    }

    /// Roughly the memory fetched rows hold (their text and data, and a few words per value), or
    /// enough to show it is over `limit`: a fetch of every row is not walked twice to be refused.
    static func bytesHeld(by rows: [(leading: [DatabaseValue], row: FetchedRow)], upTo limit: Int) -> Int {
        func bytes(_ value: DatabaseValue) -> Int {
            switch value.storage {
            case .string(let text): 32 + text.utf8.count
            case .blob(let data): 32 + data.count
            default: 32
            }
        }
        var total = 0
        for entry in rows {
            if total > limit { break }
            total += 64 + entry.leading.reduce(0) { $0 + bytes($1) } + entry.row.valuesBySlot.reduce(0) { $0 + bytes($1) }
        }
        return total
    }

    private func readRowsFromStore(
        _ layout: EntityLayout, sql: String, arguments: [DatabaseValue], leadingColumns: Int
    ) throws -> [(leading: [DatabaseValue], row: FetchedRow)] {
        let columnBySlot = layout.storedColumnPositionBySlot
        return try read { db in
            let statement = try db.cachedStatement(sql: sql)
            var rows: [(leading: [DatabaseValue], row: FetchedRow)] = []
            let cursor = try Row.fetchCursor(statement, arguments: StatementArguments(columnValues: arguments))
            // Each value is read straight off the statement the cursor steps: `row[index] as DatabaseValue`
            // goes through GRDB's generic decoding, which looked up `Optional<DatabaseValue>`'s
            // metadata for every column of every row (a tenth of fetching a row).
            let sqliteStatement = statement.sqliteStatement
            func value(at index: Int) -> DatabaseValue { DatabaseValue(sqliteStatement: sqliteStatement, index: CInt(index)) }
            while try cursor.next() != nil {
                let leading: [DatabaseValue] = leadingColumns == 0 ? [] : (0..<leadingColumns).map(value(at:))
                let primaryKey = Int64(sqliteStatement: sqliteStatement, index: CInt(leadingColumns))
                let version = Int64(sqliteStatement: sqliteStatement, index: CInt(leadingColumns + 1))
                // Appended in slot order to a reserved array: `Array(repeating:count:)` looked up the
                // metadata of the array's storage class in the runtime for every row.
                var values: [DatabaseValue] = []
                values.reserveCapacity(columnBySlot.count)
                for position in columnBySlot {
                    values.append(position.map { value(at: leadingColumns + 2 + $0) } ?? .null)
                }
                rows.append((leading, FetchedRow(primaryKey: primaryKey, version: version, valuesBySlot: values)))
            }
            return rows
        }
    }

    func fetchKeys(_ layout: EntityLayout, query: RowQuery) throws -> [Int64] {
        let (sql, arguments) = query.sql(selecting: "\(RowQuery.alias.quotedIdentifier).\"_pk\"", from: layout)
        return try read { db in
            try Int64.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(columnValues: arguments))
        }
    }

    /// The rows that match `condition`, kept until a save changes what it reads, or brought up to
    /// date by the save. `rowCondition`, when given, makes the same condition in the form that tests
    /// one row at a time, with its own arguments (a full-text match by rowid rather than the set of
    /// every hit; a to-many test by the row's own related rows rather than the set of their owners),
    /// for that upkeep over a save's rows; it is made only when the count is.
    func count(_ layout: EntityLayout, condition: SQLFragment?, rowCondition: (() throws -> SQLFragment)? = nil) throws -> Int {
        var sql = "SELECT COUNT(*) FROM \(layout.name.quotedIdentifier) AS \(RowQuery.alias.quotedIdentifier)"
        if let condition { sql += " WHERE \(condition.sql)" }
        let arguments = condition?.arguments ?? []
        func upkeep() -> CountUpkeep? {
            let row: SQLFragment?
            if let rowCondition {
                // The condition translated again: should that fail, the count is dropped, not followed.
                guard let translated = try? rowCondition() else { return nil }
                row = translated
            } else {
                row = condition
            }
            return CountUpkeep.total(
                entity: layout.name,
                restrictedSQL: "SELECT COUNT(*) \(CountUpkeep.fromChangedRows(of: layout.name))"
                    + (row.map { $0.sql.isEmpty ? "" : " WHERE \($0.sql)" } ?? ""),
                arguments: row?.arguments ?? [])
        }
        return try aggregateCache.value(sql: sql, arguments: arguments, upkeep: upkeep()) {
            try read { db in
                try Int.fetchOne(db.cachedStatement(sql: sql), arguments: StatementArguments(columnValues: arguments)) ?? 0
            }
        }
    }

    /// The join tables that hold keys of an entity's rows, with the column that holds them.
    static func joinTableColumns(of schema: Schema) -> [String: [(table: String, column: String)]] {
        var result: [String: [(table: String, column: String)]] = [:]
        for entity in schema.entities {
            for slot in entity.layout.toManySlots {
                let mapping = entity.layout.mapping(for: slot)
                guard let table = mapping.joinTable, table.isWriter else { continue }
                result[entity.name, default: []].append((table.name, table.ownColumn))
                result[mapping.destination.name, default: []].append((table.name, table.otherColumn))
            }
        }
        return result
    }

    /// The destination rows of a to-many relationship for several owners at once, each with its owner's key.
    func relatedRows(of mapping: RelationshipMapping, ownerKeys: [Int64]) throws -> [(owner: Int64, row: SQLiteStore.FetchedRow)] {
        let destination = mapping.destination
        let alias = RowQuery.alias.quotedIdentifier
        let keys = Self.jsonArray(ownerKeys)
        let sql: String
        switch mapping.storage {
        case .inverseForeignKey(let column):
            sql = """
                SELECT \(alias).\(column.quotedIdentifier), \(selectList(destination))
                FROM \(destination.name.quotedIdentifier) AS \(alias)
                WHERE \(alias).\(column.quotedIdentifier) IN (SELECT value FROM json_each(?))
                ORDER BY \(alias)."_pk"
                """
        case .joinTable(let table):
            let order = table.isWriter
                ? "\"j\".\"position\", \"j\".rowid, "
                : "\"j\".\"inversePosition\" IS NULL, \"j\".\"inversePosition\", \"j\".rowid, "
            sql = """
                SELECT "j".\(table.ownColumn.quotedIdentifier), \(selectList(destination))
                FROM \(table.name.quotedIdentifier) AS "j"
                JOIN \(destination.name.quotedIdentifier) AS \(alias) ON \(alias)."_pk" = "j".\(table.otherColumn.quotedIdentifier)
                WHERE "j".\(table.ownColumn.quotedIdentifier) IN (SELECT value FROM json_each(?))
                ORDER BY \(order)\(alias)."_pk"
                """
        case .foreignKey:
            return []
        }
        return try readRows(destination, sql: sql, arguments: [keys.databaseValue], leadingColumns: 1).compactMap { leading, row in
            guard let owner = Int64.fromDatabaseValue(leading[0]) else { return nil }
            return (owner, row)
        }
    }

    /// A JSON array of keys, bound as one argument and read with `json_each`, so that a query for
    /// any number of keys is one statement with one parameter.
    static func jsonArray(_ keys: [Int64]) -> String {
        "[" + keys.map(String.init).joined(separator: ",") + "]"
    }

    /// Creates a model from a row. Its context, if any, registers it; a model created for no context
    /// (loading the relationships of a model whose context is gone) reads further relationships here.
    func materialize<T: PersistentModel>(
        _ type: T.Type, from row: FetchedRow, layout: EntityLayout, unloaded: Set<Int> = []
    ) throws -> T {
        let storage: DefaultBackingData<T>
        if ObjectIdentifier(layout.modelType) == ObjectIdentifier(T.self) {
            // The layout's class is `DefaultBackingData<T>`: made through it, the storage needs no
            // look-up of that generic class for the row. With `preparedBackingData`'s type check,
            // fetching 5,000 rows and reading them took 137.8 M instructions instead of 143.4 M.
            storage = unsafeDowncast(layout.storageClass.init(layout: layout), to: DefaultBackingData<T>.self)
        } else {
            // A model type other than the layout's, with the same entity name (another schema version's).
            storage = DefaultBackingData<T>(layout: layout)
        }
        try fill(storage, from: row, layout: layout, unloaded: unloaded, isNew: true)
        storage.storeIdentifier = identifier
        storage.store = self
        let object = RowMaterialization.initializing(storage) { T(backingData: storage) }
        storage.model = object
        return object
    }

    /// Decodes one stored column into its slot's value (a fault for a to-one relationship).
    ///
    /// `committed` must already hold what was read (`FetchedRow.valuesBySlot`), which is the
    /// committed value of every column kept inline; only an external file's column changes it, to
    /// its inline form. Writing the others again would copy a committed row shared with the fetch.
    func read(
        _ stored: DatabaseValue, with reader: ColumnReader, for storage: ModelStorage, rowKey: Int64?,
        committed: inout [DatabaseValue]
    ) throws -> Any {
        switch reader.kind {
        case .inline, .foreignKey:
            return try readInline(stored, with: reader, entity: storage.layout.name)
        case .general:
            let decoded = try decodeColumn(stored, slot: reader.slot, entity: storage.layout.name, rowKey: rowKey)
            committed[reader.slot.index] = decoded.inline
            // Cleared when the value read is inline: the file named before was replaced meanwhile.
            if decoded.externalFile != nil || storage.committedExternalFiles[reader.slot.index] != nil {
                storage.committedExternalFiles[reader.slot.index] = decoded.externalFile
            }
            return decoded.value
        }
    }

    /// `read` for a column whose value is held in the row itself (`ColumnReader.Kind.inline` or
    /// `.foreignKey`), which leaves the committed row as it was read.
    @inline(__always)
    private func readInline(_ stored: DatabaseValue, with reader: ColumnReader, entity: String) throws -> Any {
        if reader.kind == .foreignKey { return ModelContext.foreignKeyValue(stored, slot: reader.slot) }
        do {
            return try reader.decode(stored)
        } catch let error as SwiftDataError {
            throw error.located(entity: entity, property: reader.slot.name)
        }
    }

    /// Sets a storage's values, committed row and version from a row read from the store.
    ///
    /// The values are built in a local array and stored once: writing each slot of the storage's
    /// array in place made the runtime check exclusive access to the property for every column.
    ///
    /// A column that names an external file is left unloaded, its file to be read when the property
    /// is first read (`ModelStorage.loadUnloadedColumns`): files are large by definition, and a page
    /// of models that shows none of them read every one (50 screenshots for a list page).
    ///
    /// `isNew` says `storage` was just made for this row and holds nothing yet (`materialize`).
    func fill(
        _ storage: ModelStorage, from row: FetchedRow, layout: EntityLayout, unloaded: Set<Int> = [], isNew: Bool = false
    ) throws {
        if isNew, unloaded.isEmpty, let sources = layout.newStorageSlotSources {
            try fillNew(storage, from: row, layout: layout, sources: sources)
            return
        }
        var unloaded = unloaded
        // The committed row is the fetched one, shared: only a column whose committed value differs
        // from what was read (an external file's inline form) makes it a copy of its own.
        var committed = row.valuesBySlot
        // A new storage (most fills) has nothing to clear: writing a property costs an access check.
        if !storage.committedExternalFiles.isEmpty { storage.committedExternalFiles = [:] }
        if !storage.committedToMany.isEmpty { storage.committedToMany = SlotMap() }
        var values = storage.values
        storage.values = []
        if values.count != layout.slots.count { values = layout.unsetValues }
        // The readers are used in place, not copied out of the array one by one (a retain and a
        // release of the slot and of the decoder for every column of every row).
        let readers = layout.columnReaders
        for position in readers.indices {
            let index = readers[position].index
            if !unloaded.isEmpty, unloaded.contains(index) {
                values[index] = UnloadedValue()
                continue
            }
            if case .general = readers[position].kind, readers[position].slot.isExternalStorage,
               let name = ExternalStorage.referencedFileName(in: row.valuesBySlot[index]) {
                // The committed value stays the file's name, which the load reads by.
                values[index] = UnloadedValue()
                unloaded.insert(index)
                storage.committedExternalFiles[index] = name
                continue
            }
            do {
                values[index] = try read(
                    row.valuesBySlot[index], with: readers[position], for: storage, rowKey: row.primaryKey, committed: &committed)
            } catch {
                storage.values = values
                throw error
            }
        }
        for slot in layout.toManySlots {
            values[slot.index] = ToManyFault()
        }
        if storage.unversionedToManyLoadedAt != nil { storage.unversionedToManyLoadedAt = nil }
        for index in layout.attributeSlotsWithoutColumns {
            if let fallback = storage.fallbackValue(at: index) { values[index] = fallback }
        }
        storage.values = values
        // A new storage's relationship slots now hold faults (or nil for a to-one without a row, or
        // nothing yet for the side of a one-to-one without the key); one in a context was looked at.
        if !storage.belongsToContext { storage.valuesHoldNoRelatedModels = true }
        storage.committedRow = committed
        if !unloaded.isEmpty || !storage.unloadedSlots.isEmpty { storage.unloadedSlots = unloaded }
        storage.primaryKey = row.primaryKey
        storage.version = row.version
        if !storage.dirtyRelationships.isEmpty { storage.dirtyRelationships.removeAll() }
    }

    /// `fill` for a new storage whose columns are all read inline: its values are made in slot
    /// order, each appended once to a new array, rather than copied from `layout.unsetValues` and
    /// then replaced slot by slot; nothing it held before needs clearing. The array is reserved and
    /// appended to because that allocation is specialized and reads the array type's metadata from a
    /// cache; `Array(unsafeUninitializedCapacity:)`'s looked it up in the runtime for every row.
    private func fillNew(_ storage: ModelStorage, from row: FetchedRow, layout: EntityLayout, sources: [EntityLayout.SlotSource]) throws {
        let readers = layout.columnReaders
        let entity = layout.name
        var values: [Any] = []
        values.reserveCapacity(sources.count)
        for (index, source) in sources.enumerated() {
            switch source {
            case .column(let position):
                values.append(try readInline(row.valuesBySlot[index], with: readers[position], entity: entity))
            case .toManyFault:
                values.append(ToManyFault())
            case .fallback:
                values.append(storage.fallbackValue(at: index) ?? UnsetValue())
            case .unset:
                values.append(UnsetValue())
            }
        }
        storage.values = values
        if !storage.belongsToContext { storage.valuesHoldNoRelatedModels = true }
        storage.committedRow = row.valuesBySlot
        storage.primaryKey = row.primaryKey
        storage.version = row.version
    }

    func materializeAny(_ type: any PersistentModel.Type, from row: FetchedRow, layout: EntityLayout) throws -> any PersistentModel {
        try materialize(type, from: row, layout: layout)
    }

    /// Decodes a fetched column into the property's value, reading external files where the column names one.
    ///
    /// A row read a moment ago may name a file that a save has since replaced and removed. Then the
    /// column is read again, and its current value (a newer file, or an inline value) is used;
    /// only a file missing from the current row is an error.
    func decodeColumn(
        _ stored: DatabaseValue, slot: PropertySlot, entity: String, rowKey: Int64? = nil
    ) throws -> (value: Any, inline: DatabaseValue, externalFile: String?) {
        guard let codec = slot.codec else { return (UnsetValue(), .null, nil) }
        var inline = stored
        var externalFile: String?
        if slot.isExternalStorage, let name = ExternalStorage.referencedFileName(in: stored) {
            guard let externalStorage else {
                throw SwiftDataError(.externalStorageFailure, "\(entity).\(slot.name) refers to an external file in a memory store")
            }
            do {
                inline = try externalStorage.read(name).databaseValue
                externalFile = name
            } catch {
                guard let rowKey, !externalStorage.exists(name) else { throw error }
                // The file went with its row: another context deleted the model since it was read.
                guard let current = try currentValue(of: slot, entity: entity, rowKey: rowKey) else { throw RowDeletedSinceRead() }
                guard current != stored else { throw error }
                return try decodeColumn(current, slot: slot, entity: entity)
            }
        }
        do {
            return (try codec.decode(inline), inline, externalFile)
        } catch let error as SwiftDataError {
            throw error.located(entity: entity, property: slot.name)
        }
    }

    /// Thrown by `decodeColumn` for an external file whose row another context deleted since the
    /// model was read: the value is gone with the row, and nothing is wrong with the store.
    struct RowDeletedSinceRead: Error {}

    /// The column's value in the row as it is now, or nil when the row is gone.
    private func currentValue(of slot: PropertySlot, entity: String, rowKey: Int64) throws -> DatabaseValue? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(slot.name.quotedIdentifier) FROM \(entity.quotedIdentifier) WHERE \"_pk\" = ?",
                arguments: [rowKey])?[0]
        }
    }

    // MARK: Writing

    /// `ModelContext.save()`, its only caller, has checked that no read transaction is open here.
    func save(_ request: SaveRequest) throws -> SaveResult {
        var result = SaveResult()
        var writtenFiles: [String] = []
        var droppedFiles: [String] = []

        /// The value written to a column: external-storage values over the threshold become a file.
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
            // Files are written before the transaction, so that a committed row never names a missing file.
            var insertRows: [[DatabaseValue]] = []
            for insert in request.inserts {
                insertRows.append(try insert.storage.layout.storedColumnSlots.map {
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

            let ownersOfJoinRows = savedOwnersOfJoinRows(in: request)
            let storeChange = change(made: request, ownersOfJoinRows: ownersOfJoinRows)
            var changedRows = aggregateCache.holdsResultsWithUpkeep ? changedRows(by: request) : [:]
            var countUpkeep: SaveUpkeep?
            defer { aggregateCache.storeDidChange(storeChange, upkeep: countUpkeep) }
            /// The save's transaction in the store's history.
            var transaction: Int64?
            // The keys given to new rows are theirs only while the transaction runs: on success the
            // context sets `primaryKey` from `insertOutcomes`, and a failed save rolls them back.
            defer { for insert in request.inserts { insert.storage.keyInSave = nil } }
            let upkeep = try writer.write { db -> SaveUpkeep in
                try aggregateCache.catchUp(in: db) { recordedWrites(after: $0, in: db) }
                var upkeep = try aggregateCache.beginUpkeep(of: storeChange, changedRows: changedRows, in: db)
                /// Inserts that took over a saved row (a unique attribute matched): their rows may have join rows.
                var tookOverRows: Set<ObjectIdentifier> = []
                /// The keys of those rows, by entity.
                var takenOverKeys: [String: Set<Int64>] = [:]
                func key(of storage: ModelStorage) -> Int64? {
                    storage.primaryKey ?? storage.keyInSave
                }
                /// References to rows inserted later in this transaction, by the model they refer to.
                var laterReferences: [ObjectIdentifier: [(storage: ModelStorage, slot: PropertySlot)]] = [:]
                /// Writes the references waiting for `target`'s row as soon as it has a key, before the next
                /// insert: a saved model moved to a new one is edited before the inserts, so an insert
                /// referring to that new one by a unique relationship meets the moved row and takes it
                /// over. Written after every insert, the move broke the unique index instead.
                func writeReferences(to target: ModelStorage) throws {
                    guard let waiting = laterReferences.removeValue(forKey: ObjectIdentifier(target)) else { return }
                    let targetKey = key(of: target)?.databaseValue ?? .null
                    for (storage, slot) in waiting {
                        guard let ownerKey = key(of: storage) else { continue }
                        try updateRow(storage.layout, key: ownerKey, slots: [slot], values: [targetKey], in: db, bumpsVersion: false)
                        result.foreignKeys[ObjectIdentifier(storage), default: []].append((slot.index, targetKey))
                    }
                }
                /// Rows whose full-text entries are out until the end (updated text, new rows, taken over).
                var outOfFullTextIndex = PendingFullTextEntries()
                var history = HistoryLog.Recorder()
                var insertStatements = InsertStatements()

                for batch in request.batchDeletes {
                    let keys = try Int64.fetchAll(
                        db, sql: "SELECT \(RowQuery.alias.quotedIdentifier).\"_pk\" FROM \(batch.layout.name.quotedIdentifier) "
                            + "AS \(RowQuery.alias.quotedIdentifier)" + (batch.condition.map { " WHERE \($0.sql)" } ?? ""),
                        arguments: StatementArguments(columnValues: batch.condition?.arguments ?? []))
                        .filter { !batch.keptKeys.contains($0) }
                    droppedFiles += try externalFileNames(of: batch.layout, keys: keys, in: db)
                    try fullTextIndexes[batch.layout.name]?.remove(keys: keys, in: db)
                    let tombstones = try history.tombstones(of: batch.layout, keys: keys, externalStorage: externalStorage, in: db)
                    for key in keys {
                        if try deleteRow(of: batch.layout, key: key, in: db) { history.deleted(key, of: batch.layout, tombstones: tombstones) }
                    }
                    result.batchDeletedKeys[batch.layout.name, default: []].formUnion(keys)
                }
                /// The keys of saved rows, by entity: a full-text statement takes all of an entity's at once.
                func keysByEntity(_ storages: some Sequence<ModelStorage>) -> [String: [Int64]] {
                    var keys: [String: [Int64]] = [:]
                    for storage in storages {
                        if let key = storage.primaryKey { keys[storage.layout.name, default: []].append(key) }
                    }
                    return keys
                }
                // Full-text entries leave while their rows still hold the text, and the files go that
                // the rows name now: the model may have been read without its file (`propertiesToFetch`),
                // or before another context replaced it.
                var tombstones: [String: [Int64: [HistoryLog.PreservedValue]]] = [:]
                let deletedKeysByEntity = keysByEntity(request.deletes)
                for (entity, keys) in deletedKeysByEntity {
                    try fullTextIndexes[entity]?.remove(keys: keys, in: db)
                    let layout = try layout(named: entity)
                    droppedFiles += try externalFileNames(of: layout, keys: keys, in: db)
                    tombstones[entity] = try history.tombstones(of: layout, keys: keys, externalStorage: externalStorage, in: db)
                }
                for storage in request.deletes {
                    guard let key = storage.primaryKey,
                          try deleteRow(of: storage.layout, key: key, in: db, expectedVersion: storage.version) else { continue }
                    history.deleted(key, of: storage.layout, tombstones: tombstones[storage.layout.name] ?? [:])
                }
                for (entity, keys) in keysByEntity(request.updates.filter(rewritesFullTextEntry).map(\.storage)) {
                    try fullTextIndexes[entity]?.remove(keys: keys, in: db)
                    outOfFullTextIndex.insert(keys, of: entity)
                }
                try releaseUniqueValuesMovingBetweenRows(request.updates, in: db)
                for (update, values) in zip(request.updates, updateRows) {
                    guard let key = update.storage.primaryKey else { continue }
                    let slots = update.changedSlots.map { update.storage.layout.slots[$0] }
                    var values = values
                    for (position, slot) in slots.enumerated() {
                        if let target = update.pendingReferences[slot.index] {
                            values[position] = .null
                            laterReferences[ObjectIdentifier(target), default: []].append((update.storage, slot))
                        }
                    }
                    try updateRow(update.storage.layout, key: key, slots: slots, values: values, in: db,
                                  expectedVersion: update.storage.version)
                    result.versions[ObjectIdentifier(update.storage)] = update.storage.version + 1
                }
                for (insert, rowIndex) in zip(request.inserts, insertRows.indices) {
                    let layout = insert.storage.layout
                    // By the row's references to new rows (its new folder), not a lookup for each of its
                    // columns, which cost 1,200 instructions a snippet. Their order does not matter: each
                    // is its own column, and a reference written later is its own UPDATE. Written into
                    // the row in place: a copy of it (`var values = row`) was made for every snippet
                    // with a new folder.
                    for (slotIndex, target) in insert.pendingReferences {
                        guard let position = layout.storedColumnPositionBySlot[slotIndex] else { continue }
                        let slot = layout.slots[slotIndex]
                        if let targetKey = key(of: target) {
                            insertRows[rowIndex][position] = targetKey.databaseValue
                            result.foreignKeys[ObjectIdentifier(insert.storage), default: []].append((slot.index, targetKey.databaseValue))
                        } else {
                            insertRows[rowIndex][position] = .null
                            laterReferences[ObjectIdentifier(target), default: []].append((insert.storage, slot))
                        }
                    }
                    // The row goes in unless it collides with a saved one on a unique attribute
                    // (`ON CONFLICT DO NOTHING`), which it then takes over: asking first cost a
                    // query for every insert, and collisions are rare.
                    if try insertRow(layout, values: insertRows[rowIndex], in: db, statements: &insertStatements) {
                        let key = db.lastInsertedRowID
                        result.insertOutcomes.append(.inserted(key))
                        insert.storage.keyInSave = key
                        if fullTextIndexes[layout.name] != nil { outOfFullTextIndex.insert([key], of: layout.name) }
                    } else {
                        guard let existing = try existingRow(matchingUniqueValuesOf: layout, values: insertRows[rowIndex], in: db) else {
                            throw SwiftDataError(
                                .storeFailure, "a new \(layout.name) collided with a saved row that no uniqueness constraint names",
                                entity: layout.name)
                        }
                        droppedFiles += try externalFileNames(of: layout, keys: [existing], in: db)
                        if !outOfFullTextIndex.contains(existing, of: layout.name) {
                            try fullTextIndexes[layout.name]?.remove(keys: [existing], in: db)
                            outOfFullTextIndex.insert([existing], of: layout.name)
                        }
                        try updateRow(layout, key: existing, slots: layout.storedColumnSlots, values: insertRows[rowIndex], in: db)
                        result.insertOutcomes.append(.tookOverRow(existing))
                        tookOverRows.insert(ObjectIdentifier(insert.storage))
                        takenOverKeys[layout.name, default: []].insert(existing)
                        result.versions[ObjectIdentifier(insert.storage)] = try rowVersion(of: layout, key: existing, in: db) ?? 1
                        insert.storage.keyInSave = existing
                    }
                    if !laterReferences.isEmpty { try writeReferences(to: insert.storage) }
                }
                // The writer side's rows first (upserts keep the other side's positions), then the other side's order.
                // New owners have no rows yet: theirs are inserted together, one statement per join table.
                var newOwnersRows = ByJoinTable<(table: RelationshipMapping.JoinTable, rows: [JoinRow])>()
                // The inserts are done: the functions below read constants, not the variables, whose
                // every read from a nested function the runtime checks.
                let insertsThatTookOver = tookOverRows
                let keysTakenOver = takenOverKeys
                func isNewRow(_ storage: ModelStorage) -> Bool {
                    storage.primaryKey == nil && !insertsThatTookOver.contains(ObjectIdentifier(storage))
                }
                // A new owner on the other side whose members are all new writers has all its rows made
                // by those writers' insert below: each row gets its place in that owner's order there,
                // where an UPDATE per owner found each row again (a tenth of inserting 100,000 snippets
                // with two new tags each). A member listed twice keeps its last place, as the UPDATE does.
                var inversePlaces = ByJoinTable<[Int64: [Int64: Int]]>()
                for write in request.joinWrites where !write.table.isWriter && isNewRow(write.owner) {
                    guard case .replace(let targets) = write.change, targets.allSatisfy(isNewRow),
                          let ownerKey = key(of: write.owner) else { continue }
                    var places: [Int64: Int] = [:]
                    for (position, target) in targets.enumerated() {
                        if let targetKey = key(of: target) { places[targetKey] = position }
                    }
                    inversePlaces.modify(write.table.name, default: [:]) { $0[ownerKey] = places }
                }
                /// A saved model whose row an insert of this save took over: its writes to the rows the
                /// insert now decides (its side of a join table) lose to the insert's, as its edits do.
                func wasTakenOver(_ storage: ModelStorage) -> Bool {
                    guard let key = storage.primaryKey else { return false }
                    return keysTakenOver[storage.layout.name]?.contains(key) == true
                }
                func apply(_ write: SaveRequest.JoinWrite) throws {
                    guard let ownerKey = key(of: write.owner) else { return }
                    if write.table.isWriter && wasTakenOver(write.owner) { return }
                    switch write.change {
                    case .replace(let targets):
                        let targetKeys = targets.compactMap { key(of: $0) }
                        if write.table.isWriter && isNewRow(write.owner) {
                            let places = inversePlaces[write.table.name]
                            newOwnersRows.modify(write.table.name, default: (write.table, [])) { owners in
                                for (position, targetKey) in targetKeys.enumerated() {
                                    owners.rows.append(JoinRow(source: ownerKey, destination: targetKey, position: position,
                                                               inversePosition: places?[targetKey]?[ownerKey]))
                                }
                            }
                        } else if write.table.isWriter || inversePlaces[write.table.name]?[ownerKey] == nil {
                            try writeJoinRows(write.table, ownerKey: ownerKey, targetKeys: targetKeys, in: db)
                        }
                        result.joinedKeys[ObjectIdentifier(write.owner), default: []].append((write.slotIndex, targetKeys))
                    case .adjust(var added, var removed):
                        if !write.table.isWriter && !keysTakenOver.isEmpty {
                            added.removeAll(where: wasTakenOver)
                            removed.removeAll(where: wasTakenOver)
                        }
                        // Two models can stand for one row (an insert merged into another of the same unique
                        // value): its key is listed once, or the second join row of one pair broke the save.
                        try adjustJoinRows(write.table, ownerKey: ownerKey, added: Self.distinctKeys(of: added, key),
                                           removed: Self.distinctKeys(of: removed, key), in: db)
                    }
                }
                try bumpVersionsOfRelationshipOwners(
                    ownersOfJoinRows, of: request, skipping: tookOverRows, takenOverKeys: takenOverKeys, result: &result, in: db)
                for write in request.joinWrites where write.table.isWriter { try apply(write) }
                for (table, rows) in newOwnersRows.values { try insertJoinRows(table, rows: rows, in: db) }
                for write in request.joinWrites where !write.table.isWriter { try apply(write) }
                try refuseDeletesLeavingRequiredReferences(deletedKeysByEntity, batchDeletedKeys: result.batchDeletedKeys, in: db)
                // Last, so that no later statement of this save makes FTS5 flush what it holds.
                for (entity, keys) in outOfFullTextIndex.keysByEntity { try fullTextIndexes[entity]?.add(keys: Array(keys), in: db) }
                for written in request.writtenProperties {
                    if let key = written.storage.primaryKey { history.updated(key, of: written.storage.layout, slots: written.slots) }
                }
                for (insert, outcome) in zip(request.inserts, result.insertOutcomes) {
                    let layout = insert.storage.layout
                    switch outcome {
                    case .inserted(let key): history.inserted(key, of: layout)
                    case .tookOverRow(let key):
                        // The insert wrote every column of the row it took over, and its relationships.
                        history.updated(key, of: layout, slots: layout.slots.filter { $0.isColumn || $0.isToMany }.map(\.index))
                    }
                }
                transaction = try history.write(author: request.author, in: db)
                // New rows count after the save (at most `ChangedRows.limit` of them, or none are kept).
                if changedRows.values.contains(where: \.canKeepCounts) {
                    for (insert, outcome) in zip(request.inserts, result.insertOutcomes) {
                        let entity = insert.storage.layout.name
                        switch outcome {
                        case .inserted(let key) where changedRows[entity]?.canKeepCounts == true:
                            changedRows[entity]?.keys.insert(key)
                        case .inserted:
                            continue
                        case .tookOverRow:
                            // The row taken over was counted before under a key this save did not know then.
                            changedRows[entity]?.canKeepCounts = false
                        }
                    }
                }
                try upkeep.finish(changedRows: changedRows, in: db)
                return upkeep
            }
            countUpkeep = upkeep
            if let transaction { aggregateCache.noteOwnTransaction(transaction) }
        } catch {
            for name in writtenFiles { externalStorage?.remove(name) }
            throw StoreErrorMapper.map(error, schema: schema)
        }
        externalFileRetirement?.saveCommitted(dropping: droppedFiles)
        var deletedByEntity: [String: Int] = [:]
        for storage in request.deletes where storage.primaryKey != nil { deletedByEntity[storage.layout.name, default: 0] += 1 }
        for (entity, keys) in result.batchDeletedKeys { deletedByEntity[entity, default: 0] += keys.count }
        deletedRows.withLock { counts in counts.merge(deletedByEntity, uniquingKeysWith: +) }
        if let plannerStatistics {
            var insertedByEntity: [String: Int] = [:]
            for insert in request.inserts { insertedByEntity[insert.storage.layout.name, default: 0] += 1 }
            do {
                try plannerStatistics.recordChanges(inserted: insertedByEntity, deleted: deletedByEntity, writer: writer)
            } catch {
                // The save has committed: statistics that fail to refresh leave plans slower, not data wrong.
                logger.warning("could not refresh the query planner's statistics: \(error)")
            }
        }
        return result
    }

    /// The tables and columns a save request writes, for the aggregate cache. A deleted row also
    /// takes its full-text entry and its join rows; an update of a searchable attribute rewrites the
    /// row's full-text entry.
    private func change(made request: SaveRequest, ownersOfJoinRows: [ObjectIdentifier: OwnerOfJoinRows]) -> StoreChange {
        // Each entity, table and column is noted once, not once a row: a save of 5,000 snippets hashed
        // the same few names 30,000 times, and made its full-text tables' names 5,000 times (1.3% of
        // inserting them). A save's rows come from a few entities, so they are told apart by identity.
        var change = StoreChange()
        func rowsChanged(of layout: EntityLayout) {
            change.rowsChanged(in: layout.name)
            for table in fullTextIndexes[layout.name]?.writtenTables ?? [] { change.rowsChanged(in: table) }
        }
        for layout in (request.deletes.map(\.layout) + request.batchDeletes.map(\.layout)).distinct(by: { $0 === $1 }) {
            rowsChanged(of: layout)
            for (table, _) in joinTableColumnsByEntity[layout.name] ?? [] { change.rowsChanged(in: table) }
        }
        for layout in request.inserts.lazy.map(\.storage.layout).distinct(by: { $0 === $1 }) { rowsChanged(of: layout) }
        var updatedSlots: [(layout: EntityLayout, slots: Set<Int>, rewritesFullText: Bool)] = []
        for update in request.updates {
            let layout = update.storage.layout
            if let position = updatedSlots.firstIndex(where: { $0.layout === layout }) {
                updatedSlots[position].slots.formUnion(update.changedSlots)
                if !updatedSlots[position].rewritesFullText {
                    updatedSlots[position].rewritesFullText = rewritesFullTextEntry(update)
                }
            } else {
                updatedSlots.append((layout, Set(update.changedSlots), rewritesFullTextEntry(update)))
            }
        }
        for (layout, slots, rewritesFullText) in updatedSlots {
            change.columnsUpdated(slots.map { layout.slots[$0].name } + ["_version"], in: layout.name)
            if rewritesFullText, let index = fullTextIndexes[layout.name] {
                index.writtenTables.forEach { change.rowsChanged(in: $0) }
            }
        }
        for table in request.joinWrites.lazy.map(\.table.name).distinct(by: { $0 == $1 }) { change.rowsChanged(in: table) }
        for layout in ownersOfJoinRows.values.lazy.map(\.storage.layout).distinct(by: { $0 === $1 }) {
            change.columnsUpdated(["_version"], in: layout.name)
        }
        return change
    }

    /// The rows of each entity a save request changes, for the upkeep of cached counts (see
    /// `CountUpkeep`): their keys, and the tables whose changes those rows account for. A join table
    /// is accounted for when only this entity's rows write its rows (the writer side's owners) and no
    /// row of the other side is deleted; a relationship of an entity to itself never is.
    private func changedRows(by request: SaveRequest) -> [String: ChangedRows] {
        var rows: [String: ChangedRows] = [:]
        func note(_ storage: ModelStorage) {
            var changed = rows[storage.layout.name] ?? ChangedRows()
            if let key = storage.primaryKey { changed.keys.insert(key) }
            rows[storage.layout.name] = changed
        }
        request.updates.forEach { note($0.storage) }
        request.deletes.forEach(note)
        request.inserts.forEach { note($0.storage) }
        request.joinWrites.forEach { note($0.owner) }
        for batch in request.batchDeletes { rows[batch.layout.name, default: ChangedRows()].canKeepCounts = false }
        let deletedEntities = Set(request.deletes.map(\.layout.name) + request.batchDeletes.map(\.layout.name))
        var insertsByEntity: [String: Int] = [:]
        for insert in request.inserts { insertsByEntity[insert.storage.layout.name, default: 0] += 1 }
        for (entity, var changed) in rows {
            changed.accountedTables.insert(entity)
            changed.accountedTables.formUnion(fullTextIndexes[entity]?.writtenTables ?? [])
            let joinTables = (joinTableColumnsByEntity[entity] ?? []).map(\.table)
            for table in joinTables where joinTables.filter({ $0 == table }).count == 1 {
                let writtenByOthers = request.joinWrites.contains {
                    $0.table.name == table && $0.table.isWriter && $0.owner.layout.name != entity
                }
                let otherSideDeleted = deletedEntities.contains { other in
                    other != entity && (joinTableColumnsByEntity[other] ?? []).contains { $0.table == table }
                }
                // (Today's contexts load the other side's models to apply delete rules and write both
                // sides through the writer's owners, so this only guards writes a later path may add.)
                if !writtenByOthers && !otherSideDeleted { changed.accountedTables.insert(table) }
            }
            if changed.keys.count + (insertsByEntity[entity] ?? 0) > ChangedRows.limit { changed.canKeepCounts = false }
            rows[entity] = changed
        }
        return rows
    }

    /// Whether an update changes text the entity's full-text index holds, so that the row's entry
    /// must be written again.
    private func rewritesFullTextEntry(_ update: SaveRequest.Update) -> Bool {
        let layout = update.storage.layout
        return fullTextIndexes[layout.name] != nil
            && update.changedSlots.contains { layout.slots[$0].attribute?.options.contains(.spotlight) == true }
    }

    /// Refuses a save that deletes a row another row still refers to through a to-one relationship
    /// that is not optional (SwiftData allows one, with or without an inverse). The reference would be
    /// left to a row that is gone, and reading it would have no model to give: the property cannot be
    /// nil, so the read stopped the process. Checked after the save's other writes, so that a referring
    /// row deleted, or pointed at another row, in the same save does not count.
    private func refuseDeletesLeavingRequiredReferences(
        _ deletedKeysByEntity: [String: [Int64]], batchDeletedKeys: [String: Set<Int64>], in db: Database
    ) throws {
        for reference in requiredReferences {
            let keys = Set(deletedKeysByEntity[reference.destination] ?? []).union(batchDeletedKeys[reference.destination] ?? [])
            guard !keys.isEmpty else { continue }
            let referrer = reference.layout.name
            let column = reference.slot.name
            let sql = "SELECT 1 FROM \(referrer.quotedIdentifier) WHERE \(column.quotedIdentifier) IN (SELECT value FROM json_each(?)) LIMIT 1"
            guard try Bool.fetchOne(db, sql: sql, arguments: [Self.jsonArray(Array(keys))]) == true else { continue }
            throw SwiftDataError(
                .modelValidationFailure,
                "cannot delete this \(reference.destination): \(referrer).\(column), which is not optional, still refers to it. "
                    + "Delete that \(referrer) too, or give it another \(reference.destination), in the same save. Nothing was saved",
                entity: reference.destination, property: column)
        }
    }

    /// The to-one relationships that are not optional, with the entity each refers to.
    private static func requiredReferences(of schema: Schema) -> [RequiredReference] {
        schema.entities.flatMap { entity in
            entity.layout.foreignKeySlots.filter { $0.optionalType == nil }.map { slot in
                (entity.layout, slot, entity.layout.mapping(for: slot).destination.name)
            }
        }
    }

    /// Values by join table, in a list searched by the table's name: a save writes a few join tables,
    /// and a dictionary by name hashed the name for every owner written (with the temporary array the
    /// rows were made in, 2,300 instructions a snippet with tags, 1.1% of inserting them).
    struct ByJoinTable<Value> {
        private var entries: [(name: String, value: Value)] = []

        var values: [Value] { entries.map(\.value) }

        subscript(name: String) -> Value? {
            entries.first { $0.name == name }?.value
        }

        /// Changes the table's value in place (made from `default` first if it has none).
        mutating func modify(_ name: String, default makeDefault: @autoclosure () -> Value, _ change: (inout Value) -> Void) {
            if let position = entries.firstIndex(where: { $0.name == name }) {
                change(&entries[position].value)
            } else {
                var value = makeDefault()
                change(&value)
                entries.append((name, value))
            }
        }
    }

    /// One row of a join table, as the writer side sees it.
    struct JoinRow {
        let source: Int64
        let destination: Int64
        let position: Int
        /// The row's place in the destination's order, when the destination is new in the same save.
        var inversePosition: Int? = nil
    }

    /// Inserts the rows of owners new in this save, one step of one statement per row, bound with
    /// SQLite's C API (`runOnce`). They went in as one JSON array, read back with `json_each` and four
    /// `json_extract`s a row, to spare GRDB's binding per row: 21,000 instructions a join row, against
    /// 14,000 this way (callgrind, 10,000 snippets with two tags each). A row whose destination is new
    /// too carries its place in the destination's order. (The upsert keeps the last position of a
    /// target listed twice.)
    private func insertJoinRows(_ table: RelationshipMapping.JoinTable, rows: [JoinRow], in db: Database) throws {
        guard !rows.isEmpty else { return }
        let statement = try db.cachedStatement(sql: """
            INSERT INTO \(table.name.quotedIdentifier) ("source", "destination", "position", "inversePosition")
            VALUES (?, ?, ?, ?)
            ON CONFLICT ("source", "destination") DO UPDATE SET "position" = excluded."position"
            """)
        for row in rows {
            try statement.runOnce(binding: [
                row.source.databaseValue, row.destination.databaseValue, row.position.databaseValue,
                row.inversePosition.map { $0.databaseValue } ?? .null,
            ], in: db)
        }
    }

    /// Makes a join table hold exactly `targetKeys` for one owner, in that order. The writer side owns
    /// the rows and their `position`; the other side only records its own order in `inversePosition`.
    private func writeJoinRows(
        _ table: RelationshipMapping.JoinTable, ownerKey: Int64, targetKeys: [Int64], in db: Database
    ) throws {
        let name = table.name.quotedIdentifier
        if table.isWriter {
            try db.cachedStatement(sql: """
                DELETE FROM \(name) WHERE "source" = ? AND "destination" NOT IN (SELECT value FROM json_each(?))
                """).execute(arguments: [ownerKey, Self.jsonArray(targetKeys)])
            guard !targetKeys.isEmpty else { return }
            // One statement for all of the owner's rows, `json_each` giving each key with its
            // position, where a statement per row paid GRDB's argument binding and a step each.
            // (`WHERE true` lets SQLite parse the upsert after a SELECT.)
            try db.cachedStatement(sql: """
                INSERT INTO \(name) ("source", "destination", "position")
                SELECT ?, "value", "key" FROM json_each(?) WHERE true
                ON CONFLICT ("source", "destination") DO UPDATE SET "position" = excluded."position"
                """).execute(arguments: [ownerKey, Self.jsonArray(targetKeys)])
        } else {
            // One statement for the owner's order. The unary `+` keeps SQLite from walking the
            // owner's rows by the destination index and scanning the keys for each (quadratic, and
            // its choice on a store not yet analyzed): it walks the keys and finds each row by its
            // primary key. A target listed twice keeps its last position, as one UPDATE a row did:
            // its earlier places are sent as null, which matches no row.
            var lastPlace: [Int64: Int] = [:]
            for (position, targetKey) in targetKeys.enumerated() { lastPlace[targetKey] = position }
            let places = targetKeys.enumerated().map { lastPlace[$0.element] == $0.offset ? String($0.element) : "null" }
            try db.cachedStatement(sql: """
                UPDATE \(name) SET "inversePosition" = "keys"."key" FROM json_each(?) AS "keys"
                WHERE \(name)."source" = "keys"."value" AND +\(name)."destination" = ?
                """).execute(arguments: ["[" + places.joined(separator: ",") + "]", ownerKey])
        }
    }

    /// Adds and removes one owner's rows in a join table without reading the others: added models go
    /// after the current ones. The other side's order needs no write (rows it never ordered come last,
    /// in the order they were made), unless its new rows were made in another order than its own.
    private func adjustJoinRows(
        _ table: RelationshipMapping.JoinTable, ownerKey: Int64, added: [Int64], removed: [Int64], in db: Database
    ) throws {
        guard table.isWriter else {
            let rejoined = removed.isEmpty ? [] : Set(removed).intersection(added)
            if added.count > 1 || !rejoined.isEmpty {
                try remakeRowsInJoiningOrder(table, ownerKey: ownerKey, joined: added, rejoined: rejoined, in: db)
            }
            return
        }
        let name = table.name.quotedIdentifier
        if !removed.isEmpty {
            try db.cachedStatement(sql: """
                DELETE FROM \(name) WHERE "source" = ? AND "destination" IN (SELECT value FROM json_each(?))
                """).execute(arguments: [ownerKey, Self.jsonArray(removed)])
        }
        guard !added.isEmpty else { return }
        let next = try Int.fetchOne(db.cachedStatement(sql: """
            SELECT COALESCE(MAX("position") + 1, 0) FROM \(name) WHERE "source" = ?
            """), arguments: [ownerKey]) ?? 0
        let insert = try db.cachedStatement(sql: """
            INSERT INTO \(name) ("source", "destination", "position") VALUES (?, ?, ?)
            ON CONFLICT ("source", "destination") DO NOTHING
            """)
        for (offset, targetKey) in added.enumerated() {
            try insert.execute(arguments: [ownerKey, targetKey, next + offset])
        }
    }

    /// Puts the rows of the models that joined an unloaded other side last in its order, in the
    /// order they joined it, as the side showed them before the save.
    ///
    /// Rows that side never placed (`inversePosition` null) come after its placed ones, by rowid. The
    /// writer side makes the rows, in the order its models are saved: a snippet inserted first but
    /// tagged second had its row made first, and came first in the tag's snippets once saved. And a
    /// model that left the side and joined it again (`rejoined`) kept its row, and with it its old
    /// place, when the writer side was loaded. Such rows are made again, in the joining order.
    private func remakeRowsInJoiningOrder(
        _ table: RelationshipMapping.JoinTable, ownerKey: Int64, joined: [Int64], rejoined: Set<Int64>, in db: Database
    ) throws {
        let name = table.name.quotedIdentifier
        let rows = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT rowid, "source", "position", "inversePosition" IS NOT NULL FROM \(name)
            WHERE "destination" = ? AND "source" IN (SELECT value FROM json_each(?))
            """), arguments: [ownerKey, Self.jsonArray(joined)])
        var found: [Int64: (rowID: Int64, position: Int64, isPlaced: Bool)] = [:]
        for row in rows {
            let source: Int64 = row[1]
            found[source] = (row[0], row[2], row[3])
        }
        let inJoiningOrder = joined.compactMap { source in found[source].map { (source: source, row: $0) } }
        let rowIDs = inJoiningOrder.map(\.row.rowID)
        let inPlace = rowIDs == rowIDs.sorted()
            && !inJoiningOrder.contains { $0.row.isPlaced || rejoined.contains($0.source) }
        guard !inPlace else { return }
        try db.cachedStatement(sql: """
            DELETE FROM \(name) WHERE rowid IN (SELECT value FROM json_each(?))
            """).execute(arguments: [Self.jsonArray(rowIDs)])
        let pairs = "[" + inJoiningOrder.map { "[\($0.source),\($0.row.position)]" }.joined(separator: ",") + "]"
        try db.cachedStatement(sql: """
            INSERT INTO \(name) ("source", "destination", "position")
            SELECT json_extract("value", '$[0]'), ?, json_extract("value", '$[1]') FROM json_each(?) ORDER BY "key"
            """).execute(arguments: [ownerKey, pairs])
    }

    /// Inserts a row; false when it collided with a saved row on a unique attribute and was not inserted.
    private func insertRow(
        _ layout: EntityLayout, values: [DatabaseValue], in db: Database, statements: inout InsertStatements
    ) throws -> Bool {
        let statement = try statements.statement(for: layout, in: db) {
            insertSQLByEntity[layout.name] ?? Self.insertSQL(of: layout)
        }
        try statement.runOnce(binding: values, in: db)
        return db.changesCount > 0
    }

    /// Each entity's INSERT statement for the length of one save. Found by its SQL text in GRDB's
    /// statement cache, it cost a hash of the whole text (about 150 characters for a snippet) and a
    /// lookup by entity name for every inserted row: 0.9% of inserting snippets.
    struct InsertStatements {
        /// By layout, compared by identity: a save inserts rows of a few entities at most.
        private var statements: [(layout: EntityLayout, statement: Statement)] = []

        mutating func statement(for layout: EntityLayout, in db: Database, sql: () -> String) throws -> Statement {
            if let kept = statements.first(where: { $0.layout === layout }) { return kept.statement }
            let statement = try db.cachedStatement(sql: sql())
            statements.append((layout, statement))
            return statement
        }
    }

    /// The INSERT of a whole row, made once per entity: a save of many rows looks it up per row.
    /// With unique attributes, a collision inserts nothing (and raises no error): the save then
    /// finds the row it collided with. Other constraints (NOT NULL) still fail the statement.
    static func insertSQL(of layout: EntityLayout) -> String {
        let columns = layout.storedColumnSlots.map(\.name.quotedIdentifier).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: layout.storedColumnSlots.count).joined(separator: ", ")
        let onCollision = layout.uniquenessConstraints.isEmpty ? "" : " ON CONFLICT DO NOTHING"
        return layout.storedColumnSlots.isEmpty
            ? "INSERT INTO \(layout.name.quotedIdentifier) DEFAULT VALUES"
            : "INSERT INTO \(layout.name.quotedIdentifier) (\(columns)) VALUES (\(placeholders))\(onCollision)"
    }

    /// Deletes a row and every join-table row that refers to it.
    /// The caller takes the row's full-text entry out first, with those of the other rows it deletes.
    ///
    /// With `expectedVersion`, a row another context changed since this one read it is not deleted:
    /// the save fails, as a conflicting edit does, rather than throw that change away. A row already
    /// deleted is no conflict: nothing of anyone's is lost. Returns false for such a row, which the
    /// save's history then does not list as deleted by it.
    private func deleteRow(of layout: EntityLayout, key: Int64, in db: Database, expectedVersion: Int64? = nil) throws -> Bool {
        let rowTable = layout.name.quotedIdentifier
        let deleted: Bool
        if let expectedVersion {
            try db.cachedStatement(sql: "DELETE FROM \(rowTable) WHERE \"_pk\" = ? AND \"_version\" = ?")
                .runOnce(binding: [key.databaseValue, expectedVersion.databaseValue], in: db)
            deleted = db.changesCount > 0
            if !deleted,
               try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM \(rowTable) WHERE \"_pk\" = ?"), arguments: [key]) ?? false {
                throw SwiftDataError(
                    .saveConflict,
                    "\(layout.name) \(key) was changed by another context since this one read it. Nothing was saved: "
                        + "fetch it again (or call rollback()) to see the change, then delete it again",
                    entity: layout.name)
            }
        } else {
            try db.cachedStatement(sql: "DELETE FROM \(rowTable) WHERE \"_pk\" = ?").runOnce(binding: [key.databaseValue], in: db)
            deleted = db.changesCount > 0
        }
        for (table, column) in joinTableColumnsByEntity[layout.name] ?? [] {
            try db.cachedStatement(sql: "DELETE FROM \(table.quotedIdentifier) WHERE \(column.quotedIdentifier) = ?")
                .runOnce(binding: [key.databaseValue], in: db)
        }
        return deleted
    }

    /// A saved model whose join rows a save writes (from the side that owns the rows), with whether
    /// one of its writes replaces the set (rather than adding and removing given members).
    private typealias OwnerOfJoinRows = (storage: ModelStorage, replaces: Bool)

    /// The saved models whose join rows a save writes, by identity (see `OwnerOfJoinRows`).
    private func savedOwnersOfJoinRows(in request: SaveRequest) -> [ObjectIdentifier: OwnerOfJoinRows] {
        var owners: [ObjectIdentifier: OwnerOfJoinRows] = [:]
        for write in request.joinWrites where write.table.isWriter && write.owner.primaryKey != nil {
            var replaces = owners[ObjectIdentifier(write.owner)]?.replaces ?? false
            if case .replace = write.change { replaces = true }
            owners[ObjectIdentifier(write.owner)] = (write.owner, replaces)
        }
        return owners
    }

    /// A model's to-many relationship is part of its state, as its columns are, but lives in join rows
    /// that carry no version: the second of two contexts to change one snippet's tags replaced the
    /// set, and the first one's tag was lost without a word. So the owner's row version follows its
    /// join rows. A save that replaces the set must find the version it read, or it fails as a
    /// conflicting edit does; one that only adds and removes given members (a relationship changed
    /// from its other side, never loaded here) loses nothing of another context's and is no conflict,
    /// but still moves the version on, so that a context holding the older set cannot write it back.
    /// An owner whose columns the save updates has its version checked and moved on by that update.
    ///
    /// A row an insert of this save took over is skipped, whoever its owner: the insert's write moved
    /// its version on, and its values, join rows included, are the insert's (a save applies its inserts
    /// after its edits). The owner's check failed there, a conflict with the context's own upsert.
    private func bumpVersionsOfRelationshipOwners(
        _ owners: [ObjectIdentifier: OwnerOfJoinRows], of request: SaveRequest, skipping tookOverRows: Set<ObjectIdentifier>,
        takenOverKeys: [String: Set<Int64>], result: inout SaveResult, in db: Database
    ) throws {
        let updated = Set(request.updates.map { ObjectIdentifier($0.storage) })
        for (identifier, (storage, replaces)) in owners {
            guard let key = storage.primaryKey, !updated.contains(identifier), !tookOverRows.contains(identifier),
                  takenOverKeys[storage.layout.name]?.contains(key) != true else { continue }
            if replaces {
                try updateRow(storage.layout, key: key, slots: [], values: [], in: db, expectedVersion: storage.version)
                result.versions[identifier] = storage.version + 1
            } else {
                try updateRow(storage.layout, key: key, slots: [], values: [], in: db)
                let version = try rowVersion(of: storage.layout, key: key, in: db)
                // A context that read an older version keeps it: its other values are that old too.
                if version == storage.version + 1 { result.versions[identifier] = version }
            }
        }
    }

    /// The keys of `storages` that have one, each once, in the order they first come.
    private static func distinctKeys(of storages: [ModelStorage], _ key: (ModelStorage) -> Int64?) -> [Int64] {
        var seen: Set<Int64> = []
        return storages.compactMap(key).filter { seen.insert($0).inserted }
    }

    /// The version a saved row is at now, read back after an update that did not know it; nil once
    /// the row is gone.
    private func rowVersion(of layout: EntityLayout, key: Int64, in db: Database) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT \"_version\" FROM \(layout.name.quotedIdentifier) WHERE \"_pk\" = ?"),
            arguments: [key])
    }

    /// Updates columns of a row. With `expectedVersion`, the row must still be at that version
    /// (optimistic concurrency): otherwise another context saved it since it was read, and the save
    /// fails rather than overwrite that change.
    private func updateRow(
        _ layout: EntityLayout, key: Int64, slots: [PropertySlot], values: [DatabaseValue], in db: Database,
        bumpsVersion: Bool = true, expectedVersion: Int64? = nil
    ) throws {
        let assignments = slots.map { "\($0.name.quotedIdentifier) = ?" } + (bumpsVersion ? ["\"_version\" = \"_version\" + 1"] : [])
        var sql = "UPDATE \(layout.name.quotedIdentifier) SET \(assignments.joined(separator: ", ")) WHERE \"_pk\" = ?"
        var arguments = values + [key.databaseValue]
        if let expectedVersion {
            sql += " AND \"_version\" = ?"
            arguments.append(expectedVersion.databaseValue)
        }
        try db.cachedStatement(sql: sql).runOnce(binding: arguments, in: db)
        if expectedVersion != nil && db.changesCount == 0 {
            let stillThere = try Bool.fetchOne(
                db, sql: "SELECT 1 FROM \(layout.name.quotedIdentifier) WHERE \"_pk\" = ?", arguments: [key]) ?? false
            throw SwiftDataError(
                .saveConflict,
                stillThere
                    ? "\(layout.name) \(key) was changed by another context since this one read it. Nothing was saved: "
                        + "fetch it again (or call rollback()) and redo the change"
                    : "\(layout.name) \(key) was deleted by another context since this one read it. Nothing was saved",
                entity: layout.name)
        }
    }

    /// Unique values may move between rows in one save: two tags swap names, or each of a chain takes
    /// the next one's. SQLite checks a unique index at every row's UPDATE, not at the commit, so the
    /// first row to take its new value would collide with a row that is about to let go of it. When
    /// several updates of an entity change unique attributes, those rows let go of their values first,
    /// to a placeholder no other row holds, and the updates then write the new values; a value that
    /// still collides once every row has moved is a true violation, and throws as before.
    private func releaseUniqueValuesMovingBetweenRows(_ updates: [SaveRequest.Update], in db: Database) throws {
        var moving: [String: [(layout: EntityLayout, key: Int64, slots: [PropertySlot])]] = [:]
        for update in updates {
            // Asked of every update of every save: most entities have no unique attribute, and most
            // updates leave theirs alone, so nothing is built for those.
            let unique = update.storage.layout.uniqueColumnSlots
            guard !unique.isEmpty, let key = update.storage.primaryKey,
                  unique.contains(where: { update.changedSlots.contains($0.index) }) else { continue }
            let layout = update.storage.layout
            moving[layout.name, default: []].append((layout, key, unique.filter { update.changedSlots.contains($0.index) }))
        }
        for rows in moving.values where rows.count > 1 {
            for row in rows {
                // A BLOB never equals a number or a text, and a column's declared type does not convert
                // one (the tables are not STRICT); the marker and the row's own key keep it apart from
                // other rows' placeholders and from any Data a unique attribute could hold in practice.
                var bytes = Data("objectgraph.unique-value-in-transit.".utf8)
                withUnsafeBytes(of: row.key.bigEndian) { bytes.append(contentsOf: $0) }
                try updateRow(row.layout, key: row.key, slots: row.slots,
                              values: Array(repeating: bytes.databaseValue, count: row.slots.count), in: db, bumpsVersion: false)
            }
        }
    }

    /// The saved row an insert collides with on a uniqueness constraint, which the insert then updates.
    private func existingRow(matchingUniqueValuesOf layout: EntityLayout, values: [DatabaseValue], in db: Database) throws -> Int64? {
        for constraint in layout.uniquenessConstraints where constraint.constrains(values) {
            let conditions = constraint.slots.map { "\($0.name.quotedIdentifier) = ?" }.joined(separator: " AND ")
            let sql = "SELECT \"_pk\" FROM \(layout.name.quotedIdentifier) WHERE \(conditions) LIMIT 1"
            let arguments = StatementArguments(constraint.columnPositions.map { values[$0] })
            if let key = try Int64.fetchOne(db.cachedStatement(sql: sql), arguments: arguments) {
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
        try requireNoReadTransaction("deleteAllData")
        defer { aggregateCache.storeDidChange() }
        // The files the rows name, read in the transaction that deletes them. Every file in the folder
        // would include one a concurrent save has written but not yet committed, and its row would
        // then name a missing file; files no row names are the sweep's, at the next open.
        let droppedFiles = try writer.write { db in
            let referenced = externalStorage == nil ? [] : try referencedExternalFileNames(in: db)
            // The full-text indexes and join tables go with the rows: left behind, an index held
            // entries for text that was gone (FTS5's integrity check failed) and join tables named
            // rows that no longer exist.
            for index in fullTextIndexes.values {
                let table = index.tableName.quotedIdentifier
                try db.execute(sql: "INSERT INTO \(table)(\(table)) VALUES('delete-all')")
            }
            for entity in schema.entities {
                try db.execute(sql: "DELETE FROM \(entity.name.quotedIdentifier)")
            }
            for table in joinTableNames {
                try db.execute(sql: "DELETE FROM \(table.quotedIdentifier)")
            }
            // The history names rows that are gone; its numbering goes on (AUTOINCREMENT).
            try db.execute(sql: "DELETE FROM \(HistoryLog.table.quotedIdentifier)")
            return referenced
        }
        externalFileRetirement?.saveCommitted(dropping: droppedFiles.sorted())
        do {
            try plannerStatistics?.recordEmptied(writer: writer)
        } catch {
            // The rows are gone already: statistics that fail to refresh leave plans slower, not data wrong.
            logger.warning("could not refresh the query planner's statistics: \(error)")
        }
    }

    /// Claims the external folder (see `ExternalFolderUse`), sweeping it first if no other store of
    /// this file is open. Nil for a store with no external folder to keep.
    private func claimExternalFolder() throws -> ExternalFolderUse? {
        guard let externalStorage else { return nil }
        let hasExternalAttributes = schema.entities.contains { $0.layout.columnSlots.contains(where: \.isExternalStorage) }
        // A store whose schema stores nothing externally gets no folder made for it; one left by an
        // older schema is still swept.
        guard hasExternalAttributes || FileManager.default.fileExists(atPath: externalStorage.directory.path) else { return nil }
        return try ExternalFolderUse(directory: externalStorage.directory) { try sweepOrphanedExternalFiles(externalStorage) }
    }

    /// Removes external files that no row refers to: left by a crash between writing a file and
    /// committing its row, or between committing a delete and removing the file. Only run while no
    /// other store of the file is open, whose files not yet committed would look the same.
    private func sweepOrphanedExternalFiles(_ externalStorage: ExternalStorage) throws {
        let present = externalStorage.fileNames()
        guard !present.isEmpty else { return }
        let referenced = try read { db in try referencedExternalFileNames(in: db) }
        for name in present where !referenced.contains(name) {
            externalStorage.remove(name)
        }
    }

    /// The names of the external files that rows refer to.
    func referencedExternalFileNames(in db: Database) throws -> Set<String> {
        var referenced = Set<String>()
        for entity in schema.entities {
            for slot in entity.layout.columnSlots where slot.isExternalStorage {
                let sql = "SELECT \(slot.name.quotedIdentifier) FROM \(entity.name.quotedIdentifier) "
                    + "WHERE typeof(\(slot.name.quotedIdentifier)) = 'text'"
                referenced.formUnion(try String.fetchAll(db, sql: sql))
            }
        }
        return referenced
    }
}

/// The statements a store runs, with their bound values and durations: written to the log when
/// SQL debugging is on, and handed to whoever observes them (tests count queries this way).
final class SQLLog: @unchecked Sendable {
    private let logger: Logger?
    private let recording = LockedValue<[String]?>(nil)

    init(logger: Logger?) {
        self.logger = logger
    }

    /// Connections running work no caller asked for (see `BackgroundPreparation`): logged, not recorded.
    private let unrecordedConnections = LockedValue<Set<ObjectIdentifier>>([])

    func record(_ event: Database.TraceEvent, connection: ObjectIdentifier) {
        if let logger { logger.debug("\(event.expandedDescription)") }
        guard case .profile(let statement, _) = event else { return }
        // Background connections are looked up only while recording: every statement passes here.
        recording.withLock { recorded in
            guard recorded != nil, !unrecordedConnections.withLock({ $0.contains(connection) }) else { return }
            recorded?.append(statement.sql)
        }
    }

    /// Runs `body` on `db` without recording its statements: background work's statements would land
    /// among those of whatever call a test is observing.
    func unrecorded<T>(_ db: Database, _ body: () throws -> T) rethrows -> T {
        let connection = ObjectIdentifier(db)
        unrecordedConnections.withLock { _ = $0.insert(connection) }
        defer { unrecordedConnections.withLock { _ = $0.remove(connection) } }
        return try body()
    }

    /// Runs `body` and returns the SQL of every statement run meanwhile.
    func statements(during body: () throws -> Void) rethrows -> [String] {
        recording.withLock { $0 = [] }
        defer { recording.withLock { $0 = nil } }
        try body()
        return recording.withLock { $0 ?? [] }
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
        let (entity, properties) = constrainedColumns(in: message)
        let property = properties.joined(separator: ", ")
        switch databaseError.extendedResultCode {
        case .SQLITE_CONSTRAINT_UNIQUE, .SQLITE_CONSTRAINT_PRIMARYKEY:
            let broken = properties.count > 1
                ? "\(mustBeUnique(entity, properties)): another \(entity) already has these values"
                : "\(mustBeUnique(entity, properties)): another \(entity) already has this \(property)"
            return SwiftDataError(
                .uniqueConstraintViolation, broken + ". Nothing was saved; change the value or call rollback()",
                entity: entity, property: property)
        case .SQLITE_CONSTRAINT_NOTNULL:
            return SwiftDataError(
                .modelValidationFailure, "\(entity).\(property) needs a value; nothing was saved",
                entity: entity, property: property)
        default:
            return SwiftDataError(.storeFailure, "the store failed to save: \(databaseError)")
        }
    }

    /// A unique index made over saved rows that already share values: a migration that adds `.unique`
    /// or `#Unique`. Any other error is returned as it is.
    static func mapRowsBreakingNewUniqueness(_ error: any Error) -> any Error {
        guard let databaseError = error as? DatabaseError,
              databaseError.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE else { return error }
        let (entity, properties) = constrainedColumns(in: databaseError.message ?? "")
        return SwiftDataError(
            .uniqueConstraintViolation,
            "\(mustBeUnique(entity, properties, now: true)), but saved rows share values: make them differ, or "
                + "merge them, in the willMigrate of a custom migration stage",
            entity: entity, property: properties.joined(separator: ", "))
    }

    /// "Tag.name must be unique", or "Trip's name and startDate must be unique together".
    private static func mustBeUnique(_ entity: String, _ properties: [String], now: Bool = false) -> String {
        let must = now ? "must now be unique" : "must be unique"
        guard properties.count > 1, let last = properties.last else {
            return "\(entity).\(properties.first ?? "?") \(must)"
        }
        return "\(entity)'s \(properties.dropLast().joined(separator: ", ")) and \(last) \(must) together"
    }

    /// "UNIQUE constraint failed: Tag.name" names the table and column; a constraint on several
    /// columns lists them all, "Trip.name, Trip.startDate".
    private static func constrainedColumns(in message: String) -> (String, [String]) {
        guard let colon = message.lastIndex(of: ":") else { return ("?", ["?"]) }
        let qualified = message[message.index(after: colon)...].split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).split(separator: ".", maxSplits: 1).map(String.init) }
        guard let first = qualified.first, first.count == 2 else {
            return ("?", [qualified.first?.joined(separator: ".") ?? "?"])
        }
        return (first[0], qualified.map { $0.last ?? "?" })
    }
}

extension String {
    /// The string as an SQLite identifier: in double quotes, inner quotes doubled.
    var quotedIdentifier: String {
        // Names rarely hold a quote, and statements are built per row while saving: skip Foundation's search then.
        guard utf8.contains(UInt8(ascii: "\"")) else { return "\"" + self + "\"" }
        return "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
