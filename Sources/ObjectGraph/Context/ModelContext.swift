import Foundation
import GRDB

/// Tracks models, their changes, and writes them to the store, as SwiftData's `ModelContext` does.
///
/// ```swift
/// let context = ModelContext(container)
/// context.insert(Snippet(title: "Hello"))
/// try context.save()
/// let all = try context.fetch(FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.title)]))
/// ```
///
/// A context holds one object per stored row (its identity map): fetching the same row twice returns
/// the same instance. A context belongs to one task; share the ``ModelContainer`` instead.
public final class ModelContext: Equatable {
    /// Contexts keep their container alive, except the main context, which the container owns.
    private let ownedContainer: ModelContainer?
    private unowned let containerReference: ModelContainer
    let store: SQLiteStore

    // The identity map and the pending inserts and changes are unchecked in release builds, as a
    // storage's values are (see `ModelStorage.values`): a context is used on one thread at a time
    // (it is not `Sendable`), only its own methods touch them, and none calls out while changing
    // one. Every insert and save reads them; debug builds, which the tests run, keep the checks.

    /// The identity map: every model this context fetched or saved, by row.
    #if DEBUG
    var registered: [PersistentIdentifier: any PersistentModel] = [:]
    #else
    @exclusivity(unchecked) var registered: [PersistentIdentifier: any PersistentModel] = [:]
    #endif
    #if DEBUG
    var inserted: [ObjectIdentifier: any PersistentModel] = [:]
    #else
    @exclusivity(unchecked) var inserted: [ObjectIdentifier: any PersistentModel] = [:]
    #endif
    #if DEBUG
    var insertionOrder: [ObjectIdentifier] = []
    #else
    @exclusivity(unchecked) var insertionOrder: [ObjectIdentifier] = []
    #endif
    #if DEBUG
    var changed: [ObjectIdentifier: any PersistentModel] = [:]
    #else
    @exclusivity(unchecked) var changed: [ObjectIdentifier: any PersistentModel] = [:]
    #endif
    var deleted: [ObjectIdentifier: any PersistentModel] = [:]
    var pendingBatchDeletes: [BatchDelete] = []
    /// The saved rows, by entity name, that a pending `delete(model:where:)` matched when it was asked
    /// for and whose models the context had not loaded: fetches hide them, as they hide the context's
    /// own deleted models, until the save deletes them or a rollback brings them back.
    var rowsAwaitingBatchDelete: [String: Set<Int64>] = [:]
    /// Pending inserts merged into an earlier one of the same unique value, sharing its backing data,
    /// until the save that writes it succeeds or a rollback discards it.
    private var mergedInserts: [any PersistentModel] = []
    /// Set once a model of this context was merged into another by a unique value: the merged
    /// instance reads and writes the other's backing data, and a relationship given it must hold the
    /// other instead. Until then, setting a relationship skips looking for such instances.
    private(set) var holdsMergedModels = false
    /// Errors found by non-throwing calls (such as `insert` of a model owned by another context),
    /// thrown by the next `save()`.
    var deferredErrors: [SwiftDataError] = []
    /// Set when a model of this context holds a related model (see `ModelStorage.hasHeldRelatedModels`):
    /// until then no relationship can form a cycle, and closing skips the walk of every model. A fetch
    /// of 100,000 models that reads no relationship spent a tenth of its time in that walk.
    var mayHoldRelatedModels = false

    public var autosaveEnabled: Bool
    /// Who saves through this context, recorded with each transaction of the store's history
    /// (`fetchHistory(_:)`), for a reader to tell its own saves from others'.
    public var author: String?
    /// This context's editing state (SwiftData, iOS 18): its identity, and the author of its saves,
    /// which is `author`. A custom store tells contexts apart by it in SwiftData; here setting it
    /// sets the author, and the identity stays the context's.
    public var editingState: EditingState {
        get { EditingState(id: editingStateID, author: author) }
        set { author = newValue.author }
    }
    private let editingStateID = UUID()
    /// The results observers fetching in this context, told of each pending change.
    #if DEBUG
    private var pendingChangeObservers: [WeakPendingChangeObserver] = []
    #else
    @exclusivity(unchecked) private var pendingChangeObservers: [WeakPendingChangeObserver] = []
    #endif
    private var autosaveScheduled = false
    private let isMainContext: Bool

