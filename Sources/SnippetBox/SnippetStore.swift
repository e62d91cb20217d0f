import Foundation
import NIOPosix
import ObjectGraph
import Vapor

/// The app's data: one `ModelContainer`, and a fresh `ModelContext` for each piece of work.
///
/// SQLite calls block, so every piece of work runs on the application's thread pool, never on an
/// event loop. A closure gets its own context and returns plain values (view models), which are
/// `Sendable`; models never leave it.
public final class SnippetStore: Sendable {
    public let container: ModelContainer
    private let threadPool: NIOThreadPool

    public init(settings: AppSettings, threadPool: NIOThreadPool) throws {
        try FileManager.default.createDirectory(at: settings.dataDirectory, withIntermediateDirectories: true)
        container = try ModelContainer(
            for: Schema(versionedSchema: SnippetSchemaV1.self),
            migrationPlan: SnippetMigrationPlan.self,
            configurations: ModelConfiguration(url: settings.storeURL))
        self.threadPool = threadPool
    }

    /// Runs `body` with a new context. Changes it leaves unsaved are discarded.
    public func read<Result: Sendable>(_ body: @escaping @Sendable (ModelContext) throws -> Result) async throws -> Result {
        let container = self.container
        return try await threadPool.runIfActive {
            try body(ModelContext(container))
        }
    }

    /// Runs `body` with a new context, then saves what it changed, in one transaction.
    public func write<Result: Sendable>(_ body: @escaping @Sendable (ModelContext) throws -> Result) async throws -> Result {
        let container = self.container
        return try await threadPool.runIfActive {
            let context = ModelContext(container)
            let result = try body(context)
            try context.save()
            return result
        }
    }
}

extension Application {
    private struct SnippetStoreKey: StorageKey {
        typealias Value = SnippetStore
    }

    private struct SettingsKey: StorageKey {
        typealias Value = AppSettings
    }

    /// The store opened by `configure`.
    public var snippetStore: SnippetStore {
        get {
            guard let store = storage[SnippetStoreKey.self] else {
                preconditionFailure("configure(_:settings:) opens the snippet store before routes use it")
            }
            return store
        }
        set { storage[SnippetStoreKey.self] = newValue }
    }

    public var appSettings: AppSettings {
        get { storage[SettingsKey.self] ?? AppSettings() }
        set { storage[SettingsKey.self] = newValue }
    }
}

extension Request {
    var store: SnippetStore { application.snippetStore }
    var settings: AppSettings { application.appSettings }
}
