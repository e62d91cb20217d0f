import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import ObjectGraph

/// The open library stores, one per account, opened on first use and kept open.
public final class Libraries: Sendable {
    private let dataDirectory: URL
    private let threadPool: NIOThreadPool
    private let open: NIOLockedValueBox<[UUID: SnippetStore]>

    public init(dataDirectory: URL, threadPool: NIOThreadPool) {
        self.dataDirectory = dataDirectory
        self.threadPool = threadPool
        open = NIOLockedValueBox([:])
    }

    /// The file of an account's library. Its name comes from the accounts store, never from a request.
    public func url(of account: AccountInfo) -> URL {
        dataDirectory.appendingPathComponent(account.libraryFileName)
    }

    /// The account's library, opened (and migrated, the first time) if it is not open yet.
    public func store(for account: AccountInfo) throws -> SnippetStore {
        try open.withLockedValue { stores in
            if let store = stores[account.id] { return store }
            let store = try SnippetStore(url: url(of: account), threadPool: threadPool)
            stores[account.id] = store
            return store
        }
    }

    /// Opens the account's library on the thread pool if it is not open yet. Opening reads the store and
    /// may migrate it (seconds for a large library): on the request's own thread, which is an event loop
    /// in the served app, every connection of that loop would wait. A failure is left for the route's
    /// own `store(for:)` to report, as it was.
    public func openInBackground(for account: AccountInfo) async {
        guard open.withLockedValue({ $0[account.id] == nil }) else { return }
        _ = try? await threadPool.runIfActive { try self.store(for: account) }
    }

    /// Closes the account's library and moves its files into `removed/` in the data directory,
    /// where an administrator can still recover them.
    public func retire(_ account: AccountInfo) throws {
        _ = open.withLockedValue { $0.removeValue(forKey: account.id) }
        let source = url(of: account)
        let target = dataDirectory.appendingPathComponent("removed", isDirectory: true)
            .appendingPathComponent("\(account.username)-\(Int(Date.now.timeIntervalSince1970))", isDirectory: true)
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        let folder = source.deletingLastPathComponent()
        let prefix = source.lastPathComponent
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasPrefix(prefix) {
            try FileManager.default.moveItem(at: folder.appendingPathComponent(name), to: target.appendingPathComponent(name))
        }
    }
}