    public var container: ModelContainer { containerReference }

    public init(_ container: ModelContainer) {
        self.ownedContainer = container
        self.containerReference = container
        self.store = container.store
        self.autosaveEnabled = false
        self.isMainContext = false
    }

    init(mainContextOf container: ModelContainer) {
        self.ownedContainer = nil
        self.containerReference = container
        self.store = container.store
        self.autosaveEnabled = true
        self.isMainContext = true
    }

    deinit {
        if autosaveEnabled && !isMainContext { saveOnClose() }
        // Loaded relationships point both ways (a folder to its snippets, each snippet to its folder).
        // Turning them back into faults breaks those cycles, so the models of a context are freed with it;
        // a model still in use reads its relationships again from the store.
        if mayHoldRelatedModels {
            for model in registered.values { model.storage.faultLoadedRelationships() }
        }
    }

    public static func == (lhs: ModelContext, rhs: ModelContext) -> Bool { lhs === rhs }

    // MARK: Inserting and deleting

    /// Registers a new model; the next `save()` writes it. The new models it refers to are inserted
    /// too, now, as SwiftData inserts the root of a graph with its related models.
    public func insert<T: PersistentModel>(_ model: T) {
        // One already here (inserted when it was related to a model of this context) had the new
        // models it refers to inserted then, and those related since as they were related.
        let arrives = model.storage.context == nil
        insert(anyModel: model)
        if arrives, model.storage.context === self { insertReachableModels(from: [model]) }
        pendingChangesDidChange()
    }

    func insert(anyModel model: any PersistentModel) {
        let storage = model.storage
        if let owner = storage.context {
            if owner !== self {
                deferredErrors.append(SwiftDataError(
                    .missingModelContext,
                    "a \(storage.layout.name) that belongs to another context was inserted; fetch it in this context instead",
                    entity: storage.layout.name))
            } else if storage.isDeleted, storage.primaryKey != nil {
                storage.isDeleted = false
                deleted[ObjectIdentifier(model)] = nil
            }
            return
        }
        storage.context = self
        storage.model = model
        storage.isDeleted = false
        storage.storeIdentifier = store.identifier
        storage.store = store
        if storage.primaryKey != nil {
            registered[storage.identifier] = model
            return
        }
        let key = ObjectIdentifier(model)
        inserted[key] = model
        insertionOrder.append(key)
    }

    /// Marks a model for deletion; the next `save()` removes it. An unsaved model is discarded at once,
    /// its delete rules applied now (see `applyDeleteRules(ofDiscarded:)`).
    public func delete<T: PersistentModel>(_ model: T) {
        let storage = model.storage
        guard !storage.isDeleted else { return }
        // A new model of no context: one related to a model of this context while its initializer ran
        // (linked, and so inserted, only when first used) is inserted by the next save if still
        // reachable. Deleted before then, it was ignored, and that save wrote it; it is discarded now,
        // like an inserted one. (One related after its initializer is in the context already.)
        if storage.context == nil, storage.primaryKey == nil {
            storage.isDeleted = true
            applyDeleteRules(ofDiscarded: model)
            return
        }
        guard storage.context === self else { return }
        // A model merged into another by a unique value shares its backing data: the context knows
        // the row by the other model.
        let model = storage.model as? T ?? model
        let key = ObjectIdentifier(model)
        storage.isDeleted = true
        if inserted.removeValue(forKey: key) != nil {
            insertionOrder.removeAll { $0 == key }
            storage.context = nil
            applyDeleteRules(ofDiscarded: model)
            notifyPendingChangeObservers()
            return
        }
        changed[key] = nil
        deleted[key] = model
        pendingChangesDidChange()
    }

