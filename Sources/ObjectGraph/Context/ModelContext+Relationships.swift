import Foundation
import GRDB

extension ModelContext {
    // MARK: Loading

    /// The model a to-one relationship refers to: the registered instance, or one read from the store.
    func resolveToOne(_ destination: EntityLayout, primaryKey: Int64) -> AnyObject? {
        let identifier = PersistentIdentifier(entityName: destination.name, storeIdentifier: store.identifier, primaryKey: primaryKey)
        if let model = registered[identifier] { return model }
        do {
            return try fetchModel(destination.modelType, primaryKey: primaryKey)
        } catch {
            deferredErrors.append(SwiftDataError(.storeFailure, "cannot load a \(destination.name): \(error)", entity: destination.name))
            return nil
        }
    }

    /// The models of a saved model's to-many relationship, in their stored order; nil if they cannot be read
    /// (the next `save()` reports why, so that an unread relationship is never overwritten).
    func loadToMany(of owner: ModelStorage, mapping: RelationshipMapping) -> [AnyObject]? {
        guard let key = owner.primaryKey else { return [] }
        do {
            let rows = try store.relatedRows(of: mapping, ownerKeys: [key])
            return try rows.compactMap { try anyModel(mapping.destination.modelType, from: $0.row, layout: mapping.destination) }
        } catch {
            deferredErrors.append(SwiftDataError(
                .storeFailure, "cannot load \(owner.layout.name).\(mapping.slot.name): \(error)",
                entity: owner.layout.name, property: mapping.slot.name))
            return nil
        }
    }

    /// Loads the relationships named in `relationshipKeyPathsForPrefetching` for all results, one query each.
    func prefetch<T: PersistentModel>(_ keyPaths: [PartialKeyPath<T>], for results: [T], layout: EntityLayout) throws {
        guard !results.isEmpty else { return }
        for keyPath in keyPaths {
            guard let slot = layout.slot(for: keyPath), slot.relationship != nil else {
                throw SwiftDataError(
                    .unsupportedKeyPath, "\(keyPath) is not a relationship of \(layout.name) and cannot be prefetched",
                    entity: layout.name)
            }
            let mapping = layout.mapping(for: slot)
            let storages = results.map { $0.storage } // (not `\.storage`: see `fetchCount`)
            if slot.isForeignKey {
                let wanted = Set(storages.compactMap { ModelStorage.value($0.values[slot.index], as: ToOneFault.self)?.primaryKey })
                guard !wanted.isEmpty else { continue }
                let destination = mapping.destination
                let query = RowQuery.rows(Array(wanted))
                var byKey: [Int64: AnyObject] = [:]
                for row in try store.fetchRows(destination, query: query) {
                    if let model = try anyModel(destination.modelType, from: row, layout: destination) {
                        byKey[row.primaryKey] = model
                    }
                }
                for storage in storages {
                    guard let fault = ModelStorage.value(storage.values[slot.index], as: ToOneFault.self) else { continue }
                    storage.values[slot.index] = ModelStorage.typedValue(for: slot, models: byKey[fault.primaryKey].map { [$0] } ?? [])
                }
            } else {
                let owners = storages.filter { ModelStorage.holds($0.values[slot.index], ToManyFault.self) }
                let ownerKeys = owners.compactMap(\.primaryKey)
                guard !ownerKeys.isEmpty else { continue }
                if !mapping.isVersionedByOwner {
                    let generation = store.aggregateCache.generationSeen
                    for owner in owners where owner.unversionedToManyLoadedAt == nil { owner.unversionedToManyLoadedAt = generation }
                }
                var byOwner: [Int64: [AnyObject]] = [:]
                for (owner, row) in try store.relatedRows(of: mapping, ownerKeys: ownerKeys) {
                    if let model = try anyModel(mapping.destination.modelType, from: row, layout: mapping.destination) {
                        byOwner[owner, default: []].append(model)
                    }
                }
                for storage in owners {
                    guard let key = storage.primaryKey else { continue }
                    let related = byOwner[key] ?? []
                    storage.values[slot.index] = ModelStorage.typedValue(for: slot, models: related)
                    storage.committedToMany[slot.index] = related.compactMap { slot.relatedModel($0)?.storage.primaryKey }
                }
            }
        }
    }

