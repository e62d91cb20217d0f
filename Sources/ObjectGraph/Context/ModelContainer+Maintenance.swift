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

extension ModelContainer {
    /// Writes a consistent copy of the store to `destination` while the store stays in use: the
    /// database through SQLite's online backup, and the external files beside it, in
    /// `<destination>.external`. Saves wait while the copy is taken, so that the copied rows and
    /// the copied files belong to the same moment. `destination` must not exist yet.
    public func backup(to destination: URL) throws {
        guard !configuration.isStoredInMemoryOnly else {
            throw SwiftDataError(.backupFailure, "an in-memory store has no file to back up")
        }
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw SwiftDataError(.backupFailure, "\(destination.path) already exists")
        }
        let store = self.store
        // Its barrier waits for every read to end, this thread's too.
        try store.requireNoReadTransaction("backup(to:)")
        do {
            try FileManager.default.createDirectory(
                at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            let copy = try DatabaseQueue(path: destination.path)
            try store.writer.barrierWriteWithoutTransaction { db in
                try copy.writeWithoutTransaction { target in try db.backup(to: target) }
                if let external = store.externalStorage {
                    let target = destination.deletingLastPathComponent()
                        .appendingPathComponent(destination.lastPathComponent + ".external", isDirectory: true)
                    try external.copyFiles(to: target)
                }
            }
            try copy.close()
        } catch let error as SwiftDataError {
            throw error
        } catch {
            try? FileManager.default.removeItem(at: destination)
            throw SwiftDataError(.backupFailure, "cannot back up \(configuration.url.path) to \(destination.path): \(error)")
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
    public func checkIntegrity() throws -> StoreIntegrityReport {
        let store = self.store
        return try store.read { db in
            let sqliteCheck = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            let referenced = try store.referencedExternalFileNames(in: db)
            let present = Set(store.externalStorage?.fileNames() ?? [])
            return StoreIntegrityReport(
                sqliteCheck: sqliteCheck,
                missingExternalFiles: referenced.subtracting(present).sorted(),
                orphanedExternalFiles: present.subtracting(referenced).sorted())
        }
    }
}