    /// Deletes every model of a type that matches a predicate, at the next `save()`.
    ///
    /// For an entity with relationships, the matching models are loaded so that delete rules apply;
    /// otherwise the rows are deleted by one statement when the context saves.
    public func delete<T: PersistentModel>(
        model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true
    ) throws {
        let layout = try store.layout(for: T.self)
        let hasRelationships = layout.slots.contains { $0.relationship != nil }
        if hasRelationships {
            for object in try fetch(FetchDescriptor<T>(predicate: predicate)) { delete(object) }
            return
        }
        let condition = try predicate.map { try PredicateTranslator.translate($0, layout: layout, store: store) }
        for object in registeredAndInsertedModels(of: T.self) where !object.isDeleted {
            if try predicate?.evaluate(object) ?? true { delete(object) }
        }
        // The context's own models were judged above, as they are in memory.
        let unloaded = try store.fetchKeys(layout, query: RowQuery(condition: condition)).filter { key in
            registered[PersistentIdentifier(entityName: layout.name, storeIdentifier: store.identifier, primaryKey: key)] == nil
        }
        rowsAwaitingBatchDelete[layout.name, default: []].formUnion(unloaded)
        pendingBatchDeletes.append(BatchDelete(layout: layout, condition: condition))
        pendingChangesDidChange()
    }

    // MARK: Saving

    /// True when the context has inserts, changes or deletes that are not saved yet.
    public var hasChanges: Bool {
        if !inserted.isEmpty || !deleted.isEmpty || !changed.isEmpty || !pendingBatchDeletes.isEmpty {
            return true
        }
        return registered.values.contains { model in
            model.storage.layout.hasInstanceStoredProperties && hasInstanceStoredChanges(model.storage)
        }
    }

    /// Writes every pending insert, change and delete in one transaction: all of them, or none.
    ///
    /// Before writing, the context inserts every new model reachable from what it saves, applies the
    /// delete rules of deleted models, and checks relationship counts.
    public func save() throws {
        if !deferredErrors.isEmpty {
            let error = deferredErrors.removeFirst()
            throw error
        }
        collectInstanceStoredChanges()
        insertReachableModels()
        guard hasChanges else { return }
        guard store.configuration.allowsSave else {
            throw SwiftDataError(.saveNotAllowed, "this container's configuration does not allow saving (allowsSave is false)")
        }
        // Before the delete rules mark anything: a refused save leaves the context as it was.
        try store.requireNoReadTransaction("save()")
        // As in SwiftData, observers hear of the save before it is made, and may still change models.
        NotificationCenter.default.post(name: Self.willSave, object: self)
        try applyDeleteRules()
        if !deferredErrors.isEmpty {
            throw deferredErrors.removeFirst()
        }
        mergePendingUniqueCollisions()
        try validateRelationships()

        var request = SaveRequest()
        request.author = author
        for model in insertionOrderRespectingReferences() {
            let storage = model.storage
            storage.pullInstanceStoredValues()
            let encoded = try encodeRow(of: storage)
            request.inserts.append(.init(storage: storage, row: encoded.values, pendingReferences: encoded.pendingReferences))
            request.joinWrites += joinWrites(of: storage, onlyDirty: false)
        }
        for model in changed.values {
            let storage = model.storage
            let encoded = try encodeRow(of: storage)
            let changedSlots = storage.layout.storedColumnSlots.map(\.index).filter {
                !storage.unloadedSlots.contains($0)
                    && (encoded.values[$0] != storage.committedRow?[$0] || encoded.pendingReferences[$0] != nil)
            }
            if !changedSlots.isEmpty {
                request.updates.append(.init(storage: storage, row: encoded.values, changedSlots: changedSlots,
                                             pendingReferences: encoded.pendingReferences))
            }
            // A to-many changed from either side, whichever side's rows hold it.
            let toManyWritten = storage.dirtyRelationships.filter { storage.layout.slots[$0].isToMany }
            request.writtenProperties.append(.init(storage: storage, slots: (changedSlots + toManyWritten).sorted()))
            request.joinWrites += joinWrites(of: storage, onlyDirty: true)
        }
        for model in deleted.values {
            if model.storage.primaryKey != nil { request.deletes.append(model.storage) }
        }
        // The context's own models are judged as they are in memory: those matching were deleted
        // when the batch was asked for, and one changed (then or since) keeps its row, which may still
        // match in the store. Deleting that row made the save throw a conflict over the model's own change.
        request.batchDeletes = pendingBatchDeletes.map { batch in
            var batch = batch
            for model in changed.values where model.storage.layout === batch.layout {
                if let key = model.storage.primaryKey { batch.keptKeys.insert(key) }
            }
            return batch
        }

        // Who was saved, taken before `apply` forgets it; identifiers are read after, when inserts have keys.
        let savedChanges = Array(changed.values)
        let result = try store.save(request)
        apply(result, of: request)
        // A merged insert shares the backing data of the one it met, which may itself have taken over
        // a row the context held under another model just now: it shares that one's too. (A save that
        // throws keeps them, merged, for the next.)
        for model in mergedInserts {
            if let target = model.storage.mergedInto { model.shareBackingData(with: target) }
        }
        mergedInserts.removeAll()
        postDidSave(request: request, result: result, changed: savedChanges)
    }

