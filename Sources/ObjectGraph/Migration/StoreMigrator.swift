import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif

/// Brings an existing store file to the code's schema before the container opens it.
///
/// The store's recorded schema (or, for a store without one, the version whose tables it matches)
/// says where it is. A store newer than the code, or at a version the plan does not know, is refused
/// and left untouched. Otherwise every stage from its version to the code's runs in order, on a
/// working copy: the original is copied aside first (`<store>.<old version>-<time>.backup`), row counts
/// are checked after each stage, and only a migration that completes replaces the store, by renaming
/// the working copy over it. Whatever fails, the store is as it was.
struct StoreMigrator {
    let url: URL
    let schema: Schema
    let plan: (any SchemaMigrationPlan.Type)?
    let externalStorage: ExternalStorage?
    let configuration: ModelConfiguration

    /// One step from one schema to the next.
    enum Step {
        case lightweight(to: Schema)
        case custom(from: Schema, to: Schema, willMigrate: ((ModelContext) throws -> Void)?, didMigrate: ((ModelContext) throws -> Void)?)

        var target: Schema {
            switch self {
            case .lightweight(let to), .custom(_, let to, _, _): to
            }
        }
    }

    /// What opening the store does first.
    private enum Opening {
        /// There is no store yet: no file, or one with no tables. Another container creating the store
        /// leaves its file so until its first transaction commits; with a plan, such a file matched no
        /// version, and opening it beside the creator failed.
        case create
        /// Whether it converts the store's dates, and the steps that migrate it (perhaps none).
        case update(recorded: StoredSchema?, tables: MatchedVersion?, convertsDates: Bool, steps: [Step])

        var changesTheStore: Bool {
            switch self {
            case .create: true
            case .update(_, _, let convertsDates, let steps): convertsDates || !steps.isEmpty
            }
        }
    }

    /// Throws for a store the open refuses, which is left untouched: one newer than the code, at a
    /// version the plan does not list, or whose dates are in a form this version does not read.
    private func opening() throws -> Opening {
        guard FileManager.default.fileExists(atPath: url.path) else { return .create }
        guard let (recorded, tables, datesForm) = try inspect() else { return .create }
        let steps = try plannedSteps(recorded: recorded, tables: tables, target: StoredSchema(schema: schema))
        if let datesForm, datesForm != StoredDates.currentForm { throw StoredDates.unknownForm(datesForm, at: url) }
        return .update(recorded: recorded, tables: tables, convertsDates: datesForm == nil, steps: steps)
    }

    /// Whether `migrateIfNeeded` would change an existing store: convert its dates, or run a step.
    /// False for a store not made yet.
    func needsUpdate() throws -> Bool {
        let opening = try opening()
        if case .update = opening { return opening.changesTheStore }
        return false
    }

    /// Creates the store, or updates it if it needs it, as one container at a time (`StoreUpdateLock`):
    /// a waiter plans again once the one before it is done, and finds nothing left to do.
    func migrateIfNeeded() throws {
        do {
            // Most opens find the store made and current, and need no lock.
            guard try opening().changesTheStore else { return }
        } catch let error as SwiftDataError where error.code == .loadIssueModelContainer {
            // Read while another container made or replaced the file, perhaps: read it again once it is done.
        }
        try StoreUpdateLock.holding(storeURL: url) {
            switch try opening() {
            case .create: try create()
            case .update(let recorded, let tables, let convertsDates, let steps):
                try update(recorded: recorded, tables: tables, convertsDates: convertsDates, steps: steps)
            }
        }
    }

    /// Makes the store's file whole in one step, under the lock: in write-ahead-log mode, with the
    /// schema's tables and its record. Left to each container, two making one store at once raced to
    /// turn the log on, and one failed ("database is locked").
    private func create() throws {
        var configuration = Configuration()
        // Others may be reading the file to see whether it is made yet: wait for them, as a store does.
        configuration.busyMode = SQLiteStore.busyMode
        let queue = try DatabaseQueue(path: url.path, configuration: configuration)
        defer { try? queue.close() }
        try queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = WAL") }
        try StoreSchemaWriter(schema: schema).createOrUpdate(in: queue)
    }

