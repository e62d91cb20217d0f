import Foundation

/// Tells its owner of changes to a store: at once of every save to it in this process (through any
/// context), and, every `interval` seconds, of other connections' commits (another process, or
/// another container of the same file), which SQLite tells no one of: the look costs a `stat` of
/// the store's files while nothing moved (`AggregateCache.foreignCommitsNoticed`). Used by
/// `ResultsObserver` and `HistoryObserver`.
final class StoreChangeWatch: @unchecked Sendable {
    private let lock = NSLock()
    private let cache: AggregateCache
    private let changed: @Sendable () -> Void
    private var saveObserver: (any NSObjectProtocol)?
    private var timer: (any DispatchSourceTimer)?
    private var foreignCommitsSeen: UInt64
    private var currentInterval: TimeInterval = 0

    init(store: SQLiteStore, interval: TimeInterval, changed: @escaping @Sendable () -> Void) {
        cache = store.aggregateCache
        self.changed = changed
        foreignCommitsSeen = cache.foreignCommitsNoticed()
        let storeIdentity = ObjectIdentifier(store)
        saveObserver = NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: nil, queue: nil) { notification in
            guard let saver = notification.object as? ModelContext, ObjectIdentifier(saver.store) == storeIdentity else { return }
            changed()
        }
        self.interval = interval
    }

    deinit {
        if let saveObserver { NotificationCenter.default.removeObserver(saveObserver) }
        timer?.cancel()
    }

    /// Seconds between looks for other connections' commits; 0 or less stops looking.
    var interval: TimeInterval {
        get { lock.withLock { currentInterval } }
        set {
            let next: (any DispatchSourceTimer)? = newValue > 0 ? DispatchSource.makeTimerSource(queue: .global(qos: .utility)) : nil
            let previous = lock.withLock {
                defer { currentInterval = newValue; timer = next }
                return timer
            }
            previous?.cancel()
            guard let next else { return }
            next.schedule(deadline: .now() + newValue, repeating: newValue, leeway: .milliseconds(Int(newValue * 100)))
            next.setEventHandler { [weak self] in self?.lookForOtherConnectionsCommits() }
            next.resume()
        }
    }

    private func lookForOtherConnectionsCommits() {
        let noticed = cache.foreignCommitsNoticed()
        let moved = lock.withLock {
            defer { foreignCommitsSeen = noticed }
            return noticed != foreignCommitsSeen
        }
        if moved { changed() }
    }
}