    /// Does nothing, and is here so that SwiftData code compiles: SwiftData gathers changes for its
    /// undo manager here, and ObjectGraph, which has none, records each change as it is made.
    public func processPendingChanges() {}

    /// Runs `block`, then saves what it changed.
    public func transaction(block: () throws -> Void) throws {
        try block()
        try save()
    }

    /// Discards pending inserts and deletes, and puts changed models back to their last saved values.
    public func rollback() {
        for model in inserted.values {
            model.storage.context = nil
        }
        inserted.removeAll()
        insertionOrder.removeAll()
        mergedInserts.removeAll()
        for model in deleted.values { model.storage.isDeleted = false }
        // A deleted model leaves the changed list (its row is not updated, but deleted), yet keeps
        // whatever was changed before its deletion: it is put back too.
        let restored = Array(changed.values) + Array(deleted.values)
        deleted.removeAll()
        pendingBatchDeletes.removeAll()
        rowsAwaitingBatchDelete.removeAll()
        for model in restored {
            let storage = model.storage
            guard let row = storage.committedRow else { continue }
            for slot in storage.layout.columnSlots where !storage.unloadedSlots.contains(slot.index) {
                if storage.committedExternalFiles[slot.index] != nil,
                   ExternalStorage.referencedFileName(in: row[slot.index]) != nil {
                    // Replaced before its file was read: the committed value is the file's name, to
                    // be read again when the property is.
                    storage.values[slot.index] = UnloadedValue()
                    storage.unloadedSlots.insert(slot.index)
                    continue
                }
                if let codec = slot.codec, let value = try? codec.decode(row[slot.index]) {
                    storage.values[slot.index] = value
                }
            }
            for slot in storage.layout.foreignKeySlots where !storage.unloadedSlots.contains(slot.index) {
                storage.values[slot.index] = Self.foreignKeyValue(row[slot.index], slot: slot)
            }
            for slot in storage.layout.toManySlots where storage.dirtyRelationships.contains(slot.index) {
                storage.values[slot.index] = ToManyFault()
            }
            storage.dirtyRelationships.removeAll()
        }
        changed.removeAll()
        deferredErrors.removeAll()
        notifyPendingChangeObservers()
    }

    public var insertedModelsArray: [any PersistentModel] { insertionOrder.compactMap { inserted[$0] } }
    public var changedModelsArray: [any PersistentModel] {
        collectInstanceStoredChanges()
        return Array(changed.values)
    }
    public var deletedModelsArray: [any PersistentModel] { Array(deleted.values) }

    // MARK: Looking up models

    /// The model with this identifier: the registered instance, or one read from the store.
    /// For an identifier with no row, a model marked deleted whose properties read as their defaults;
    /// so for one of another store, whose key names a row of that store only (a row of this one with
    /// the same key was returned, another library's snippet in SnippetBox).
    public func model(for persistentModelID: PersistentIdentifier) -> any PersistentModel {
        if let model = registeredModel(anyFor: persistentModelID) { return model }
        guard let type = store.schema.modelTypes[persistentModelID.entityName] else {
            preconditionFailure("\(persistentModelID.entityName) is not an entity of this container's schema")
        }
        if let key = persistentModelID.primaryKey, persistentModelID.storeIdentifier == store.identifier,
           let model = try? fetchModel(type, primaryKey: key) {
            return model
        }
        return Self.placeholder(type, identifier: persistentModelID)
    }

