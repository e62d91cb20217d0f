import Foundation

/// Counts the arrivals of new history transactions in a container's store, as SwiftData's
/// `HistoryObserver` (2026) does: observe `eventCounter`, then read the history after your token.
///
/// ```swift
/// let observer = try HistoryObserver(observedModels: [Trip.self], authors: ["widget"], modelContainer: container)
/// withObservationTracking { _ = observer.eventCounter } onChange: { /* fetchHistory after the kept token */ }
/// ```
///
/// The history is read after the observer's token (`historyTokens`, keyed by store identifier) at
/// once after each save to the store in this process, and every `otherProcessesCheckInterval`
/// seconds for other processes' commits; the token then moves to the newest transaction read. When
/// one of those transactions is relevant (written by one of `authors`, and changing a model of one
/// of `observedModels`; either empty means any), `eventCounter` grows by one. Transactions that
/// were deleted before they were read count as relevant: what they changed is unknown.
public final class HistoryObserver: Observable, @unchecked Sendable {
    /// The container whose store is watched.
    public let modelContainer: ModelContainer
    /// The model types whose changes count; empty for any.
    public let observedModels: [any PersistentModel.Type]
    /// The authors whose transactions count; empty for any.
    public let authors: Set<String>

    private let observedEntities: Set<String>
    private let registrar = ObservationRegistrar()
    private let lock = NSLock()
    // Guarded by `lock`, as is the context, which only this observer uses.
    private let context: ModelContext
    private var token: DefaultHistoryToken
    private var counter = 0
    private var watch: StoreChangeWatch?

    /// Starts counting after `historyTokens`' token for the container's store, or, when nil (or
    /// holding none for it), after the store's newest transaction now. Relevant transactions already
    /// after the given token (saved while the app was away) count as one event at once.
    public convenience init(
        historyTokens: [String: any HistoryToken]? = nil, observedModels: [any PersistentModel.Type] = [],
        authors: Set<String> = [], modelContainer: ModelContainer, isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(token: historyTokens?[modelContainer.store.identifier] as? DefaultHistoryToken,
                      observedModels: observedModels, authors: authors, modelContainer: modelContainer)
    }

    init(token: DefaultHistoryToken?, observedModels: [any PersistentModel.Type], authors: Set<String>, modelContainer: ModelContainer) throws {
        self.modelContainer = modelContainer
        self.observedModels = observedModels
        self.authors = authors
        self.observedEntities = Set(observedModels.map { Schema.entityName(for: $0) })
        self.context = ModelContext(modelContainer)
        self.token = try token ?? Self.newestToken(of: modelContainer.store)
        watch = StoreChangeWatch(store: modelContainer.store, interval: 1) { [weak self] in
            self?.readNewTransactions()
        }
        // What came after a given token is read now: the watch reads only on the next save or
        // another process's next commit, which may not come for long.
        if token != nil { readNewTransactions() }
    }

    /// The token of the newest transaction number given, deleted or not: a read after it finds
    /// nothing expired.
    private static func newestToken(of store: SQLiteStore) throws -> DefaultHistoryToken {
        let newest = try store.read { db in try HistoryLog.newestNumberGiven(in: db) }
        return DefaultHistoryToken(storeIdentifier: store.identifier, transaction: newest)
    }

    /// How many times relevant transactions arrived since the observer began.
    public var eventCounter: Int {
        registrar.access(self, keyPath: \.eventCounter)
        return lock.withLock { counter }
    }

    /// Where the observer has read the history to, by store identifier.
    public var historyTokens: [String: any HistoryToken] {
        lock.withLock { [token.storeIdentifier: token] }
    }

    /// How often other processes' commits are looked for, in seconds (1 by default); 0 or less stops looking.
    public var otherProcessesCheckInterval: TimeInterval {
        get { watch?.interval ?? 0 }
        set { watch?.interval = newValue }
    }

    /// Reads the transactions after the token, moves the token past them, and counts an event if
    /// one is relevant.
    func readNewTransactions() {
        let relevant: Bool = lock.withLock {
            let after = token
            let descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > after })
            let transactions: [DefaultHistoryTransaction]
            do {
                transactions = try context.fetchHistory(descriptor)
            } catch let error as SwiftDataError where error.code == .historyTokenExpired {
                // Deleted before they were read: start again after the newest number given.
                if let newest = try? Self.newestToken(of: modelContainer.store) { token = newest }
                return true
            } catch {
                return false
            }
            guard let newest = transactions.last else { return false }
            token = newest.token
            return transactions.contains(where: isRelevant)
        }
        guard relevant else { return }
        registrar.withMutation(of: self, keyPath: \.eventCounter) {
            lock.withLock { counter += 1 }
        }
    }

    private func isRelevant(_ transaction: DefaultHistoryTransaction) -> Bool {
        if !authors.isEmpty, !authors.contains(transaction.author ?? "") { return false }
        if observedEntities.isEmpty { return true }
        return transaction.changes.contains { observedEntities.contains($0.changedPersistentIdentifier.entityName) }
    }
}