    /// The value a to-one slot takes from its column: a fault to resolve on access, or nil.
    static func foreignKeyValue(_ stored: DatabaseValue, slot: PropertySlot) -> Any {
        if let key = Int64.fromDatabaseValue(stored) { return ToOneFault(primaryKey: key) }
        return ModelStorage.typedValue(for: slot, models: [])
    }

    // MARK: Saving a graph

    /// Inserts every new model that pending models refer to, however the graph was built (a model
    /// related before it was adopted by its first property access, say).
    func insertReachableModels() {
        insertReachableModels(from: insertionOrder.compactMap { inserted[$0] } + Array(changed.values))
    }

    /// Inserts a new model of no context just related to one of this context's, and the new models
    /// reachable from it, as SwiftData does as soon as they are related: a fetch before the save
    /// lists them, and letting go of one later does not take it out again.
    func insertNewlyRelated(_ model: any PersistentModel) {
        guard model.storage.awaitsInsert else { return }
        insert(anyModel: model)
        insertReachableModels(from: [model])
        pendingChangesDidChange()
    }

    /// Inserts the new models of no context reachable from `start` through loaded relationships and
    /// changes waiting in unloaded ones.
    func insertReachableModels(from start: [any PersistentModel]) {
        var queue = start
        while let model = queue.popLast() {
            let storage = model.storage
            for slot in storage.layout.slots where slot.relationship != nil {
                func visit(_ related: AnyObject) {
                    guard let relatedModel = slot.relatedModel(related) else { return }
                    guard relatedModel.storage.awaitsInsert else { return }
                    insert(anyModel: relatedModel)
                    queue.append(relatedModel)
                }
                // Walked in place: a save walks every new model's relationships, and an array of them
                // for each was made and freed.
                if !storage.forEachLoadedRelatedModel(at: slot.index, visit) {
                    storage.pendingMembership(at: slot.index)?.added.forEach(visit)
                }
            }
        }
    }

    /// After upserts, makes the relationships in memory say what the store holds. An upsert gives one
    /// model's values to another (see `UniqueMerge`): what the survivor stores in its own row (its
    /// to-one relationships, the join rows it writes) is now the absorbed model's, so a model it no
    /// longer refers to leaves it; a to-many relationship stored in the other models' rows (a folder's
    /// snippets, the reading side of a join table) keeps its members and gains the absorbed model's.
    /// Models holding the absorbed one hold the survivor instead, once. Before, a folder a snippet had
    /// left by an upsert still listed it, and one it stayed in listed it twice.
    ///
    /// Nothing is marked changed: each save writes these relationships from the side that stores them.
    func reconcileRelationships(after merges: [UniqueMerge]) {
        guard !merges.isEmpty else { return }
        var mergeOf: [ObjectIdentifier: UniqueMerge] = [:]
        for merge in merges {
            mergeOf[ObjectIdentifier(merge.survivor)] = merge
            mergeOf[ObjectIdentifier(merge.absorbed)] = merge
        }
        // A saved row's to-many relationships stored in other rows now hold its members and the
        // absorbed model's: they are read from the store on first use. (A pending insert's were
        // joined when it was merged, `takeValues(of:)`.)
        for merge in merges where merge.survivorStorage.primaryKey != nil {
            let storage = merge.survivorStorage
            for slot in storage.layout.toManySlots where !storage.layout.mapping(for: slot).isVersionedByOwner {
                storage.values[slot.index] = ToManyFault()
                storage.committedToMany[slot.index] = nil
            }
        }
        var visited: Set<ObjectIdentifier> = []
        for holder in Array(registered.values) + Array(inserted.values) {
            let storage = holder.storage
            guard storage.hasHeldRelatedModels, visited.insert(ObjectIdentifier(storage)).inserted else { continue }
            for slot in storage.layout.relationshipSlots {
                guard let inverse = storage.layout.mapping(for: slot).inverse,
                      let members = storage.loadedRelatedModels(at: slot.index),
                      members.contains(where: { mergeOf[ObjectIdentifier($0)] != nil }) else { continue }
                var reconciled: [AnyObject] = []
                var survivorsListed: Set<ObjectIdentifier> = []
                for member in members {
                    guard let merge = mergeOf[ObjectIdentifier(member)] else {
                        reconciled.append(member)
                        continue
                    }
                    let survivor = merge.survivorStorage
                    let stillRelated = !survivor.layout.mapping(for: inverse).isVersionedByOwner
                        || ModelStorage.models(in: survivor.values[inverse.index], of: inverse).contains { $0 === holder }
                    if stillRelated, survivorsListed.insert(ObjectIdentifier(merge.survivor)).inserted {
                        reconciled.append(merge.survivor)
                    }
                }
                if reconciled.count != members.count || zip(reconciled, members).contains(where: { $0 !== $1 }) {
                    storage.values[slot.index] = ModelStorage.typedValue(for: slot, models: reconciled)
                }
            }
        }
    }

