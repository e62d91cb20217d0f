import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import ObjectGraph
import Vapor

/// One library's data: a `ModelContainer`, and a fresh `ModelContext` for each piece of work.
///
/// SQLite calls block, so every piece of work runs on the application's thread pool, never on an
/// event loop. A closure gets its own context and returns plain values (view models), which are
/// `Sendable`; models never leave it.
public final class SnippetStore: Sendable {
    public let container: ModelContainer
    private let threadPool: NIOThreadPool
    /// Held by each write from its reads to its save, so that writes run one at a time, each reading
    /// what the one before it saved. Side by side, two saves of one snippet (a star double-clicked,
    /// one form sent from two tabs) read it at one version, and the second failed with ObjectGraph's
    /// "changed by another context" (a 500, the typed text lost); two forms naming one new folder
    /// each found none and made one, leaving two folders of one name. SQLite takes one save at a
    /// time anyway, so this holds back only a write's reads, which are short.
    private let writing = NIOLock()

    /// The models of the current version, which every library store is opened with.
    public static let schema = Schema(versionedSchema: SnippetSchemaV3.self)

    public init(url: URL, threadPool: NIOThreadPool) throws {
        container = try Self.openContainer(at: url)
        self.threadPool = threadPool
        // The file in the OS's file cache first, in large reads, for what follows and the first pages:
        // after a reboot they read it page by page from the disk (first visits up to 73 ms at 100,000
        // snippets, against 16 with the file cached). Already cached, this is a few milliseconds.
        container.readAheadStoreFiles()
        do {
            try Self.prepareFirstPages(in: container)
        } catch {
            // Only a head start: without it the first pages count in SQL, and a first search looks
            // up its hits' lengths, as they did before.
            Logger(label: "SnippetBox.SnippetStore").warning("Could not prepare the first pages of \(url.lastPathComponent): \(error)")
        }
    }

    /// Reads the library's groups (each snippet's folder, language and tags, and the snippets outside
    /// the trash) as the store keeps them for counts, so that the first list page counts in memory like
    /// the pages after it. Otherwise it counted the whole library in SQL, three times, while the same
    /// groups were read in the background (47–68 ms at 100,000 snippets); opening takes that much longer
    /// instead, once, on the thread pool (see `Libraries.openInBackground`).
    ///
    /// It also reads the length of every snippet's text, which ranking a search weighs each hit by:
    /// a first search for a common word then ranks without looking each hit's length up in the
    /// full-text index (see `ModelContext.prepareSearch(of:)`).
    static func prepareFirstPages(in container: ModelContainer) throws {
        let context = ModelContext(container)
        try context.prepareSearch(of: Snippet.self)
        try context.prepareCounts(of: \Snippet.folder, where: Snippet.inLibrary)
        try context.prepareCounts(ofEach: \Snippet.tags, where: Snippet.inLibrary)
        try context.prepareCounts(of: \Snippet.language, where: Snippet.inLibrary)
    }

    /// Whether opening the library at `url` would change the file first (see `Maintenance.refuseUpdatesBesideAServer`).
    static func needsUpdate(at url: URL) throws -> Bool {
        try ModelContainer.storeNeedsUpdate(at: url, for: schema, migrationPlan: SnippetMigrationPlan.self)
    }

    /// Opens (creating or migrating) the library store at `url`.
    public static func openContainer(at url: URL) throws -> ModelContainer {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        return try ModelContainer(
            for: schema, migrationPlan: SnippetMigrationPlan.self, configurations: ModelConfiguration(url: url))
    }

    /// Runs `body` with a new context, in one read transaction: a page's list, total and counts read
    /// the same state of the library even while a save lands, and the page's eight or so reads skip
    /// a transaction each. Changes it leaves unsaved are discarded (saving there throws).
    public func read<Result: Sendable>(_ body: @escaping @Sendable (ModelContext) throws -> Result) async throws -> Result {
        let container = self.container
        return try await threadPool.runIfActive {
            let context = ModelContext(container)
            return try context.withReadTransaction { try body(context) }
        }
    }

    /// Runs `body` with a new context, then saves what it changed, in one transaction.
    public func write<Result: Sendable>(_ body: @escaping @Sendable (ModelContext) throws -> Result) async throws -> Result {
        let container = self.container
        let writing = self.writing
        return try await threadPool.runIfActive {
            try writing.withLock {
                let context = ModelContext(container)
                let result = try body(context)
                try context.save()
                return result
            }
        }
    }
}

extension Application {
    private struct AccountStoreKey: StorageKey {
        typealias Value = AccountStore
    }

    private struct LibrariesKey: StorageKey {
        typealias Value = Libraries
    }

    private struct SettingsKey: StorageKey {
        typealias Value = AppSettings
    }

    /// The accounts, opened by `configure`.
    public var accounts: AccountStore {
        get {
            guard let store = storage[AccountStoreKey.self] else {
                preconditionFailure("configure(_:settings:) opens the accounts before routes use them")
            }
            return store
        }
        set { storage[AccountStoreKey.self] = newValue }
    }

    /// Every account's library, opened by `configure`.
    public var libraries: Libraries {
        get {
            guard let libraries = storage[LibrariesKey.self] else {
                preconditionFailure("configure(_:settings:) sets the libraries up before routes use them")
            }
            return libraries
        }
        set { storage[LibrariesKey.self] = newValue }
    }

    public var appSettings: AppSettings {
        get { storage[SettingsKey.self] ?? AppSettings() }
        set { storage[SettingsKey.self] = newValue }
    }
}

extension Request {
    private struct OpenedLibraryKey: StorageKey {
        typealias Value = Result<SnippetStore, any Error>
    }

    /// The logged-in account's library as `RequireAccountMiddleware` opened it, or why it could not.
    var openedLibrary: Result<SnippetStore, any Error>? {
        get { storage[OpenedLibraryKey.self] }
        set { storage[OpenedLibraryKey.self] = newValue }
    }

    /// The logged-in account's library. Routes reach it only behind `RequireAccountMiddleware`;
    /// anywhere else it is "log in first", never another account's data.
    var store: SnippetStore {
        get throws {
            guard let account else { throw Abort(.unauthorized, reason: "Log in first.") }
            if let openedLibrary { return try openedLibrary.get() }
            return try application.libraries.store(for: account)
        }
    }

    var settings: AppSettings { application.appSettings }
}
