import Foundation
import GRDB

/// What `ModelContainer.checkIntegrity()` found: SQLite's own check, and whether every external
/// file a row names is there and every file there is named by a row.
public struct StoreIntegrityReport: Sendable, Equatable, CustomStringConvertible {
    /// The lines `PRAGMA integrity_check` printed: `["ok"]` for a sound file.
    public let sqliteCheck: [String]
    /// Files that rows refer to but that are not in the store's external folder.
    public let missingExternalFiles: [String]
    /// Files in the external folder that no row refers to.
    public let orphanedExternalFiles: [String]

    public init(sqliteCheck: [String], missingExternalFiles: [String], orphanedExternalFiles: [String]) {
        self.sqliteCheck = sqliteCheck
        self.missingExternalFiles = missingExternalFiles
        self.orphanedExternalFiles = orphanedExternalFiles
    }

    public var isOK: Bool {
        sqliteCheck == ["ok"] && missingExternalFiles.isEmpty && orphanedExternalFiles.isEmpty
    }

    public var description: String {
        var lines = ["integrity_check: \(sqliteCheck.joined(separator: "; "))"]
        lines.append("missing external files: \(missingExternalFiles.isEmpty ? "none" : missingExternalFiles.joined(separator: ", "))")
        lines.append("orphaned external files: \(orphanedExternalFiles.isEmpty ? "none" : orphanedExternalFiles.joined(separator: ", "))")
        return lines.joined(separator: "\n")
    }
}

/// What `ModelContainer.backup(to:)` copied. (Not in SwiftData, which has no backup.)
public struct StoreBackupReport: Sendable, Equatable {
    /// Files that rows refer to but that were not in the store's external folder when the copy was
    /// taken: the copy's rows name them too, and they are missing there as well. Empty for a sound store.
    public let missingExternalFiles: [String]

    public init(missingExternalFiles: [String]) {
        self.missingExternalFiles = missingExternalFiles
    }
}

extension ModelContainer {
    /// Writes a consistent copy of the store to `destination` while the store stays in use: the
    /// database through SQLite's online backup, and the external files its rows name, in
    /// `<destination>.external`. Saves wait while the copy is taken, so that the copied rows and
    /// the copied files belong to the same moment. `destination` must not exist yet.
    ///
    /// Another process using the store (a server, beside a command that backs it up) does not wait,
    /// and removes a file its save dropped at once. So the rows are copied, their file names read and
    /// the files linked into the copy in one read transaction, files first; a file gone meanwhile that
    /// the store's rows no longer name makes the copy stale, and it is taken again.
    ///
    /// A file a row names but that is gone does not stop the copy (everything else in the store
    /// would be left without a backup for it); the report names it.
    @discardableResult
    public func backup(to destination: URL) throws -> StoreBackupReport {
        guard !configuration.isStoredInMemoryOnly else {
            throw SwiftDataError(.backupFailure, "an in-memory store has no file to back up")
        }
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw SwiftDataError(.backupFailure, "\(destination.path) already exists")
        }
        let store = self.store
        // Its barrier waits for every read to end, this thread's too.
        try store.requireNoReadTransaction("backup(to:)")
        let files = destination.deletingLastPathComponent()
            .appendingPathComponent(destination.lastPathComponent + ".external", isDirectory: true)
        // A copy left by a failure or a stale attempt is not a backup.
        func discardCopy() {
            try? FileManager.default.removeItem(at: destination)
            try? FileManager.default.removeItem(at: files)
        }
        do {
            try FileManager.default.createDirectory(
                at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            for _ in 1...Self.backupAttempts {
                let missing = try copyOnce(to: destination, files: files)
                guard !missing.isEmpty else { return StoreBackupReport(missingExternalFiles: []) }
                // Gone because a later save dropped them, or lost: the rows as they are now tell.
                let named = try store.read { try store.referencedExternalFileNames(in: $0) }
                if missing.allSatisfy(named.contains) { return StoreBackupReport(missingExternalFiles: missing) }
                discardCopy()
            }
            throw SwiftDataError(
                .backupFailure,
                "\(configuration.url.path) changed under each of \(Self.backupAttempts) copies (another process replaced "
                    + "the files they named); try again")
        } catch let error as SwiftDataError {
            discardCopy()
            throw error
        } catch {
            discardCopy()
            throw SwiftDataError(.backupFailure, "cannot back up \(configuration.url.path) to \(destination.path): \(error)")
        }
    }

