import Foundation
import GRDB

extension ModelContext {
    /// The models that match a descriptor, in its order. With `includePendingChanges` (the default)
    /// unsaved inserts, changes and deletes of this context are reflected.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        let layout = try store.layout(for: T.self)
        var query = try rowQuery(for: descriptor, layout: layout)
        let pending = descriptor.includePendingChanges ? pendingModels(of: T.self, layout: layout) : PendingModels<T>()
        let readsRelatedChanges = descriptor.includePendingChanges && readsUnsavedRelatedModels(query)
        guard !pending.isEmpty || readsRelatedChanges else {
            let includeDeleted = !descriptor.includePendingChanges
            let unloaded = try unloadedSlots(for: descriptor.propertiesToFetch, layout: layout)
            let rows = try store.fetchRows(layout, query: query, unloaded: unloaded)
            // Grown one model at a time, the registry rehashed every identifier at each doubling.
            registered.reserveCapacity(registered.count + rows.count)
            // A loop, not `compactMap`: the standard library's, not specialized for a model type it
            // only learns at run time, looked up the metadata of `T?` for every row.
            var results: [T] = []
            results.reserveCapacity(rows.count)
            for row in rows {
                if let object = try model(T.self, from: row, layout: layout, includeDeleted: includeDeleted, unloaded: unloaded) {
                    results.append(object)
                }
            }
            try prefetch(descriptor.relationshipKeyPathsForPrefetching, for: results, layout: layout)
            return results
        }
        if readsRelatedChanges {
            // The store would test and order the saved rows by the related models as they are saved,
            // not as this context shows them (a folder renamed, a tag's snippets changed from the
            // tag's side): every saved model is tested and ordered in memory instead.
            query.condition = nil
            query.orderBy = []
            query.limit = nil
        } else {
            // Unsaved changes can move models into or out of the window: read enough saved rows to
            // cover every model they can displace, then filter, order and cut the window in memory.
            query.limit = descriptor.fetchLimit.map { $0 + (descriptor.fetchOffset ?? 0) + pending.displacedCount }
        }
        query.offset = nil
        let changedModels = Set(pending.changed.map(ObjectIdentifier.init))
        var results: [T] = []
        var seen = Set<ObjectIdentifier>()
        for row in try store.fetchRows(layout, query: query) {
            if pending.awaitingBatchDelete.contains(row.primaryKey) { continue }
            guard let object = try model(T.self, from: row, layout: layout) else { continue }
            if changedModels.contains(ObjectIdentifier(object)) { continue }
            if readsRelatedChanges, try !(descriptor.predicate?.evaluate(object) ?? true) { continue }
            results.append(object)
            seen.insert(ObjectIdentifier(object))
        }
        for object in pending.changed + pending.inserted where !seen.contains(ObjectIdentifier(object)) {
            if try descriptor.predicate?.evaluate(object) ?? true { results.append(object) }
        }
        results = storeOrdered(results, by: descriptor.sortBy, inserted: pending.inserted)
        let start = min(descriptor.fetchOffset ?? 0, results.count)
        let end = descriptor.fetchLimit.map { min(start + $0, results.count) } ?? results.count
        let window = Array(results[start..<end])
        try prefetch(descriptor.relationshipKeyPathsForPrefetching, for: window, layout: layout)
        return window
    }

    /// The number of models that match a descriptor, without creating them.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        let layout = try store.layout(for: T.self)
        // The query is translated for this test only when there is an unsaved model to look for.
        if descriptor.includePendingChanges, holdsUnsavedModels, readsUnsavedRelatedModels(try rowQuery(for: descriptor, layout: layout)) {
            // Counted as `fetch` lists them, tested in memory (see there).
            var every = descriptor
            every.fetchOffset = nil
            every.fetchLimit = nil
            return window(ofCount: try fetch(every).count, offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)
        }
        var count = try savedCount(matching: descriptor.predicate, layout: layout)
        if descriptor.includePendingChanges {
            let pending = pendingModels(of: T.self, layout: layout)
            for object in pending.inserted where try descriptor.predicate?.evaluate(object) ?? true { count += 1 }
            // The saved rows of deleted and changed models are taken back as the store matched them
            // (a deleted model's values in memory may be edits made before the delete), and a changed
            // model counts as it is now, as `fetch` lists it.
            // A closure, not `\.storage.primaryKey`: a key path through a type known only at run time
            // is instantiated by the runtime on every call (a tenth of the sidebar's counts).
            let savedPending = (pending.deletedSaved + pending.changed).compactMap { $0.storage.primaryKey }
            count -= try savedKeys(among: savedPending, matching: descriptor.predicate, layout: layout).count
            for object in pending.changed where try descriptor.predicate?.evaluate(object) ?? true { count += 1 }
            // Rows awaiting a batch delete, but those of models loaded since it was asked for: counted
            // above already if deleted, and kept by the save if changed.
            let counted = Set(savedPending)
            let awaiting = pending.awaitingBatchDelete.filter { !counted.contains($0) }
            count -= try savedKeys(among: Array(awaiting), matching: descriptor.predicate, layout: layout).count
        }
        return window(ofCount: count, offset: descriptor.fetchOffset, limit: descriptor.fetchLimit)
    }

    /// How many of `count` models a fetch's offset and limit leave.
    private func window(ofCount count: Int, offset: Int?, limit: Int?) -> Int {
        var count = count
        if let offset { count = max(0, count - offset) }
        if let limit { count = min(count, limit) }
        return count
    }

    /// Whether this context has unsaved inserts, changes or deletes of any entity, or rows awaiting a batch delete.
    private var holdsUnsavedModels: Bool {
        !inserted.isEmpty || !changed.isEmpty || !deleted.isEmpty || !rowsAwaitingBatchDelete.isEmpty
    }

    /// Whether a query reads, through a relationship, models of an entity that has unsaved inserts,
    /// changes or deletes in this context (or rows awaiting a batch delete). The store answers it from
    /// the related rows as saved. Every table a query reads appears in its SQL as a quoted name; the
    /// queried entity's own table does only when a relationship leads back to it.
    private func readsUnsavedRelatedModels(_ query: RowQuery) -> Bool {
        guard holdsUnsavedModels, query.condition != nil || !query.orderBy.isEmpty else { return false }
        let named = AggregateCache.identifiers(in: ([query.condition?.sql ?? ""] + query.orderBy).joined(separator: " "))
        // A lookup per unsaved model, stopping at the first: the same walk `pendingModels` makes.
        func isNamed(_ model: any PersistentModel) -> Bool { named.contains(model.storage.layout.name) }
        return inserted.values.contains(where: isNamed) || changed.values.contains(where: isNamed)
            || deleted.values.contains(where: isNamed)
            || rowsAwaitingBatchDelete.contains { !$0.value.isEmpty && named.contains($0.key) }
    }

    /// Which of `keys` are saved rows that match `predicate`, as the store holds them.
    private func savedKeys<T: PersistentModel>(among keys: [Int64], matching predicate: Predicate<T>?, layout: EntityLayout) throws -> [Int64] {
        guard !keys.isEmpty else { return [] }
        var query = try rowQuery(for: FetchDescriptor<T>(predicate: predicate), layout: layout)
        let among = RowQuery.keyIsAmong(keys)
        query.condition = query.condition.map { SQLFragment("(\($0.sql)) AND \(among.sql)", $0.arguments + among.arguments) } ?? among
        return try store.fetchKeys(layout, query: query)
    }

    /// How many saved models match `predicate`; one that excludes the holders of a to-many match, by
    /// complement (see `NegatedRelationshipTest`).
    private func savedCount<T: PersistentModel>(matching predicate: Predicate<T>?, layout: EntityLayout) throws -> Int {
        // From the key sets of the predicate's parts when the counts per group have kept (or prepared)
        // some (see `matchingKeys`): an intersection in memory, where even one part counted in SQL walks
        // its index (3 ms for the 94,000 snippets outside the trash).
        if let keys = try matchingKeys(predicate, layout: layout, unlessAllNew: true) {
            return keys.count
        }
        if let predicate, let split = NegatedRelationshipTest(predicate) {
            let every = try savedCount(matching: split.others, layout: layout)
            let holding = try savedCount(matching: split.othersAndTest, layout: layout)
            // More holders than models: the two counts read different states of the store.
            if holding <= every { return every - holding }
        }
        let query = try rowQuery(for: FetchDescriptor<T>(predicate: predicate), layout: layout, use: .collectingMatches)
        // A save brings the kept count up to date by testing its few rows one at a time.
        return try store.count(layout, condition: query.condition, rowCondition: predicate.map { predicate in
            { [store] in try PredicateTranslator.translate(predicate, layout: layout, store: store) }
        })
    }

    /// The identifiers of the models that match a descriptor, in its order: those `fetch` lists, read
    /// from the store's keys alone when the context holds no unsaved change they could reflect. With
    /// such changes (and `includePendingChanges`), the models are fetched to place them, and an
    /// inserted one has the temporary identifier it keeps until the save.
    public func fetchIdentifiers<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [PersistentIdentifier] {
        let layout = try store.layout(for: T.self)
        let query = try rowQuery(for: descriptor, layout: layout)
        if placesUnsavedChanges(descriptor, query: query, layout: layout) {
            // Listing the saved rows' keys named a model edited out of the predicate and left out an
            // inserted one, unlike `fetch`.
            return try fetch(descriptor).map(\.persistentModelID)
        }
        return try store.fetchKeys(layout, query: query)
            .map { PersistentIdentifier(entityName: layout.name, storeIdentifier: store.identifier, primaryKey: $0) }
    }

    /// Calls `block` with every matching model, reading `batchSize` at a time so that memory stays bounded.
    ///
    /// Which models match, and in what order, is settled before the first call, as for
    /// `fetch(_:batchSize:)`: a block that saves changes to what matches (marking each model done, or
    /// deleting it) still meets every model once. Paging with an offset instead skipped a batch's
    /// worth of models each time the saved changes moved rows out of the match. A model the block
    /// deletes before its turn is skipped, and so is one whose row another context deleted, unless
    /// this context holds it. With `includePendingChanges` and unsaved changes of the entity, those
    /// are placed as `fetch` places them, which reads every match at once: save first to walk a
    /// large table in bounded memory.
    ///
    /// Models of a finished batch that have no unsaved changes are released from the context. Without
    /// `allowEscapingMutations`, a batch that leaves unsaved changes throws: save inside the block, or
    /// allow the mutations to escape.
    public func enumerate<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>,
        batchSize: Int = 5000,
        allowEscapingMutations: Bool = false,
        block: (T) throws -> Void
    ) throws {
        let batchSize = max(1, batchSize)
        let layout = try store.layout(for: T.self)
        let query = try rowQuery(for: descriptor, layout: layout)
        // Models the context held before their batch was read are kept in it after the batch; the
        // others are let go. Placed models are all read at once, before the first batch.
        func registeredModels() -> Set<ObjectIdentifier> { Set(registered.values.map { ObjectIdentifier($0) }) }
        // Inserted models are the caller's too, and stay once a save inside the block registers them.
        let registeredBeforePlacing = registeredModels().union(inserted.keys)
        // Either the models themselves (with unsaved changes to place, read at once as `fetch` does)
        // or the keys of the matching rows, each batch read by key when its turn comes.
        let placed: [T]?
        let keys: [Int64]
        if placesUnsavedChanges(descriptor, query: query, layout: layout) {
            placed = try fetch(descriptor)
            keys = []
        } else {
            placed = nil
            keys = try store.fetchKeys(layout, query: query)
        }
        let unloaded = try unloadedSlots(for: descriptor.propertiesToFetch, layout: layout)
        let count = placed?.count ?? keys.count
        for start in stride(from: 0, to: count, by: batchSize) {
            let range = start..<min(start + batchSize, count)
            let alreadyRegistered = placed == nil ? registeredModels() : registeredBeforePlacing
            let batch = try placed.map { Array($0[range]) }
                ?? models(T.self, keys: Array(keys[range]), layout: layout, unloaded: unloaded,
                          prefetching: descriptor.relationshipKeyPathsForPrefetching)
            for object in batch where !object.isDeleted { try block(object) }
            let mutated = batch.filter { changed[ObjectIdentifier($0)] != nil || deleted[ObjectIdentifier($0)] != nil }
            if !mutated.isEmpty && !allowEscapingMutations {
                throw SwiftDataError(
                    .escapingMutation,
                    "enumerate's block changed \(mutated.count) \(Schema.entityName(for: T.self)) model(s) without saving: "
                        + "save inside the block or pass allowEscapingMutations: true",
                    entity: Schema.entityName(for: T.self))
            }
            for object in batch where !alreadyRegistered.contains(ObjectIdentifier(object)) && !mutated.contains(object)
                && inserted[ObjectIdentifier(object)] == nil && !object.storage.rowIsGone {
                registered[object.persistentModelID] = nil
                object.storage.context = nil
            }
        }
    }

    /// The models that match a descriptor, read from the store `batchSize` at a time as the collection
    /// is read (SwiftData's batched fetch). Which models match, and in what order, is settled now: the
    /// keys of the matching rows are read at once, and each batch reads its rows by key.
    ///
    /// With unsaved changes of the fetched entity, or of models a predicate or sort reads through a
    /// relationship, the fetch places them as `fetch` does, in memory, and reads every model at once.
    /// A row another context deletes before its batch is read comes back as the model this context
    /// holds for it, if any, or else as a deleted model with its identifier, as `model(for:)` gives
    /// one (so does every row of a batch that cannot be read, and the error is logged). Test
    /// `isDeleted` before reading such a model: a property of it without a default value stops the
    /// program when read, as reading a deleted row's fault does in SwiftData.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, batchSize: Int) throws -> FetchResultsCollection<T> {
        let layout = try store.layout(for: T.self)
        let query = try rowQuery(for: descriptor, layout: layout)
        if placesUnsavedChanges(descriptor, query: query, layout: layout) {
            return FetchResultsCollection(try fetch(descriptor))
        }
        let keys = try store.fetchKeys(layout, query: query)
        let unloaded = try unloadedSlots(for: descriptor.propertiesToFetch, layout: layout)
        let prefetching = descriptor.relationshipKeyPathsForPrefetching
        return FetchResultsCollection(count: keys.count, batchSize: batchSize) { range in
            let batch = Array(keys[range])
            do {
                return try self.models(T.self, keys: batch, layout: layout, unloaded: unloaded, prefetching: prefetching)
            } catch {
                self.store.logger.error("a batch of \(layout.name) could not be read: \(error)")
                return batch.map { self.placeholder(T.self, layout: layout, key: $0) }
            }
        }
    }

    /// What `fetchIdentifiers(_:)` lists, in the collection SwiftData's batched form returns.
    /// Identifiers are small: they are read at once.
    public func fetchIdentifiers<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int
    ) throws -> FetchResultsCollection<PersistentIdentifier> {
        FetchResultsCollection(try fetchIdentifiers(descriptor))
    }

    /// Whether `fetch` would place unsaved changes of this context among the saved rows `query` reads,
    /// in memory: then the store's keys alone do not answer the descriptor.
    private func placesUnsavedChanges<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, query: RowQuery, layout: EntityLayout
    ) -> Bool {
        descriptor.includePendingChanges && (!pendingModels(of: T.self, layout: layout).isEmpty || readsUnsavedRelatedModels(query))
    }

    /// The models of these rows, in the keys' order; a key whose row is gone gives a deleted placeholder.
    private func models<T: PersistentModel>(
        _ type: T.Type, keys: [Int64], layout: EntityLayout, unloaded: Set<Int>, prefetching: [PartialKeyPath<T>]
    ) throws -> [T] {
        var rows: [Int64: SQLiteStore.FetchedRow] = [:]
        for row in try store.fetchRows(layout, query: .rows(keys), unloaded: unloaded) {
            rows[row.primaryKey] = row
        }
        let models = try keys.map { key in
            // A model deleted in the context since the keys were read is still its result; so is one
            // the context holds whose row another context deleted since.
            try rows[key].flatMap { try model(T.self, from: $0, layout: layout, includeDeleted: true, unloaded: unloaded) }
                ?? registered[PersistentIdentifier(entityName: layout.name, storeIdentifier: store.identifier, primaryKey: key)] as? T
                ?? placeholder(T.self, layout: layout, key: key)
        }
        try prefetch(prefetching, for: models, layout: layout)
        return models
    }

    // MARK: Helpers

    func fetchModel(_ type: any PersistentModel.Type, primaryKey: Int64) throws -> (any PersistentModel)? {
        let layout = try store.layout(named: Schema.entityName(for: type))
        let query = RowQuery.row(primaryKey)
        guard let row = try store.fetchRows(layout, query: query).first else { return nil }
        return try anyModel(type, from: row, layout: layout)
    }

    /// The columns `propertiesToFetch` leaves out: every stored column not named (none when it is empty).
    private func unloadedSlots<T: PersistentModel>(for keyPaths: [PartialKeyPath<T>], layout: EntityLayout) throws -> Set<Int> {
        guard !keyPaths.isEmpty else { return [] }
        var wanted = Set<Int>()
        for keyPath in keyPaths {
            guard let slot = layout.slot(for: keyPath) else {
                throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a stored property of \(layout.name)", entity: layout.name)
            }
            wanted.insert(slot.index)
        }
        return Set(layout.storedColumnSlots.map(\.index)).subtracting(wanted)
    }

    private func rowQuery<T: PersistentModel>(
        for descriptor: FetchDescriptor<T>, layout: EntityLayout, use: ConditionUse = .testingRows
    ) throws -> RowQuery {
        RowQuery(
            condition: try descriptor.predicate.map { try PredicateTranslator.translate($0, layout: layout, store: store, use: use) },
            orderBy: try RowQuery.orderBy(descriptor.sortBy, layout: layout, store: store),
            limit: descriptor.fetchLimit,
            offset: descriptor.fetchOffset)
    }

    /// The registered instance for a row, or a new one made from the row's values. Nil for a row
    /// whose model is deleted in this context but not yet saved.
    func model<T: PersistentModel>(
        _ type: T.Type, from row: SQLiteStore.FetchedRow, layout: EntityLayout, includeDeleted: Bool = false,
        unloaded: Set<Int> = []
    ) throws -> T? {
        let identifier = PersistentIdentifier(entityName: layout.name, storeIdentifier: store.identifier, primaryKey: row.primaryKey)
        if let existing = registered[identifier] {
            guard let typed = existing as? T else { return nil }
            if typed.storage.isDeleted { return includeDeleted ? typed : nil }
            // Another context saved this row since it was read here: an unchanged model takes the new
            // values; a changed one keeps its edits, and its save will report the conflict.
            let storage = typed.storage
            if changed[ObjectIdentifier(typed)] == nil, storage.dirtyRelationships.isEmpty {
                if storage.version != row.version {
                    try store.fill(storage, from: row, layout: layout, unloaded: unloaded)
                } else if let loadedAt = storage.unversionedToManyLoadedAt, loadedAt != store.aggregateCache.currentGeneration() {
                    // The row is unchanged, but a folder's snippets or a tag's live in other rows.
                    storage.faultUnversionedToMany()
                }
            }
            return typed
        }
        let object = try store.materialize(type, from: row, layout: layout, unloaded: unloaded)
        object.storage.context = self
        registered[identifier] = object
        return object
    }

    /// The model for a row reached through a relationship (or by its key), deleted ones included: a
    /// model deleted and not yet saved stays in the relationships that hold it until the save, as a
    /// to-one or an already loaded to-many shows it. A to-many first read after the delete left it
    /// out, and kept it out after a rollback brought it back.
    func anyModel(_ type: any PersistentModel.Type, from row: SQLiteStore.FetchedRow, layout: EntityLayout) throws -> (any PersistentModel)? {
        try model(type, from: row, layout: layout, includeDeleted: true)
    }

    /// This context's unsaved models of one type.
    struct PendingModels<T: PersistentModel> {
        var inserted: [T] = []
        var changed: [T] = []
        var deletedSaved: [T] = []
        /// Saved rows a pending `delete(model:where:)` will delete, not loaded (`rowsAwaitingBatchDelete`).
        var awaitingBatchDelete: Set<Int64> = []
        var isEmpty: Bool { inserted.isEmpty && changed.isEmpty && deletedSaved.isEmpty && awaitingBatchDelete.isEmpty }
        /// How many saved rows these changes can push out of, or pull into, a window of results.
        var displacedCount: Int { changed.count + deletedSaved.count + awaitingBatchDelete.count }
    }

    private func pendingModels<T: PersistentModel>(of type: T.Type, layout: EntityLayout) -> PendingModels<T> {
        PendingModels(
            inserted: insertionOrder.compactMap { inserted[$0] as? T },
            changed: changed.values.compactMap { $0 as? T },
            deletedSaved: deleted.values.compactMap { $0 as? T },
            awaitingBatchDelete: rowsAwaitingBatchDelete.isEmpty ? [] : rowsAwaitingBatchDelete[layout.name] ?? [])
    }

    /// Sorts with the descriptors, breaking ties as the store does (`RowQuery.tieBreak`): by primary
    /// key, in the direction of the last descriptor. Unsaved models rank after every saved row, in
    /// the order they were inserted, as the keys their save assigns will; so a window of results
    /// keeps its order across the save.
    private func storeOrdered<T: PersistentModel>(_ models: [T], by descriptors: [SortDescriptor<T>], inserted: [T]) -> [T] {
        let insertionPosition = Dictionary(uniqueKeysWithValues: inserted.enumerated().map { (ObjectIdentifier($1), Int64($0)) })
        func tieKey(_ model: T) -> (unsaved: Int, key: Int64) {
            if let key = model.storage.primaryKey { return (0, key) }
            return (1, insertionPosition[ObjectIdentifier(model)] ?? Int64.max)
        }
        let descending = descriptors.last?.order == .reverse
        return models.sorted { left, right in
            for descriptor in descriptors {
                switch descriptor.compare(left, right) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return descending ? tieKey(left) > tieKey(right) : tieKey(left) < tieKey(right)
        }
    }
}

extension ModelContext {
    /// Runs `body` in one read transaction of the store: every fetch, count and search made on this
    /// thread meanwhile (through this context or another of the same container) reads the store as
    /// it was when `body` began, so that a page's list, total and counts agree even while another
    /// context saves. (SwiftData has no such call; each of its fetches reads the latest state.)
    ///
    /// It is also cheaper than separate reads: each read otherwise begins and ends a transaction of
    /// its own, a tenth of a list page's time at 100,000 snippets.
    ///
    /// Saving inside `body` throws (`saveNotAllowed`), and leaves the changes pending: its reads could
    /// not see what it wrote. Calls nest; the outermost transaction holds.
    public func withReadTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        try store.withReadTransaction(body)
    }
}