    private func update(recorded: StoredSchema?, tables: MatchedVersion?, convertsDates: Bool, steps: [Step]) throws {
        // Before any stage reads the store: its contexts read dates in the current form. As before a
        // migration, the store as it was is copied aside first (by the one process that converts it).
        if convertsDates {
            try StoredDates.convert(storeAt: url, dataSchema: schemaOfStoredRows(recorded: recorded, tables: tables), recorded: recorded) {
                try copyStore(to: url.deletingLastPathComponent()
                    .appendingPathComponent("\(url.lastPathComponent).dates1970-\(Self.timestamp()).backup"))
            }
        }
        guard !steps.isEmpty else { return }
        let start = recorded ?? tables.map { StoredSchema(schema: $0.schema) } ?? StoredSchema(schema: schema)
        try run(steps, from: start)
    }

    // MARK: Deciding what to do

    private struct MatchedVersion {
        let index: Int
        let schema: Schema
    }

    /// The schema the store's rows were written with, as far as the code knows it: the plan's version
    /// the store records or its tables match, else the code's own (`StoredDates` converts only the
    /// properties a recorded schema lists with the same type).
    private func schemaOfStoredRows(recorded: StoredSchema?, tables: MatchedVersion?) -> Schema {
        if let tables { return tables.schema }
        if let plan, let version = recorded?.schemaVersion, version != schema.version,
           let written = plan.schemas.first(where: { $0.versionIdentifier == version }) {
            return Schema(versionedSchema: written)
        }
        return schema
    }

    /// Reads the recorded schema and form of dates without writing to the store, and, for a store
    /// that has no recorded schema, which version of the plan its tables match. Nil for a file with
    /// no tables, which is a store not made yet.
    private func inspect() throws -> (StoredSchema?, MatchedVersion?, datesForm: String?)? {
        try readOnly { db in
            guard try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sqlite_master") != 0 else { return nil }
            let datesForm = try StoredDates.recordedForm(in: db)
            if let recorded = try StoreSchemaWriter.recordedSchema(in: db) { return (recorded, nil, datesForm) }
            guard let plan else { return (nil, nil, datesForm) }
            for (index, version) in plan.schemas.enumerated() {
                let candidate = Schema(versionedSchema: version)
                if try tablesMatch(candidate, in: db) { return (nil, MatchedVersion(index: index, schema: candidate), datesForm) }
            }
            return (nil, nil, datesForm)
        }
    }

    /// Reads the store through a connection that cannot write to it.
    private func readOnly<T>(_ body: (Database) throws -> T) throws -> T {
        var readOnly = Configuration()
        readOnly.readonly = true
        readOnly.busyMode = SQLiteStore.busyMode
        do {
            let queue = try DatabaseQueue(path: url.path, configuration: readOnly)
            defer { try? queue.close() }
            return try queue.read(body)
        } catch let error as SwiftDataError {
            throw error
        } catch {
            throw SwiftDataError(.loadIssueModelContainer, "cannot read the store at \(url.path): \(error)")
        }
    }

    private func tablesMatch(_ schema: Schema, in db: Database) throws -> Bool {
        for entity in schema.entities {
            guard try db.tableExists(entity.name) else { return false }
            let columns = Set(try db.columns(in: entity.name).map(\.name))
            let expected = Set(["_pk", "_version"] + entity.layout.storedColumnSlots.map(\.name))
            if columns != expected { return false }
        }
        return true
    }

