import Foundation
import NIOPosix
import ObjectGraph

/// Why a maintenance command could not do what it was asked, in words for whoever ran it.
public struct MaintenanceError: Error, CustomStringConvertible {
    public let description: String
}

/// Commands run on the data directory while the server is stopped, or beside it (both are safe, but
/// for a server of an earlier version: see `refuseUpdatesBesideAServer`).
public enum Maintenance {
    /// Refuses to go on beside a server of an earlier version (the data directory's claim held by a
    /// process that wrote no `DataDirectoryLock.holderForm`) when this version's open would change a
    /// store there: convert its dates or migrate it. That server still uses the file: it would read the
    /// changed file in its own form (every date 31 years early, so that its next purge emptied the
    /// trash) and write its own form into a store marked converted. Stopping it and starting this
    /// version updates the stores. Beside a server of this version, a library it has not opened yet
    /// (its account has not signed in since the upgrade) is updated by the command, as the server
    /// would update it.
    public static func refuseUpdatesBesideAServer(_ settings: AppSettings, command: String) throws {
        let directory = settings.dataDirectory
        guard DataDirectoryLock.holder(of: directory) == .earlierVersion else { return }
        let libraries = [AppSettings.firstLibraryFileName] + libraryFileNames(in: directory)
        var outdated = try AccountStore.needsUpdate(dataDirectory: directory) ? [AccountStore.fileName] : []
        outdated += try libraries.filter { try SnippetStore.needsUpdate(at: directory.appendingPathComponent($0)) }
        guard !outdated.isEmpty else { return }
        throw MaintenanceError(description: "a snippetbox server is using \(directory.path), and its stores "
            + "(\(outdated.joined(separator: ", "))) are in an earlier version's form: that server is an earlier version. "
            + "Nothing was changed. Stop it and start this version, which updates them, then run \(command) again")
    }

    /// Checks every store in the data directory: the accounts store, each account's library and any
    /// other library file there, with SQLite's integrity check, and that every image file a row names
    /// exists (files no row names are noted, not counted as damage). A store that cannot be opened is
    /// reported and the others are still checked. Returns whether all is well; nothing is created, so a data directory
    /// that does not exist is an error rather than an empty one found healthy.
    ///
    /// With `repair`, a library's snippets whose image file is gone lose the image they name (the
    /// file cannot come back from this store; a backup that has it can), so that the library exports
    /// again and its pages stop asking for an image that fails; each is listed.
    public static func check(_ settings: AppSettings, repair: Bool = false, report: (String) -> Void) throws -> Bool {
        let directory = settings.dataDirectory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw MaintenanceError(description: "there is no data directory at \(directory.path) to check (DATA_DIR names it)")
        }
        try refuseUpdatesBesideAServer(settings, command: "check")
        var healthy = true
        func run(_ name: String, isLibrary: Bool = false, _ open: () throws -> ModelContainer) {
            do {
                let container = try open()
                var result = try container.checkIntegrity()
                if repair && isLibrary && result.sqliteCheck == ["ok"] && !result.missingExternalFiles.isEmpty {
                    for title in try forgetMissingImages(in: container) {
                        report("\(name): removed the missing image of “\(title)”")
                    }
                    result = try container.checkIntegrity()
                }
                // Files no row names are not damage: run alone, the open above removed them (left by a
                // crash mid-save); beside a server they are its uploads not yet committed, or files
                // kept for a read still under way.
                let isSound = result.sqliteCheck == ["ok"] && result.missingExternalFiles.isEmpty
                healthy = healthy && isSound
                report("\(name): \(isSound ? "ok" : "PROBLEMS")")
                if !isSound {
                    report(result.description)
                } else if !result.orphanedExternalFiles.isEmpty {
                    let count = result.orphanedExternalFiles.count
                    report("  \(count) image file\(count == 1 ? "" : "s") no row names yet (an upload under way beside the "
                        + "server, or a file kept for a read); the server removes such files when it next starts alone")
                }
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
                run(name, isLibrary: true) { try SnippetStore.openContainer(at: directory.appendingPathComponent(name)) }
            } else {
                // Libraries are made when their account first signs in.
                report("\(name): not made yet (its account has not signed in)")
            }
        }
        return healthy
    }

    /// Clears the image of each snippet whose image file cannot be read; returns their titles. The
    /// snippet is otherwise untouched: no new version, the same date of change.
    ///
    /// Beside a server, a snippet found without its file may have been given a new image meanwhile
    /// (the server removes the file an edit replaced): the clearing context, reading the row afresh,
    /// would have taken the new image away and reported it missing. So a snippet changed since it was
    /// found (another date of change) is left alone. `beforeClearing` runs between the two, for tests.
    static func forgetMissingImages(in container: ModelContainer, beforeClearing: () throws -> Void = {}) throws -> [String] {
        let withImages = try ModelContext(container).fetchIdentifiers(FetchDescriptor<Snippet>(
            predicate: #Predicate { $0.imageContentType != nil }, sortBy: [SortDescriptor(\.title)]))
        // Found in contexts of 50 snippets each, let go of in turn: a context keeps the images it read,
        // and a library's images all at once could be gigabytes.
        var gone: [(id: PersistentIdentifier, updatedAt: Date)] = []
        for start in stride(from: 0, to: withImages.count, by: 50) {
            let finding = ModelContext(container)
            for id in withImages[start..<min(start + 50, withImages.count)] {
                if let snippet = finding.model(for: id) as? Snippet, snippet.imageData == nil { gone.append((id, snippet.updatedAt)) }
            }
        }
        try beforeClearing()
        // Cleared in a context of its own: one that read a file that is gone refuses to save (its
        // save says the file cannot be read), and clearing the value reads no file.
        let clearing = ModelContext(container)
        var titles: [String] = []
        for (id, updatedAt) in gone {
            guard let snippet = clearing.model(for: id) as? Snippet, snippet.updatedAt == updatedAt else { continue }
            // Set though it reads as nil: the row names the file until it is.
            snippet.imageData = nil
            snippet.imageContentType = nil
            titles.append(snippet.title)
        }
        try clearing.save()
        return titles
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
        try refuseUpdatesBesideAServer(settings, command: "backup")
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
