import Foundation
import NIOPosix
import ObjectGraph

/// Commands run on the data directory while the server is stopped (or beside it: both are safe).
public enum Maintenance {
    /// Checks the accounts store and every library: SQLite's integrity check, and that every image
    /// file a row names exists and every file is named by a row. Returns whether all is well.
    public static func check(_ settings: AppSettings, report: (String) -> Void) throws -> Bool {
        let accounts = try AccountStore(dataDirectory: settings.dataDirectory, threadPool: .singleton)
        var healthy = true
        func run(_ name: String, _ container: ModelContainer) throws {
            let result = try container.checkIntegrity()
            healthy = healthy && result.isOK
            report("\(name): \(result.isOK ? "ok" : "PROBLEMS")")
            if !result.isOK { report(result.description) }
        }
        try run("accounts.store", accounts.container)
        for library in accounts.libraryFiles(in: settings.dataDirectory) {
            let url = settings.dataDirectory.appendingPathComponent(library.name)
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            try run(library.name, try SnippetStore.openContainer(at: url))
        }
        return healthy
    }

    /// Writes a backup archive of the data directory into its `backups` folder.
    public static func backup(_ settings: AppSettings) throws -> URL {
        let accounts = try AccountStore(dataDirectory: settings.dataDirectory, threadPool: .singleton)
        try FileManager.default.createDirectory(at: settings.backupDirectory, withIntermediateDirectories: true)
        return try BackupArchive.create(
            accounts: accounts,
            libraryContainer: { try SnippetStore.openContainer(at: settings.dataDirectory.appendingPathComponent($0.libraryFileName)) },
            dataDirectory: settings.dataDirectory, into: settings.backupDirectory)
    }

    /// Replaces the data directory with a backup archive's contents; returns where the old one went.
    /// Refused while a server uses the directory (`DataDirectoryLock`).
    public static func restore(_ archive: URL, settings: AppSettings) throws -> URL? {
        let claim = try DataDirectoryLock.claim(settings.dataDirectory)
        return try withExtendedLifetime(claim) { try BackupArchive.restore(archive, to: settings.dataDirectory) }
    }
}