    /// The model with this identifier if this context has it in memory, else nil.
    public func registeredModel<T: PersistentModel>(for persistentModelID: PersistentIdentifier) -> T? {
        registeredModel(anyFor: persistentModelID) as? T
    }

    private func registeredModel(anyFor identifier: PersistentIdentifier) -> (any PersistentModel)? {
        if let model = registered[identifier] { return model }
        return inserted.values.first { $0.persistentModelID == identifier }
    }

    /// A deleted model standing for a row that is gone: it carries the row's identifier.
    func placeholder<T: PersistentModel>(_ type: T.Type, layout: EntityLayout, key: Int64) -> T {
        Self.placeholder(type, identifier: PersistentIdentifier(entityName: layout.name, storeIdentifier: store.identifier, primaryKey: key))
    }

    /// A model for a row that is gone: marked deleted, its properties read as their defaults, or as
    /// their types' empty values (`EmptyValue`).
    static func placeholder<T: PersistentModel>(_ type: T.Type, identifier: PersistentIdentifier) -> T {
        let storage = DefaultBackingData<T>(for: type)
        storage.primaryKey = identifier.primaryKey
        storage.storeIdentifier = identifier.storeIdentifier
        storage.isDeleted = true
        storage.rowIsGone = true
        return T(backingData: storage)
    }

    /// `placeholder` for a model type known only at run time (a relationship's destination).
    static func placeholderModel(of type: any PersistentModel.Type, identifier: PersistentIdentifier) -> any PersistentModel {
        placeholder(type, identifier: identifier)
    }

    // MARK: Bookkeeping used by models

    func storageDidChange(_ storage: ModelStorage) {
        guard storage.primaryKey != nil, !storage.isDeleted, let model = storage.persistentModel else {
            // A new model's edit may change whether it matches an observer's fetch.
            notifyPendingChangeObservers()
            return
        }
        changed[ObjectIdentifier(model)] = model
        pendingChangesDidChange()
    }

    func hasPendingChanges(for storage: ModelStorage) -> Bool {
        guard let model = storage.model else { return false }
        let key = ObjectIdentifier(model)
        if inserted[key] != nil || deleted[key] != nil { return true }
        if !storage.dirtyRelationships.isEmpty && changed[key] != nil { return true }
        if let committed = storage.committedRow, changed[key] != nil,
           let row = try? encodeRow(of: storage) {
            return storage.layout.storedColumnSlots.contains { row.values[$0.index] != committed[$0.index] }
        }
        return storage.layout.hasInstanceStoredProperties && hasInstanceStoredChanges(storage)
    }

    private func hasInstanceStoredChanges(_ storage: ModelStorage) -> Bool {
        guard let committed = storage.committedRow, let model = storage.model else { return false }
        for slot in storage.layout.slots where slot.isStoredInInstance {
            guard let codec = slot.codec, let value = (model as Any)[keyPath: slot.keyPath],
                  let encoded = try? codec.encode(value) else { continue }
            if encoded != committed[slot.index] { return true }
        }
        return false
    }

    /// `let` and type-inferred properties change without telling the context; find those changes.
    private func collectInstanceStoredChanges() {
        for model in registered.values where model.storage.layout.hasInstanceStoredProperties {
            let storage = model.storage
            if !storage.isDeleted, hasInstanceStoredChanges(storage) {
                storage.pullInstanceStoredValues()
                changed[ObjectIdentifier(model)] = model
            }
        }
    }

    /// A model's column values by slot (`.null` for slots without a column), and its to-one
    /// relationships to models that have no key yet.
    struct EncodedRow {
        var values: [DatabaseValue]
        var pendingReferences = SlotMap<ModelStorage>()
    }