    /// Applies each deleted model's delete rules: cascades through any depth (cycles included),
    /// refuses with `.deny` while related models remain, and unlinks the rest with `.nullify`.
    /// Nothing is changed when a `.deny` rule refuses.
    func applyDeleteRules() throws {
        var doomed: [ObjectIdentifier: any PersistentModel] = deleted
        var queue = Array(deleted.values)
        while let model = queue.popLast() {
            let storage = model.storage
            for slot in storage.layout.slots where slot.relationship?.deleteRule == .cascade {
                for related in storage.relatedModels(at: slot.index) {
                    guard let relatedModel = related as? any PersistentModel,
                          doomed[ObjectIdentifier(relatedModel)] == nil else { continue }
                    doomed[ObjectIdentifier(relatedModel)] = relatedModel
                    queue.append(relatedModel)
                }
            }
        }
        if !deferredErrors.isEmpty { return }
        for model in doomed.values {
            let storage = model.storage
            for slot in storage.layout.slots where slot.relationship?.deleteRule == .deny {
                let remaining = storage.relatedModels(at: slot.index).filter { doomed[ObjectIdentifier($0)] == nil }
                if !remaining.isEmpty {
                    throw SwiftDataError(
                        .modelValidationFailure,
                        "cannot delete this \(storage.layout.name): its relationship \(slot.name) denies deletion while it "
                            + "has \(remaining.count) related \(storage.layout.mapping(for: slot).destination.name) model(s). Nothing was deleted",
                        entity: storage.layout.name, property: slot.name)
                }
            }
        }
        for model in doomed.values where deleted[ObjectIdentifier(model)] == nil {
            delete(anyModel: model)
        }
        for model in doomed.values {
            let storage = model.storage
            for slot in storage.layout.slots where slot.relationship != nil && slot.relationship?.deleteRule != .noAction {
                guard let inverse = storage.layout.mapping(for: slot).inverse else { continue }
                for related in storage.relatedModels(at: slot.index) where doomed[ObjectIdentifier(related)] == nil {
                    (related as? any PersistentModel)?.storage.removeMember(model, at: inverse.index)
                }
            }
        }
    }

