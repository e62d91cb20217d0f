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

    /// Writes an archive of the stores in `dataDirectory` into `directory` and returns its URL.
    static func create(
        accounts: AccountStore, libraryContainer: (AccountInfo) throws -> ModelContainer,
        dataDirectory: URL, into directory: URL, now: Date = .now, isScheduled: Bool = false
    ) throws -> URL {
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
        for library in accounts.libraryFiles(in: dataDirectory) {
            let container = try library.owner.map(libraryContainer)
                ?? SnippetStore.openContainer(at: dataDirectory.appendingPathComponent(library.name))
            try container.backup(to: staging.appendingPathComponent(library.name))
        }
        try FileManager.default.zipItem(at: staging, to: partial, shouldKeepParent: false, compressionMethod: .deflate)
        // Renamed only once complete: a file named like a backup is a whole backup.
        try FileManager.default.moveItem(at: partial, to: archiveURL)
        return archiveURL
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
    @discardableResult
    static func restore(_ archive: URL, to dataDirectory: URL, now: Date = .now) throws -> URL? {
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
        try verify(unpacked)
        var previous: URL?
        if FileManager.default.fileExists(atPath: dataDirectory.path) {
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
        return previous
    }

    /// Opens every store of an unpacked archive and checks it.
    private static func verify(_ folder: URL) throws {
        guard FileManager.default.fileExists(atPath: folder.appendingPathComponent(AccountStore.fileName).path) else {
            throw ImportError("The archive holds no accounts.store: it is not a SnippetBox backup.")
        }
        let accounts = try AccountStore(dataDirectory: folder, threadPool: .singleton)
        var reports = [(AccountStore.fileName, try accounts.container.checkIntegrity())]
        for library in accounts.libraryFiles(in: folder) {
            let url = folder.appendingPathComponent(library.name)
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw ImportError("The archive lacks \(library.name), the library of \(library.owner?.username ?? "no account").")
            }
            reports.append((library.name, try SnippetStore.openContainer(at: url).checkIntegrity()))
        }
        if let (name, report) = reports.first(where: { !$0.1.isOK }) {
            throw ImportError("\(name) in the archive is damaged:\n\(report)")
        }
    }
}