    func encodeRow(of storage: ModelStorage) throws -> EncodedRow {
        var row = EncodedRow(values: [DatabaseValue](repeating: .null, count: storage.layout.slots.count))
        for slot in storage.layout.columnSlots {
            guard let codec = slot.codec else { continue }
            var value = storage.values[slot.index]
            if ModelStorage.holds(value, UnloadedValue.self) {
                // Not read, so not changed: keep the stored value.
                row.values[slot.index] = storage.committedRow?[slot.index] ?? .null
                continue
            }
            if ModelStorage.holds(value, UnsetValue.self) {
                guard let fallback = storage.fallbackValue(at: slot.index) else {
                    throw SwiftDataError(
                        .modelValidationFailure,
                        "\(storage.layout.name).\(slot.name) has no value: set it before saving",
                        entity: storage.layout.name, property: slot.name)
                }
                value = fallback
            }
            do {
                row.values[slot.index] = try codec.encode(value)
            } catch let error as SwiftDataError {
                throw error.located(entity: storage.layout.name, property: slot.name)
            }
        }
        for slot in storage.layout.foreignKeySlots {
            switch storage.storedReference(at: slot) {
            case .unread: row.values[slot.index] = storage.committedRow?[slot.index] ?? .null
            case .none: break
            case .key(let key): row.values[slot.index] = key.databaseValue
            case .unsaved(let target): row.pendingReferences[slot.index] = target
            }
        }
        return row
    }

    /// Two pending inserts with the same unique values would both hit the unique index; as an upsert
    /// would, the later insert's values go to the earlier model, whose backing data the later one
    /// then shares.
    private func mergePendingUniqueCollisions() {
        var firstByUniqueValues: [PendingUniqueKey: ModelStorage] = [:]
        firstByUniqueValues.reserveCapacity(inserted.count)
        var merges: [UniqueMerge] = []
        defer { reconcileRelationships(after: merges) }
        for key in insertionOrder {
            guard let model = inserted[key] else { continue }
            let storage = model.storage
            let constraints = storage.layout.uniquenessConstraints
            guard !constraints.isEmpty else { continue }
            storage.pullInstanceStoredValues()
            var collided: ModelStorage?
            for (position, constraint) in constraints.enumerated() {
                // A nil in any of the constraint's properties: no other model's values can equal these.
                guard let values = PendingUniqueKey(of: storage, constraint: position, slots: constraint.slots) else { continue }
                if let earlier = firstByUniqueValues[values] {
                    collided = earlier
                    break
                }
                firstByUniqueValues[values] = storage
            }
            guard let earlier = collided else { continue }
            if let earlierModel = earlier.model {
                merges.append(UniqueMerge(survivor: earlierModel, survivorStorage: earlier, absorbed: model))
            }
            earlier.takeValues(of: storage)
            storage.mergedInto = earlier
            storage.context = nil
            inserted[key] = nil
            model.shareBackingData(with: earlier)
            holdsMergedModels = true
            mergedInserts.append(model)
        }
        insertionOrder.removeAll { inserted[$0] == nil }
    }

    /// The values a pending insert holds in one uniqueness constraint of its entity (by position:
    /// building "Entity.attribute" for every insert of a large save cost more than the lookup).
    ///
    /// Equal keys are first told apart by a hash made once: a dictionary compares keys at every slot
    /// it probes, and two `Data` blobs (a UUID's column) cost about 560 instructions to compare. A
    /// constraint of one property (the usual kind) keeps its value without an array: an array for the
    /// values and another for the inserts that shared their hash were made for every insert.
    private struct PendingUniqueKey: Hashable {
        let entity: ObjectIdentifier
        let constraint: Int
        let first: PendingUniqueValue
        /// The values after the first, for a constraint of several properties.
        let rest: [PendingUniqueValue]
        let valuesHash: Int

        init?(of storage: ModelStorage, constraint: Int, slots: [PropertySlot]) {
            guard let firstSlot = slots.first, let first = PendingUniqueValue(of: storage, at: firstSlot) else { return nil }
            var rest: [PendingUniqueValue] = []
            var hasher = Hasher()
            hasher.combine(first)
            for slot in slots.dropFirst() {
                guard let value = PendingUniqueValue(of: storage, at: slot) else { return nil }
                hasher.combine(value)
                rest.append(value)
            }
            self.entity = ObjectIdentifier(storage.layout)
            self.constraint = constraint
            self.first = first
            self.rest = rest
            self.valuesHash = hasher.finalize()
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(valuesHash)
        }