    /// The delete rules of an unsaved model that was deleted, which no save will see: it leaves every
    /// related model's side now, and what it cascades to is deleted. Before, a related model kept it:
    /// a folder listed a snippet that was never saved, until the folder was read again from the store.
    /// (`.deny` cannot refuse here, `delete` does not throw; the model was never saved, so it denies nothing.)
    func applyDeleteRules(ofDiscarded model: any PersistentModel) {
        let storage = model.storage
        var cascaded: [any PersistentModel] = []
        for slot in storage.layout.slots {
            guard let relationship = slot.relationship, relationship.deleteRule != .noAction else { continue }
            let inverse = storage.layout.mapping(for: slot).inverse
            for related in storage.relatedModels(at: slot.index) {
                guard let relatedModel = related as? any PersistentModel else { continue }
                if relationship.deleteRule == .cascade { cascaded.append(relatedModel) }
                if let inverse { relatedModel.storage.removeMember(model, at: inverse.index) }
            }
        }
        for relatedModel in cascaded { delete(anyModel: relatedModel) }
    }

    /// Checks required to-one relationships and `minimumModelCount` / `maximumModelCount`.
    func validateRelationships() throws {
        for model in insertionOrder.compactMap({ inserted[$0] }) + Array(changed.values) {
            let storage = model.storage
            for slot in storage.layout.slots {
                guard let relationship = slot.relationship else { continue }
                let isOptional = slot.optionalType != nil
                let hasSizeLimit = (relationship.minimumModelCount ?? 0) > 0 || (relationship.maximumModelCount ?? 0) > 0
                // Only a required to-one and a sized to-many have something to check: the related
                // models of the others are not listed, which for a new folder of thousands cost a copy.
                guard slot.isForeignKey ? !isOptional : hasSizeLimit else { continue }
                // A relationship with a size limit is loaded to count it when models joined or left it unloaded.
                if storage.pendingMembership(at: slot.index) != nil, hasSizeLimit {
                    _ = storage.relatedModels(at: slot.index)
                }
                guard let related = storage.loadedRelatedModels(at: slot.index) else { continue }
                if slot.isForeignKey && !isOptional && related.isEmpty {
                    throw SwiftDataError(
                        .modelValidationFailure,
                        "\(storage.layout.name).\(slot.name) is required but has no \(relationship.destination)",
                        entity: storage.layout.name, property: slot.name)
                }
                guard !slot.isForeignKey, !(isOptional && ModelStorage.holds(storage.values[slot.index], UnsetValue.self)) else { continue }
                if let minimum = relationship.minimumModelCount, minimum > 0, related.count < minimum {
                    throw SwiftDataError(
                        .modelValidationFailure,
                        "\(storage.layout.name).\(slot.name) needs at least \(minimum) \(relationship.destination) model(s), has \(related.count)",
                        entity: storage.layout.name, property: slot.name)
                }
                if let maximum = relationship.maximumModelCount, maximum > 0, related.count > maximum {
                    throw SwiftDataError(
                        .modelValidationFailure,
                        "\(storage.layout.name).\(slot.name) allows at most \(maximum) \(relationship.destination) model(s), has \(related.count)",
                        entity: storage.layout.name, property: slot.name)
                }
            }
        }
    }

    /// Pending inserts ordered so that a model comes after the new models its to-one relationships
    /// refer to, whenever the references allow it (cycles are resolved by a second write).
    func insertionOrderRespectingReferences() -> [any PersistentModel] {
        let models = insertionOrder.compactMap { inserted[$0] }
        var state: [ObjectIdentifier: Bool] = [:]
        var ordered: [any PersistentModel] = []
        ordered.reserveCapacity(models.count)
        // The state and the order are passed in, not captured: a local variable a nested function
        // captures is boxed, and every access to it checked at run time (four a model saved).
        func visit(_ model: any PersistentModel, state: inout [ObjectIdentifier: Bool], ordered: inout [any PersistentModel]) {
            let key = ObjectIdentifier(model)
            guard state[key] == nil else { return }
            state[key] = false
            let storage = model.storage
            for slot in storage.layout.foreignKeySlots {
                guard let target = storage.loadedFirstRelatedModel(at: slot.index).flatMap(slot.relatedModel),
                      inserted[ObjectIdentifier(target)] != nil else { continue }
                visit(target, state: &state, ordered: &ordered)
            }
            state[key] = true
            ordered.append(model)
        }
        for model in models { visit(model, state: &state, ordered: &ordered) }
        return ordered
    }

