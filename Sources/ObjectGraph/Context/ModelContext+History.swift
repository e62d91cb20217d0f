import Foundation

extension ModelContext {
    /// The transactions of the store's history that match a descriptor, oldest first unless it sorts
    /// them: each save that wrote is one, listing the models it deleted, updated and inserted.
    ///
    /// ```swift
    /// var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
    /// descriptor.predicate = #Predicate { $0.token > lastToken && $0.author != "server" }
    /// for transaction in try context.fetchHistory(descriptor) { … }
    /// ```
    ///
    /// Changes to entities the current schema no longer has are left out of their transactions.
    /// The predicate is tested in memory, on every transaction kept (what each changed is read only
    /// if the predicate asks, or for the transactions returned), but for a comparison of the token
    /// or the transaction identifier with a value (alone, or a part of `&&`), which the store reads
    /// from its start: `deleteHistory(_:)` keeps the history short.
    ///
    /// A predicate that asks for the transactions after a token (`$0.token > token`, alone or a part
    /// of `&&`) throws `SwiftDataError.historyTokenExpired` when some of them were deleted: the
    /// reader missed changes, and should read the models afresh and keep a new token.
    public func fetchHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws -> [T] {
        let transactions = try historyTransactions(matching: descriptor, refusingAnExpiredToken: true)
        // A record that cannot be read is the fetch's error, not a transaction that changed nothing.
        for case let transaction as DefaultHistoryTransaction in transactions { _ = try transaction.recordedChanges.decoded() }
        return transactions
    }

    /// Deletes the transactions of the store's history that match a descriptor (its order and limit
    /// say which, as they would for `fetchHistory(_:)`). The models they name are not touched, and
    /// later transactions keep their tokens. A predicate on the token or the time reads none of the
    /// changes (an old record that cannot be read is deleted like any other).
    public func deleteHistory<T: HistoryTransaction>(_ descriptor: HistoryDescriptor<T>) throws {
        let transactions = try historyTransactions(matching: descriptor, refusingAnExpiredToken: false).compactMap { ($0 as? DefaultHistoryTransaction)?.transactionIdentifier }
        try store.requireNoReadTransaction("deleteHistory(_:)")
        try store.writer.write { db in try HistoryLog.delete(transactions: transactions, in: db) }
    }

    /// The transactions a descriptor selects, in its order, their changes not yet decoded.
    private func historyTransactions<T: HistoryTransaction>(
        matching descriptor: HistoryDescriptor<T>, refusingAnExpiredToken: Bool
    ) throws -> [T] {
        guard T.self == DefaultHistoryTransaction.self else {
            throw SwiftDataError(
                .invalidTransactionFetchRequest,
                "ObjectGraph's store records DefaultHistoryTransaction; \(T.self) is not one")
        }
        // Where the predicate says which transactions it can select start, only those are read.
        let start = HistoryPredicateBound.start(descriptor.predicate, in: store.identifier)
        // The newest number given is read only where a token is to be checked.
        let checksToken = refusingAnExpiredToken && start.isFromToken
        let (entries, newestGiven) = try store.read { db in
            (try HistoryLog.entries(from: start.transaction, in: db), checksToken ? try HistoryLog.newestNumberGiven(in: db) : 0)
        }
        // Numbers are given one after another (a save that rolls back takes its number back), so
        // a first transaction later than the token's next, or none where numbers were given past the
        // token, means some after it were deleted.
        if checksToken, start.transaction <= newestGiven, entries.first?.transaction != start.transaction {
            throw SwiftDataError(
                .historyTokenExpired,
                "transactions after the token were deleted (\(start.transaction) the first of them); read the models afresh and keep a new token")
        }
        var transactions: [T] = []
        for entry in entries {
            let transaction = historyTransaction(entry)
            guard let typed = transaction as? T else { continue }
            if let predicate = descriptor.predicate {
                let matches = try predicate.evaluate(typed)
                // The predicate read changes that cannot be decoded: it tested an empty list.
                if transaction.recordedChanges.failed { _ = try transaction.recordedChanges.decoded() }
                if !matches { continue }
            }
            transactions.append(typed)
        }
        if !descriptor.sortBy.isEmpty {
            // Stable: transactions that tie keep their saved order.
            transactions = transactions.enumerated().sorted { left, right in
                for sort in descriptor.sortBy {
                    switch sort.compare(left.element, right.element) {
                    case .orderedAscending: return true
                    case .orderedDescending: return false
                    case .orderedSame: continue
                    }
                }
                return left.offset < right.offset
            }.map(\.element)
        }
        if let limit = descriptor.fetchLimit { transactions = Array(transactions.prefix(max(limit, 0))) }
        return transactions
    }