        static func == (lhs: Self, rhs: Self) -> Bool {
            lhs.valuesHash == rhs.valuesHash && lhs.entity == rhs.entity && lhs.constraint == rhs.constraint
                && lhs.first == rhs.first && lhs.rest == rhs.rest
        }
    }

    /// What a pending insert holds in a column of a uniqueness constraint, to find two inserts that would share a row:
    /// an attribute's encoded value, or the model a unique to-one relationship refers to (by its key,
    /// or by identity while it has none). Nil for none (nil never collides, as in SQLite).
    private enum PendingUniqueValue: Hashable {
        case column(DatabaseValue)
        /// A `UUID` as it is, which its column stores byte for byte: encoding it made a `Data` to hash
        /// and free for every insert (a unique UUID per snippet).
        case uuid(UUID)
        case newModel(ObjectIdentifier)

        init?(of storage: ModelStorage, at slot: PropertySlot) {
            let value = storage.values[slot.index]
            if ModelStorage.isBoxed(value, as: UUID.self) {
                self = .uuid(ModelStorage.sameTypeValue(value, as: UUID.self))
                return
            }
            if let codec = slot.codec {
                guard let encoded = try? codec.encode(value), encoded != .null else { return nil }
                self = .column(encoded)
                return
            }
            switch storage.storedReference(at: slot) {
            case .unread, .none: return nil
            case .key(let key): self = .column(key.databaseValue)
            case .unsaved(let target): self = .newModel(ObjectIdentifier(target.mergedInto ?? target))
            }
        }
    }

    private func apply(_ result: SaveResult, of request: SaveRequest) {
        func commit(_ storage: ModelStorage, row: [DatabaseValue], slots: [Int]?) {
            storage.version = result.versions[ObjectIdentifier(storage)] ?? (slots == nil ? 1 : storage.version)
            // Without `slots` (an insert) every column is the row's.
            var committed = slots == nil ? row : storage.committedRow ?? row
            for index in slots ?? [] { committed[index] = row[index] }
            for (index, key) in result.foreignKeys[ObjectIdentifier(storage)] ?? [] { committed[index] = key }
            storage.committedRow = committed
            for (index, keys) in result.joinedKeys[ObjectIdentifier(storage)] ?? [] { storage.committedToMany[index] = keys }
            storage.dirtyRelationships.removeAll()
        }
        var merges: [UniqueMerge] = []
        // Grown once for the new rows, not by doubling (and rehashing every key) as they are registered.
        registered.reserveCapacity(registered.count + request.inserts.count)
        for (insert, outcome) in zip(request.inserts, result.insertOutcomes) {
            let storage = insert.storage
            switch outcome {
            case .inserted(let primaryKey), .tookOverRow(let primaryKey):
                storage.primaryKey = primaryKey
                commit(storage, row: insert.row, slots: nil)
                storage.committedExternalFiles = insert.externalFiles(in: result)
                if let model = storage.persistentModel {
                    if let existing = registered[storage.identifier], existing !== model {
                        // The row was registered under another instance: that instance gets the new values.
                        let target = existing.storage
                        merges.append(UniqueMerge(survivor: existing, survivorStorage: target, absorbed: model))
                        target.values = storage.values
                        // Every value is now the insert's: none is left to read from the store.
                        target.unloadedSlots = []
                        target.committedRow = storage.committedRow
                        // The join rows the row has now are the insert's: a later save compares with them.
                        target.committedToMany = storage.committedToMany
                        target.version = storage.version
                        target.committedExternalFiles = storage.committedExternalFiles
                        storage.mergedInto = target
                        storage.primaryKey = nil
                        storage.context = nil
                        changed[ObjectIdentifier(existing)] = nil
                        model.shareBackingData(with: target)
                        holdsMergedModels = true
                    } else {
                        registered[storage.identifier] = model
                        if case .tookOverRow = outcome {
                            // The row's to-many relationships stored in other rows kept their members too.
                            merges.append(UniqueMerge(survivor: model, survivorStorage: storage, absorbed: model))
                        }
                    }
                }
            }
        }
        reconcileRelationships(after: merges)
        // A model whose row an insert took over in this save has the insert's values and version now:
        // its own edit, written before the insert, is not what the row holds.
        let tookOverByInsert = Set(merges.map { ObjectIdentifier($0.survivorStorage) })
        for update in request.updates where !tookOverByInsert.contains(ObjectIdentifier(update.storage)) {
            commit(update.storage, row: update.row, slots: update.changedSlots)
            for index in update.changedSlots {
                update.storage.committedExternalFiles[index] = result.externalFileNames[ObjectIdentifier(update.storage)]?[index]
            }
        }
        for model in changed.values {
            let storage = model.storage
            // A model whose relationship alone changed has a new version too (see `bumpVersionsOfRelationshipOwners`).
            if let version = result.versions[ObjectIdentifier(storage)] { storage.version = version }
            for (index, keys) in result.joinedKeys[ObjectIdentifier(storage)] ?? [] { storage.committedToMany[index] = keys }
            // The store now holds what was waiting in unloaded relationships.
            for slot in storage.layout.toManySlots where storage.pendingMembership(at: slot.index) != nil {
                storage.values[slot.index] = ToManyFault()
            }
            storage.dirtyRelationships.removeAll()
        }
        for storage in request.deletes {
            registered[storage.identifier] = nil
            storage.context = nil
        }
        for batch in request.batchDeletes {
            for (identifier, model) in registered where identifier.entityName == batch.layout.name {
                if let key = identifier.primaryKey, result.batchDeletedKeys[batch.layout.name]?.contains(key) == true {
                    model.storage.isDeleted = true
                    model.storage.context = nil
                    registered[identifier] = nil
                }
            }
        }
        inserted.removeAll()
        insertionOrder.removeAll()
        changed.removeAll()
        deleted.removeAll()
        pendingBatchDeletes.removeAll()
        rowsAwaitingBatchDelete.removeAll()
    }

