import Foundation
import NIOPosix
import ObjectGraph

/// Why a maintenance command could not do what it was asked, in words for whoever ran it.
public struct MaintenanceError: Error, CustomStringConvertible {
    public let description: String
}

/// Commands run on the data directory while the server is stopped (or beside it: both are safe).
public enum Maintenance {
    /// Checks every store in the data directory: the accounts store, each account's library and any
    /// other library file there, with SQLite's integrity check, and that every image file a row names
    /// exists and every file is named by a row. A store that cannot be opened is reported and the
    /// others are still checked. Returns whether all is well; nothing is created, so a data directory
    /// that does not exist is an error rather than an empty one found healthy.
    public static func check(_ settings: AppSettings, report: (String) -> Void) throws -> Bool {
        let directory = settings.dataDirectory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw MaintenanceError(description: "there is no data directory at \(directory.path) to check (DATA_DIR names it)")
        }
        var healthy = true
        func run(_ name: String, _ open: () throws -> ModelContainer) {
            do {
                let result = try open().checkIntegrity()
                healthy = healthy && result.isOK
                report("\(name): \(result.isOK ? "ok" : "PROBLEMS")")
                if !result.isOK { report(result.description) }
            } catch {
                healthy = false
                report("\(name): CANNOT BE OPENED")
                report("\(error)")
            }
        }
        func exists(_ name: String) -> Bool {
            FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path)
        }

        var accounts: AccountStore?
        if exists(AccountStore.fileName) {
            run(AccountStore.fileName) {
                let store = try AccountStore(dataDirectory: directory, threadPool: .singleton)
                accounts = store
                return store.container
            }
        } else {
            report("\(AccountStore.fileName): not made yet (the server makes it when it first starts)")
        }
        // The accounts' libraries, and library files no account names (the first library before any
        // account, or one whose account could not be read): every store there is checked.
        let owned = Set(accounts?.all.map(\.libraryFileName) ?? [])
        let onDisk = ([AppSettings.firstLibraryFileName] + libraryFileNames(in: directory)).filter(exists)
        for name in owned.union(onDisk).sorted() {
            if exists(name) {
                run(name) { try SnippetStore.openContainer(at: directory.appendingPathComponent(name)) }
            } else {
                // Libraries are made when their account first signs in.
                report("\(name): not made yet (its account has not signed in)")
            }
        }
        return healthy
    }

    /// The store files in the data directory's `libraries` folder, as paths relative to the directory.
    private static func libraryFileNames(in directory: URL) -> [String] {
        let folder = "libraries"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent(folder).path)) ?? []
        return names.filter { $0.hasSuffix(".store") }.map { "\(folder)/\($0)" }
    }

    /// Writes a backup archive of the data directory into its `backups` folder; returns where, and a
    /// warning for each library whose image files were missing.
    public static func backup(_ settings: AppSettings) throws -> (archive: URL, warnings: [String]) {
        let accounts = try AccountStore(dataDirectory: settings.dataDirectory, threadPool: .singleton)
        try FileManager.default.createDirectory(at: settings.backupDirectory, withIntermediateDirectories: true)
        let written = try BackupArchive.create(
            accounts: accounts,
            libraryContainer: { try SnippetStore.openContainer(at: settings.dataDirectory.appendingPathComponent($0.libraryFileName)) },
            dataDirectory: settings.dataDirectory, into: settings.backupDirectory)
        return (written.archive, written.warnings)
    }

    /// Replaces the data directory with a backup archive's contents; returns where the old one went,
    /// and a warning for each library whose image files the archive lacks. Refused while a server
    /// uses the directory (`DataDirectoryLock`).
    public static func restore(_ archive: URL, settings: AppSettings) throws -> (previous: URL?, warnings: [String]) {
        let claim = try DataDirectoryLock.claim(settings.dataDirectory)
        let restored = try withExtendedLifetime(claim) { try BackupArchive.restore(archive, to: settings.dataDirectory) }
        return (restored.previous, restored.warnings)
    }
}