    private func plannedSteps(recorded: StoredSchema?, tables: MatchedVersion?, target: StoredSchema) throws -> [Step] {
        if let recordedVersion = recorded?.schemaVersion, recordedVersion > schema.version {
            throw SwiftDataError(
                .backwardMigration,
                "the store at \(url.path) is at schema version \(recordedVersion), newer than this code's \(schema.version): "
                    + "it was left untouched; run a newer version of the app")
        }
        guard let plan else {
            // Without a plan, only what needs no code: a lightweight step from the recorded schema.
            guard let recorded, recorded != target else { return [] }
            return [.lightweight(to: schema)]
        }
        let versions = plan.schemas.map { $0.versionIdentifier }
        let startIndex: Int
        if let recorded {
            guard let version = recorded.schemaVersion, let index = versions.firstIndex(of: version) else {
                if recorded == target { return [] }
                throw SwiftDataError(
                    .unknownSchema,
                    "the store at \(url.path) is at schema version \(recorded.version), which the migration plan "
                        + "\(plan) does not list; it was left untouched")
            }
            startIndex = index
        } else if let tables {
            startIndex = tables.index
        } else {
            throw SwiftDataError(
                .unknownSchema,
                "the store at \(url.path) records no schema and its tables match no version of \(plan); it was left untouched")
        }
        let targetIndex = versions.firstIndex(of: schema.version) ?? versions.count - 1
        if startIndex == targetIndex {
            guard let recorded, recorded != target else { return tables == nil ? [] : [.lightweight(to: schema)] }
            return [.lightweight(to: schema)]
        }
        guard startIndex < targetIndex else {
            throw SwiftDataError(
                .backwardMigration, "the store is at \(versions[startIndex]), after the code's \(versions[targetIndex]); it was left untouched")
        }
        var steps: [Step] = []
        for index in startIndex..<targetIndex {
            let from = plan.schemas[index], to = plan.schemas[index + 1]
            let fromSchema = Schema(versionedSchema: from)
            let toSchema = index + 1 == targetIndex ? schema : Schema(versionedSchema: to)
            let stage = plan.stages.first { stage in
                switch stage {
                case .lightweight(let stageFrom, let stageTo), .custom(let stageFrom, let stageTo, _, _):
                    stageFrom.versionIdentifier == from.versionIdentifier && stageTo.versionIdentifier == to.versionIdentifier
                }
            }
            switch stage {
            case .custom(_, _, let willMigrate, let didMigrate):
                steps.append(.custom(from: fromSchema, to: toSchema, willMigrate: willMigrate, didMigrate: didMigrate))
            case .lightweight, nil:
                steps.append(.lightweight(to: toSchema))
            }
        }
        return steps
    }

    // MARK: Running

    private func run(_ steps: [Step], from start: StoredSchema) throws {
        let working = url.appendingPathExtension("migrating")
        let backup = url.deletingLastPathComponent()
            .appendingPathComponent("\(url.lastPathComponent).\(start.version)-\(Self.timestamp()).backup")
        var writtenFiles: [String] = []
        var releasedFiles: [String] = []
        Self.removeDatabaseFiles(at: working)
        do {
            try copyStore(to: backup)
            try copyStore(to: working)
        } catch {
            Self.removeDatabaseFiles(at: working)
            throw SwiftDataError(.migrationFailure, "cannot copy the store before migrating it: \(error); it was left untouched")
        }
        do {
            var current = start
            for step in steps {
                let countsBefore = try rowCounts(at: working)
                var deleted: [String: Int] = [:]
                if case .custom(let from, _, let willMigrate?, _) = step {
                    deleted.merge(try runCustom(willMigrate, on: from, at: working), uniquingKeysWith: +)
                    current = StoredSchema(schema: from)
                }
                var migration = LightweightMigration(old: current, new: step.target, externalStorage: externalStorage)
                let queue = try DatabaseQueue(path: working.path)
                do {
                    try queue.write { db in
                        try migration.apply(in: db)
                        try StoreSchemaWriter(schema: step.target).createOrUpdate(in: db)
                    }
                    try queue.close()
                } catch {
                    try? queue.close()
                    writtenFiles += migration.writtenFiles
                    throw error
                }
                writtenFiles += migration.writtenFiles
                releasedFiles += migration.releasedFiles
                current = StoredSchema(schema: step.target)
                if case .custom(_, let to, _, let didMigrate?) = step {
                    deleted.merge(try runCustom(didMigrate, on: to, at: working), uniquingKeysWith: +)
                }
                try checkRowCounts(before: countsBefore, after: try rowCounts(at: working), deleted: deleted, target: step.target)
            }
            try replaceStore(with: working)
        } catch {
            Self.removeDatabaseFiles(at: working)
            for name in writtenFiles { externalStorage?.remove(name) }
            let error = StoreErrorMapper.mapRowsBreakingNewUniqueness(error)
            let reason = (error as? SwiftDataError)?.message ?? "\(error)"
            throw SwiftDataError(
                .migrationFailure,
                "migrating the store at \(url.path) failed: \(reason). The store was left as it was; "
                    + "a copy is at \(backup.lastPathComponent)",
                entity: (error as? SwiftDataError)?.entityName, property: (error as? SwiftDataError)?.propertyName)
        }
        for name in releasedFiles { externalStorage?.remove(name) }
    }