    /// How many copies `backup(to:)` takes before it gives up on a store another process keeps changing.
    static let backupAttempts = 5

    /// One copy of the rows and the files they name, as of one moment; returns the named files not found.
    private func copyOnce(to destination: URL, files: URL) throws -> [String] {
        let store = self.store
        let copy = try DatabaseQueue(path: destination.path)
        defer { try? copy.close() }
        return try store.writer.barrierWriteWithoutTransaction { db -> [String] in
            var missing: [String] = []
            // A deferred transaction that only reads: the rows copied are those its first read saw.
            try db.inTransaction(.deferred) {
                if let external = store.externalStorage {
                    missing = try external.linkFiles(named: try store.referencedExternalFileNames(in: db), to: files)
                }
                try copy.writeWithoutTransaction { target in try db.backup(to: target) }
                return .commit
            }
            return missing
        }
    }

    /// Merges each full-text index (`@Attribute(.spotlight)`) into one segment. Not in SwiftData,
    /// which has no full-text index on Linux.
    ///
    /// FTS5 writes a segment of the index at each save and merges them a few at a time, so a store
    /// filled in many saves keeps a dozen or more, and every query of the index looks its words up
    /// in each: the demo library's 100,000 snippets, saved 5,000 at a time, left 13. A search's
    /// excerpts look the word up again for each hit shown: 25 of them took 0.9 ms with 13 segments
    /// and 0.4 ms with one, and the first visit of a common word's search 1 ms less in the app.
    /// Merging took 0.8 s there, with saves waiting. Searches give the same hits, ranks and counts
    /// before and after, so nothing kept is dropped. For after a bulk load: saves add segments again.
    public func optimizeSearchIndexes() throws {
        let store = self.store
        try store.requireNoReadTransaction("optimizeSearchIndexes()")
        let tables = store.fullTextIndexes.values.map(\.tableName).sorted()
        guard !tables.isEmpty else { return }
        do {
            try store.writer.write { db in
                for table in tables {
                    try db.execute(sql: "INSERT INTO \(table.quotedIdentifier)(\(table.quotedIdentifier)) VALUES('optimize')")
                }
            }
        } catch {
            throw SwiftDataError(.storeFailure, "cannot merge the full-text indexes of \(configuration.url.path): \(error)")
        }
    }

    /// Runs SQLite's integrity check and compares the external files with the rows that name them.
    ///
    /// Another process using the store (a server, beside a command that checks it) removes a file its
    /// save dropped at once, which rows this read still sees may name. A file is reported missing only
    /// if the rows read after the folder was listed still name it: its save had committed before, so
    /// nothing since could have removed it but damage.
    public func checkIntegrity() throws -> StoreIntegrityReport {
        let store = self.store
        let report = try store.read { db in
            let sqliteCheck = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            let referenced = try store.referencedExternalFileNames(in: db)
            let present = Set(store.externalStorage?.fileNames() ?? [])
            return StoreIntegrityReport(
                sqliteCheck: sqliteCheck,
                missingExternalFiles: referenced.subtracting(present).sorted(),
                orphanedExternalFiles: present.subtracting(referenced).sorted())
        }
        guard !report.missingExternalFiles.isEmpty else { return report }
        let namedNow = try store.read { try store.referencedExternalFileNames(in: $0) }
        return StoreIntegrityReport(
            sqliteCheck: report.sqliteCheck, missingExternalFiles: report.missingExternalFiles.filter(namedNow.contains),
            orphanedExternalFiles: report.orphanedExternalFiles)
    }
}

extension ModelContainer {
    /// The largest store `readAheadStoreFiles()` reads ahead, as a share of the machine's memory: a
    /// larger one would push everything else out of the file cache for pages it may never need.
    static let readAheadShareOfMemory: UInt64 = 4

