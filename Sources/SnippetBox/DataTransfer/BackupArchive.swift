import Foundation
import ObjectGraph
import ZIPFoundation

/// A backup of the whole data directory in one ZIP: the accounts store and every library, each
/// copied with SQLite's online backup while the server keeps running, with their image files.
/// `restore` puts such an archive in place of the data directory (with the server stopped).
enum BackupArchive {
    static let filePrefix = "snippetbox-backup-"
    /// How a scheduled backup's name ends: only those are pruned (`BACKUP_KEEP` counts scheduled
    /// backups), never one made with "Back up now" or `snippetbox backup`.
    static let scheduledSuffix = "-scheduled.zip"

    /// A backup written, and what it could not hold.
    struct Written {
        let archive: URL
        /// One line for each store whose rows name image files that were missing from the data folder.
        let warnings: [String]
    }

    /// A restore done, and what the archive lacked.
    struct Restored {
        /// Where the data directory that was replaced went, if there was one.
        let previous: URL?
        /// One line for each store whose rows name image files the archive lacks.
        let warnings: [String]
    }

    /// Writes an archive of the stores in `dataDirectory` into `directory`.
    ///
    /// An image file that a snippet names but that is gone from the data folder does not stop the
    /// backup: the archive then keeps every other snippet and image, and the warning says which
    /// library lacks how many. (The backup refused nothing before, and its restore refused the whole
    /// archive, every account's data with it.)
    static func create(
        accounts: AccountStore, libraryContainer: (AccountInfo) throws -> ModelContainer,
        dataDirectory: URL, into directory: URL, now: Date = .now, isScheduled: Bool = false
    ) throws -> Written {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd-HHmmss-SSS"
        let name = "\(filePrefix)\(formatter.string(from: now))" + (isScheduled ? scheduledSuffix : ".zip")
        let staging = directory.appendingPathComponent(".\(name).staging", isDirectory: true)
        let archiveURL = directory.appendingPathComponent(name)
        let partial = directory.appendingPathComponent(".\(name).partial")
        try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: staging)
            try? FileManager.default.removeItem(at: partial)
        }
        try accounts.container.backup(to: staging.appendingPathComponent(AccountStore.fileName))
        // An account's library through its open container; the first library before any account
        // owns it (it may already hold snippets) opened for the copy.
        var warnings: [String] = []
        for library in accounts.libraryFiles(in: dataDirectory) {
            let container = try library.owner.map(libraryContainer)
                ?? SnippetStore.openContainer(at: dataDirectory.appendingPathComponent(library.name))
            let report = try container.backup(to: staging.appendingPathComponent(library.name))
            if !report.missingExternalFiles.isEmpty {
                warnings.append(missingImages(
                    library, report.missingExternalFiles.count, "could not be found in the data folder",
                    so: "the backup holds those snippets without their images"))
            }
        }
        try FileManager.default.zipItem(at: staging, to: partial, shouldKeepParent: false, compressionMethod: .deflate)
        // Renamed only once complete: a file named like a backup is a whole backup.
        try FileManager.default.moveItem(at: partial, to: archiveURL)
        return Written(archive: archiveURL, warnings: warnings)
    }

    private static func describe(_ library: AccountStore.LibraryFile) -> String {
        library.owner.map { "\(library.name) (the library of \($0.username))" } ?? library.name
    }

    /// The warning for a library whose rows name `count` image files that are gone, and what to do.
    private static func missingImages(_ library: AccountStore.LibraryFile, _ count: Int, _ gone: String, so outcome: String) -> String {
        "\(describe(library)): \(count == 1 ? "1 image file" : "\(count) image files") its snippets name \(gone), so "
            + "\(outcome) (snippetbox check lists the files; snippetbox check --repair removes those images from "
            + "their snippets, so that the library exports again)."
    }

    /// The backups in `directory`, newest first.
    static func list(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix(filePrefix) && $0.hasSuffix(".zip") }.sorted(by: >)
            .map { directory.appendingPathComponent($0) }
    }

    /// Deletes all but the newest `kept` scheduled backups; those made by hand stay until deleted.
    static func prune(in directory: URL, keeping kept: Int) {
        for old in list(in: directory).filter({ $0.lastPathComponent.hasSuffix(scheduledSuffix) }).dropFirst(kept) {
            try? FileManager.default.removeItem(at: old)
        }
    }

    /// Replaces the data directory with the archive's contents, after checking every store in it.
    /// The current data directory is kept beside it as `<name>.before-restore-<time>`; its
    /// `backups` folder moves into the restored one. Run it with the server stopped.
    ///
    /// A damaged store refuses the archive. Image files its snippets name but that it lacks do not:
    /// everything else it holds is restored, and the warnings say which library lacks how many.
    @discardableResult
    static func restore(_ archive: URL, to dataDirectory: URL, now: Date = .now) throws -> Restored {
        let parent = dataDirectory.deletingLastPathComponent()
        let stamp = String(Int(now.timeIntervalSince1970))
        let unpacked = parent.appendingPathComponent(".\(dataDirectory.lastPathComponent).restoring-\(stamp)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: unpacked) }
        // A folder given instead of an archive made ZIPFoundation look for the end of a ZIP forever.
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: archive.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw ImportError("\(archive.path) is not a backup archive (a ZIP file made by snippetbox backup).")
        }
        do {
            try FileManager.default.unzipItem(at: archive, to: unpacked)
        } catch {
            throw ImportError("\(archive.path) is not a readable backup archive: \(error)")
        }
        let warnings = try verify(unpacked)
        var previous: URL?
        // A directory holding nothing but the claim's lock file was made by the restore's own claim
        // (DATA_DIR did not exist): it was kept and reported as the data the restore replaced.
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory.path)) ?? []
        if contents == [DataDirectoryLock.fileName] {
            try FileManager.default.removeItem(at: dataDirectory)
        } else if FileManager.default.fileExists(atPath: dataDirectory.path) {
            let kept = parent.appendingPathComponent("\(dataDirectory.lastPathComponent).before-restore-\(stamp)", isDirectory: true)
            try FileManager.default.moveItem(at: dataDirectory, to: kept)
            previous = kept
        }
        try FileManager.default.moveItem(at: unpacked, to: dataDirectory)
        if let previous {
            let backups = previous.appendingPathComponent("backups")
            if FileManager.default.fileExists(atPath: backups.path) {
                try? FileManager.default.moveItem(at: backups, to: dataDirectory.appendingPathComponent("backups"))
            }
        }
        return Restored(previous: previous, warnings: warnings)
    }

    /// Opens every store of an unpacked archive and checks it; returns a warning for each library
    /// whose rows name image files it lacks. (Files no row names were swept when it opened.)
    private static func verify(_ folder: URL) throws -> [String] {
        guard FileManager.default.fileExists(atPath: folder.appendingPathComponent(AccountStore.fileName).path) else {
            throw ImportError("The archive holds no accounts.store: it is not a SnippetBox backup.")
        }
        let accounts = try AccountStore(dataDirectory: folder, threadPool: .singleton)
        try refuseIfDamaged(AccountStore.fileName, try accounts.container.checkIntegrity())
        var warnings: [String] = []
        for library in accounts.libraryFiles(in: folder) {
            let url = folder.appendingPathComponent(library.name)
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw ImportError("The archive lacks \(library.name), the library of \(library.owner?.username ?? "no account").")
            }
            let report = try SnippetStore.openContainer(at: url).checkIntegrity()
            try refuseIfDamaged(library.name, report)
            if !report.missingExternalFiles.isEmpty {
                let count = report.missingExternalFiles.count
                warnings.append(missingImages(
                    library, count, "\(count == 1 ? "is" : "are") not in the archive",
                    so: "those snippets are restored without their images"))
            }
        }
        return warnings
    }

    private static func refuseIfDamaged(_ name: String, _ report: StoreIntegrityReport) throws {
        if report.sqliteCheck != ["ok"] {
            throw ImportError("\(name) in the archive is damaged:\n\(report)")
        }
    }
}