    /// Runs a custom stage's closure with a context on the working copy, and returns the rows it deleted.
    private func runCustom(_ body: (ModelContext) throws -> Void, on schema: Schema, at working: URL) throws -> [String: Int] {
        var configuration = ModelConfiguration(url: working)
        configuration.name = self.configuration.name
        let container = try ModelContainer(migrationStageFor: schema, configuration: configuration, externalStorage: externalStorage)
        defer { container.store.close() }
        let context = ModelContext(container)
        try body(context)
        try context.save()
        return container.store.deletedRowCounts
    }

    private func rowCounts(at path: URL) throws -> [String: Int] {
        let queue = try DatabaseQueue(path: path.path)
        defer { try? queue.close() }
        return try queue.read { db in
            var counts: [String: Int] = [:]
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            where !table.hasPrefix("_") && !table.hasPrefix("sqlite_") {
                counts[table] = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(table.quotedIdentifier)") ?? 0
            }
            return counts
        }
    }

    /// No stage may lose rows of an entity it keeps, beyond those its own code deleted.
    private func checkRowCounts(before: [String: Int], after: [String: Int], deleted: [String: Int], target: Schema) throws {
        for entity in target.entities {
            guard let old = before[entity.name] ?? entity.originalName.flatMap({ before[$0] }) else { continue }
            let new = after[entity.name] ?? 0
            let expected = old - (deleted[entity.name] ?? 0)
            if new < expected {
                throw SwiftDataError(
                    .migrationFailure, "\(entity.name) had \(old) rows before the stage and \(new) after, \(old - new) lost",
                    entity: entity.name)
            }
        }
    }

    private func copyStore(to destination: URL) throws {
        Self.removeDatabaseFiles(at: destination)
        var readOnly = Configuration()
        readOnly.readonly = true
        readOnly.busyMode = SQLiteStore.busyMode
        let source = try DatabaseQueue(path: url.path, configuration: readOnly)
        defer { try? source.close() }
        let copy = try DatabaseQueue(path: destination.path)
        defer { try? copy.close() }
        try source.backup(to: copy)
    }

    /// Renames the migrated copy over the store. The store's write-ahead log is folded into it first,
    /// so that no stale log can be replayed onto the new file.
    private func replaceStore(with working: URL) throws {
        let copy = try DatabaseQueue(path: working.path)
        try copy.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            try db.execute(sql: "PRAGMA journal_mode = DELETE")
        }
        try copy.close()
        let original = try DatabaseQueue(path: url.path)
        try original.writeWithoutTransaction { db in _ = try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try original.close()
        for suffix in ["-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
        if rename(working.path, url.path) != 0 {
            throw SwiftDataError(.migrationFailure, "cannot replace the store with its migrated copy (errno \(errno))")
        }
        Self.removeDatabaseFiles(at: working)
    }

    private static func removeDatabaseFiles(at url: URL) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    private static func timestamp() -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return formatter.string(from: Date())
    }
}