    /// Asks the operating system to read the store's files (the database and its write-ahead log)
    /// into its file cache now, in large reads, rather than one page at a time as queries first need
    /// them. (Not in SwiftData.)
    ///
    /// After a reboot, or once other files have pushed the store out of the cache, SQLite reads every
    /// page a query needs from the disk on its own: at 100,000 snippets (a 445 MB file) the first
    /// visit of a list page then took up to 73 ms against 16 with the file cached, and opening the
    /// store 210 ms against 100. Read ahead in 4 MB ranges, the whole file was cached in 77 ms; with
    /// the file already cached, the call takes about 6 ms there. Call it when a store opens, before
    /// the first reads; on Linux only, and not for a store larger than a quarter of the machine's
    /// memory. Returns whether it asked.
    @discardableResult
    public func readAheadStoreFiles() -> Bool {
        guard !configuration.isStoredInMemoryOnly else { return false }
        #if os(Linux)
        let database = configuration.url.path
        let files = [database, database + "-wal"]
        let sizes = files.map { (try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? UInt64) ?? 0 }
        guard sizes.reduce(0, +) <= ProcessInfo.processInfo.physicalMemory / Self.readAheadShareOfMemory else { return false }
        for (index, (path, size)) in zip(files, sizes).enumerated() where size > 0 {
            // The database file is read through a descriptor kept open while its path names it:
            // closing any descriptor of a file drops every POSIX lock the process holds on it, SQLite's
            // among them. With its locks gone, another process (`snippetbox check`, `backup` or
            // `seed` beside the server) took itself for the store's last user, checkpointed and deleted
            // the write-ahead log the server was still writing to: its saves were lost, or the store
            // was left malformed. SQLite takes no such lock on the log, which is opened and closed.
            let keepsOpen = index == 0
            guard let descriptor = keepsOpen ? Self.keptReadAheadDescriptor(for: path) : Self.openForReadAhead(path) else { continue }
            defer { if !keepsOpen { close(descriptor) } }
            // The kernel reads at most its read-ahead window (a few megabytes) for one piece of advice,
            // whatever the length asked for: the file is advised a range at a time.
            let range: UInt64 = 4 << 20
            var offset: UInt64 = 0
            while offset < size {
                _ = posix_fadvise(descriptor, off_t(offset), off_t(min(range, size - offset)), POSIX_FADV_WILLNEED)
                offset += range
            }
        }
        return true
        #else
        return false
        #endif
    }

    private static func openForReadAhead(_ path: String) -> CInt? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        return descriptor >= 0 ? descriptor : nil
    }

    /// Descriptors of database files read ahead, by path, each opened once and kept while its path
    /// names that file (see `readAheadStoreFiles`): one a store, as SQLite itself keeps.
    private static let readAheadDescriptors = LockedValue<[String: CInt]>([:])

    private static func keptReadAheadDescriptor(for path: String) -> CInt? {
        readAheadDescriptors.withLock { descriptors in
            // A file removed or replaced since (a test's temporary store, a restored backup) is one no
            // other process can open by its path any more, so its descriptor is closed rather than
            // kept for good.
            for (keptPath, kept) in descriptors where !fileIsStillAt(keptPath, openAt: kept) {
                close(kept)
                descriptors[keptPath] = nil
            }
            if let kept = descriptors[path] { return kept }
            let descriptor = openForReadAhead(path)
            descriptors[path] = descriptor
            return descriptor
        }
    }
}

extension ModelContainer {
    /// Whether opening the store at `url` for `schema` would change the file before any context reads
    /// it: a migration to the schema's version, or the one-time conversion of its dates (`StoredDates`).
    /// Reads the file without writing to it; false when there is no file yet. Throws what the open
    /// would throw for a store it refuses (a later version's, say). (Not in SwiftData.)
    ///
    /// A process of a later version that opens a store an earlier one still uses changes the file
    /// under it: the earlier one reads converted dates as its own form, and writes its own form into
    /// a store marked converted. A maintenance command run beside a server asks this first.
    public static func storeNeedsUpdate(
        at url: URL, for schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil
    ) throws -> Bool {
        try StoreMigrator(url: url, schema: versioned(schema, by: migrationPlan), plan: migrationPlan, externalStorage: nil,
                          configuration: ModelConfiguration(url: url)).needsUpdate()
    }
}