    // MARK: Autosave

    /// Something pending changed (an insert, a delete, an edit, a rollback): results observers
    /// are told, and the main context saves soon.
    func pendingChangesDidChange() {
        notifyPendingChangeObservers()
        scheduleAutosave()
    }

    func addPendingChangeObserver(_ observer: any PendingChangeObserving) {
        pendingChangeObservers.removeAll { $0.observer == nil }
        pendingChangeObservers.append(WeakPendingChangeObserver(observer: observer))
    }

    /// Tells the results observers, if any (most contexts have none: the check is all it costs them).
    private func notifyPendingChangeObservers() {
        guard !pendingChangeObservers.isEmpty else { return }
        pendingChangeObservers.removeAll { $0.observer == nil }
        for entry in pendingChangeObservers { entry.observer?.pendingChangesDidChange() }
    }

    private func scheduleAutosave() {
        guard autosaveEnabled, isMainContext, !autosaveScheduled else { return }
        autosaveScheduled = true
        let context = UncheckedContext(context: self)
        Task { @MainActor in
            try? await Task.sleep(nanoseconds: 100_000_000)
            context.context.runAutosave()
        }
    }

    private func runAutosave() {
        autosaveScheduled = false
        guard autosaveEnabled else { return }
        do {
            try save()
        } catch {
            store.logger.error("autosave failed: \(error)")
        }
    }

    /// Saves what is pending when the context's container (or the context itself) goes away.
    func saveOnClose() {
        guard autosaveEnabled, hasChanges else { return }
        do {
            try save()
        } catch {
            store.logger.error("saving pending changes on close failed: \(error)")
        }
    }

    func registeredAndInsertedModels<T: PersistentModel>(of type: T.Type) -> [T] {
        registered.values.compactMap { $0 as? T } + insertionOrder.compactMap { inserted[$0] as? T }
    }
}

/// Carries the main context into the main-actor task that autosaves it; the context is only
/// touched there, on the main actor it belongs to.
private struct UncheckedContext: @unchecked Sendable {
    let context: ModelContext
}

/// What a context tells of its pending changes (`ResultsObserver`).
protocol PendingChangeObserving: AnyObject, Sendable {
    func pendingChangesDidChange()
}

/// An observer a context does not keep alive: it goes with whoever holds it.
struct WeakPendingChangeObserver {
    weak var observer: (any PendingChangeObserving)?
}