    /// The join-table writes a model needs: all of its written to-many relationships when it is new,
    /// the changed ones otherwise (only what joined and left, for a relationship that was not loaded).
    func joinWrites(of storage: ModelStorage, onlyDirty: Bool) -> [SaveRequest.JoinWrite] {
        /// A related model's storage, unless it is deleted (or `keepingDeleted`).
        func keptStorage(of model: AnyObject, in slot: PropertySlot, keepingDeleted: Bool = false) -> ModelStorage? {
            guard let related = slot.relatedModel(model)?.storage, keepingDeleted || !related.isDeleted else { return nil }
            return related
        }
        /// The kept storages of `models`, in one pass into an array of the right size (a `compactMap`
        /// and then a `filter` made two arrays for each new snippet's tags).
        func storages(_ models: [AnyObject], of slot: PropertySlot, keepingDeleted: Bool = false) -> [ModelStorage] {
            var storages: [ModelStorage] = []
            storages.reserveCapacity(models.count)
            for model in models {
                if let kept = keptStorage(of: model, in: slot, keepingDeleted: keepingDeleted) { storages.append(kept) }
            }
            return storages
        }
        /// The same for the models loaded in a slot, read in place; nil if they are not loaded.
        func loadedStorages(at slot: PropertySlot) -> [ModelStorage]? {
            var storages: [ModelStorage] = []
            let isLoaded = storage.forEachLoadedRelatedModel(at: slot.index) { model in
                if let kept = keptStorage(of: model, in: slot) { storages.append(kept) }
            }
            return isLoaded ? storages : nil
        }
        return storage.layout.toManySlots.compactMap { slot in
            guard let table = storage.layout.mapping(for: slot).joinTable,
                  !onlyDirty || storage.dirtyRelationships.contains(slot.index) else { return nil }
            guard let targets = loadedStorages(at: slot) else {
                guard let pending = storage.pendingMembership(at: slot.index) else { return nil }
                return SaveRequest.JoinWrite(
                    table: table, owner: storage, slotIndex: slot.index,
                    change: .adjust(added: storages(pending.added, of: slot), removed: storages(pending.removed, of: slot, keepingDeleted: true)))
            }
            if onlyDirty, storage.committedToMany[slot.index] == targets.compactMap(\.primaryKey),
               targets.allSatisfy({ $0.primaryKey != nil }) {
                return nil
            }
            return SaveRequest.JoinWrite(table: table, owner: storage, slotIndex: slot.index, change: .replace(with: targets))
        }
    }

    func delete(anyModel model: any PersistentModel) {
        delete(model)
    }
}

/// One model's values given to another by an upsert: a pending insert meeting an earlier one of the
/// same unique value, or an insert meeting a saved row the context already holds as another model.
/// The absorbed model shares the survivor's backing data from then on.
struct UniqueMerge {
    let survivor: AnyObject
    let survivorStorage: ModelStorage
    let absorbed: AnyObject
}

extension ModelStorage {
    /// Takes a pending insert's values, as an earlier insert of the same unique value does (see
    /// `UniqueMerge`): what the row will store is the later insert's, but a to-many relationship stored
    /// in the other models' rows keeps its members and gains the later insert's, as the store will.
    func takeValues(of absorbed: ModelStorage) {
        let previous = values
        values = absorbed.values
        for slot in layout.toManySlots where !layout.mapping(for: slot).isVersionedByOwner {
            let kept = Self.models(in: previous[slot.index], of: slot)
            guard !kept.isEmpty else { continue }
            let gained = Self.models(in: values[slot.index], of: slot)
            let joined = kept + gained.filter { member in !kept.contains { $0 === member } }
            values[slot.index] = Self.typedValue(for: slot, models: joined)
        }
    }
}