    private func historyTransaction(_ entry: HistoryLog.Entry) -> DefaultHistoryTransaction {
        let store = self.store
        let storeIdentifier = store.identifier
        return DefaultHistoryTransaction(
            author: entry.author,
            recordedChanges: RecordedHistoryChanges { try Self.changes(recordedIn: entry.changes, transaction: entry.transaction, store: store) },
            storeIdentifier: storeIdentifier, timestamp: entry.timestamp,
            token: DefaultHistoryToken(storeIdentifier: storeIdentifier, transaction: entry.transaction),
            transactionIdentifier: entry.transaction, bundleIdentifier: entry.bundle, processIdentifier: entry.process)
    }

    /// The changes a transaction's record lists, each typed by its model.
    private static func changes(recordedIn text: String, transaction: Int64, store: SQLiteStore) throws -> [HistoryChange] {
        var changes: [HistoryChange] = []
        for run in try HistoryLog.decode(text, transaction: transaction) {
            // An entity dropped from the schema since: its models can no longer be named by type.
            guard let layout = try? store.layout(named: run.entity) else { continue }
            try appendChanges(of: run, to: &changes, transaction: transaction, layout: layout,
                              modelType: layout.modelType, storeIdentifier: store.identifier)
        }
        return changes
    }

    /// The changes of one run, typed by the run's model (opened from the layout's model type).
    private static func appendChanges<Model: PersistentModel>(
        of run: HistoryLog.Run, to changes: inout [HistoryChange], transaction: Int64, layout: EntityLayout,
        modelType: Model.Type, storeIdentifier: String
    ) throws {
        func record(_ key: Int64) -> HistoryChangeRecord {
            HistoryChangeRecord(
                identifier: PersistentIdentifier(entityName: run.entity, storeIdentifier: storeIdentifier, primaryKey: key),
                position: HistoryChangeIdentifier(transaction: transaction, position: changes.count))
        }
        /// Key paths by property name; a property renamed or dropped since is left out.
        func keyPaths(_ names: [String]) -> [any PartialKeyPath<Model> & Sendable] {
            names.compactMap { name in
                guard let keyPath = layout.slots.first(where: { $0.name == name })?.keyPath as? PartialKeyPath<Model> else { return nil }
                return Self.sendable(keyPath)
            }
        }
        switch run.kind {
        case .insert:
            for key in run.keys {
                changes.append(.insert(DefaultHistoryInsert<Model>(record: record(key))))
            }
        case .update:
            let updated = keyPaths(run.properties ?? [])
            for key in run.keys {
                changes.append(.update(DefaultHistoryUpdate<Model>(record: record(key), updatedAttributes: updated)))
            }
        case .delete:
            let names = run.preserved ?? []
            let slots = names.map { name in layout.slots.first { $0.name == name && $0.codec != nil } }
            let tombstones = run.tombstones ?? []
            for (offset, key) in run.keys.enumerated() {
                var values: [HistoryTombstone<Model>.Element] = []
                if offset < tombstones.count {
                    for (slot, stored) in zip(slots, tombstones[offset]) {
                        guard let slot, let codec = slot.codec, let keyPath = slot.keyPath as? PartialKeyPath<Model> else { continue }
                        let value: Any
                        do {
                            value = try codec.decode(stored.databaseValue)
                        } catch {
                            throw SwiftDataError(
                                .unreadableValue, "the history keeps a value of \(run.entity).\(slot.name) that cannot be read: \(error)",
                                entity: run.entity, property: slot.name)
                        }
                        // A nil stays out: the subscript's nil says so.
                        if let optional = value as? any _OptionalValue, optional.wrappedAny == nil { continue }
                        values.append((Self.sendable(keyPath), Self.sendable(value)))
                    }
                }
                changes.append(.delete(DefaultHistoryDelete<Model>(
                    record: record(key), tombstone: HistoryTombstone(values: values))))
            }
        }
    }

    /// An attribute's value as `any Sendable`. Every attribute type ObjectGraph stores is a value
    /// type of Sendable parts (numbers, strings, dates, data, Codable structs and enums), and
    /// `Sendable` is a marker with no runtime form, so `Any` and `any Sendable` share one layout;
    /// Swift cannot check the conformance at run time, so no cast can say it.
    private static func sendable(_ value: Any) -> any Sendable {
        // Read through a rebound pointer: `unsafeBitCast` to an existential of a marker protocol
        // trapped in Swift 6 mode as a cast "between types of different sizes".
        withUnsafePointer(to: value) { $0.withMemoryRebound(to: (any Sendable).self, capacity: 1) { $0.pointee } }
    }

    /// A property's key path as `Sendable`, as SwiftData's history hands them out. The key paths a
    /// schema lists are literals of stored properties, capturing no values: immutable, safe to share,
    /// but typed without the conformance (a reference either way, so the layout is one).
    private static func sendable<Model>(_ keyPath: PartialKeyPath<Model>) -> any PartialKeyPath<Model> & Sendable {
        withUnsafePointer(to: keyPath) {
            $0.withMemoryRebound(to: (any PartialKeyPath<Model> & Sendable).self, capacity: 1) { $0.pointee }
        }
    }
}
