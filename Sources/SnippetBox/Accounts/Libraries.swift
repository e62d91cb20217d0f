import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import ObjectGraph

/// The open library stores, one per account, opened on first use and kept open.
///
/// Each account's store is opened under a lock of its own: opening reads the library ahead (a tenth
/// of a second at 100,000 snippets) and may migrate it (seconds), and under one lock for all, every
/// other account's requests waited for it, each on its event loop.
public final class Libraries: Sendable {
    private let dataDirectory: URL
    private let threadPool: NIOThreadPool
    private let openStore: @Sendable (URL, NIOThreadPool) throws -> SnippetStore
    /// One slot per account asked for.
    private let slots: NIOLockedValueBox<[UUID: Slot]>

    /// An account's store once opened, and the lock its opening holds: a look at the store never
    /// waits for an opening.
    private final class Slot: Sendable {
        let opening = NIOLock()
        let store = NIOLockedValueBox<SnippetStore?>(nil)
    }

    /// `openStore` opens a library's store; tests give one that waits, to open two at once.
    public init(
        dataDirectory: URL, threadPool: NIOThreadPool,
        openStore: @escaping @Sendable (URL, NIOThreadPool) throws -> SnippetStore = { try SnippetStore(url: $0, threadPool: $1) }
    ) {
        self.dataDirectory = dataDirectory
        self.threadPool = threadPool
        self.openStore = openStore
        slots = NIOLockedValueBox([:])
    }

    private func slot(of account: AccountInfo) -> Slot {
        slots.withLockedValue { slots in
            if let slot = slots[account.id] { return slot }
            let slot = Slot()
            slots[account.id] = slot
            return slot
        }
    }

    /// The file of an account's library. Its name comes from the accounts store, never from a request.
    public func url(of account: AccountInfo) -> URL {
        dataDirectory.appendingPathComponent(account.libraryFileName)
    }

    /// The account's library, opened (and migrated, the first time) if it is not open yet.
    public func store(for account: AccountInfo) throws -> SnippetStore {
        let slot = slot(of: account)
        if let store = slot.store.withLockedValue({ $0 }) { return store }
        return try slot.opening.withLock {
            if let store = slot.store.withLockedValue({ $0 }) { return store }
            let opened = try openStore(url(of: account), threadPool)
            slot.store.withLockedValue { $0 = opened }
            return opened
        }
    }

    /// The account's library, opened on the thread pool if it is not open yet, or why it cannot be
    /// opened. Opening reads the store and may migrate it (seconds for a large library): on the
    /// request's own thread, which is an event loop in the served app, every connection of that loop
    /// would wait. The request keeps the outcome (`Request.store`), so that a library that failed to
    /// open is not opened again there, on the event loop, to report the failure.
    public func openInBackground(for account: AccountInfo) async -> Result<SnippetStore, any Error> {
        if let store = slots.withLockedValue({ $0[account.id] })?.store.withLockedValue({ $0 }) { return .success(store) }
        do {
            return .success(try await threadPool.runIfActive { try self.store(for: account) })
        } catch {
            return .failure(error)
        }
    }

    /// Closes the account's library and moves its files into `removed/` in the data directory,
    /// where an administrator can still recover them: a folder named by the username (as much of it
    /// as fits a file name) and the account's id, which is unique whatever the name holds.
    public func retire(_ account: AccountInfo) throws {
        _ = slots.withLockedValue { $0.removeValue(forKey: account.id) }
        let source = url(of: account)
        let target = dataDirectory.appendingPathComponent("removed", isDirectory: true)
            .appendingPathComponent(Self.retiredFolderName(account, at: .now), isDirectory: true)
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        let folder = source.deletingLastPathComponent()
        let prefix = source.lastPathComponent
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasPrefix(prefix) {
            try FileManager.default.moveItem(at: folder.appendingPathComponent(name), to: target.appendingPathComponent(name))
        }
    }

    /// `<username>-<id>-<seconds>`, the username cut to 60 bytes of whole Characters with anything a
    /// file name cannot hold replaced: file names have at most 255 bytes.
    static func retiredFolderName(_ account: AccountInfo, at date: Date) -> String {
        var name = ""
        for character in FolderArchive.safeName(account.username) {
            guard name.utf8.count + character.utf8.count <= 60 else { break }
            name.append(character)
        }
        return "\(name)-\(account.id.idString)-\(Formatting.wholeSeconds(date))"
    }
}
