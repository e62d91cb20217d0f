import Foundation
import GRDB

/// A to-one relationship read from a row and not yet resolved to a model: the related row's key.
struct ToOneFault {
    let primaryKey: Int64
}

/// A to-many relationship of a fetched model, not loaded yet: it loads on first access.
///
/// Relating a model to it through the inverse (`snippet.tags = [tag]` adds the snippet to
/// `tag.snippets`) does not load it: the change waits in `pending`, is merged when the relationship
/// loads, and is written by the next save as added and removed join rows. Otherwise every new
/// snippet would read all the snippets of its tags and folder, and inserts would slow down as the
/// store grows.
struct ToManyFault {
    var pending: PendingMembership?
}

/// Models that joined or left a to-many relationship that is not loaded, in the order they joined.
final class PendingMembership {
    private(set) var added: [AnyObject] = []
    private(set) var removed: [AnyObject] = []
    private var addedIdentities: Set<ObjectIdentifier> = []
    private var removedIdentities: Set<ObjectIdentifier> = []

    /// A member that left and joins again keeps its removal, so that it loses its stored place and
    /// comes last, as in a loaded array. (Cancelling the removal put it back in its old place.)
    func add(_ member: AnyObject) {
        if addedIdentities.insert(ObjectIdentifier(member)).inserted { added.append(member) }
    }

    /// Records a removal even of a model added meanwhile: it may also be among the stored members.
    func remove(_ member: AnyObject) {
        let identity = ObjectIdentifier(member)
        if addedIdentities.remove(identity) != nil { added.removeAll { $0 === member } }
        if removedIdentities.insert(identity).inserted { removed.append(member) }
    }

    /// The stored members with these changes applied.
    func applied(to stored: [AnyObject]) -> [AnyObject] {
        var members = stored.filter { !removedIdentities.contains(ObjectIdentifier($0)) }
        let present = Set(members.map(ObjectIdentifier.init))
        members += added.filter { !present.contains(ObjectIdentifier($0)) }
        return members
    }
}

extension ModelStorage {
    /// Learns which model owns this storage, and links the relationships its initializer set
    /// before the model existed to their inverses. (`@usableFromInline` for `PersistentModel.getValue`.)
    @usableFromInline
    func adopt(_ owner: AnyObject) {
        guard !hasModel else { return }
        model = owner
        let pending = pendingInverseLinks
        pendingInverseLinks.removeAll()
        for index in pending {
            linkInverses(of: layout.slots[index], removed: [], added: relatedModels(at: index))
        }
    }

    /// What a to-one relationship's column would store, read without loading anything.
    enum StoredReference {
        /// Never read from the row, so unchanged: the committed value stands.
        case unread
        case none
        case key(Int64)
        /// A model with no key yet (the model itself, not the one it was merged into).
        case unsaved(ModelStorage)
    }

    /// The one reading of a to-one slot that both encoding a row and matching pending inserts on a
    /// unique relationship use: two copies of it could disagree on which row a model refers to.
    func storedReference(at slot: PropertySlot) -> StoredReference {
        let value = values[slot.index]
        if Self.holds(value, UnloadedValue.self) { return .unread }
        if let fault = Self.value(value, as: ToOneFault.self) { return .key(fault.primaryKey) }
        guard let target = Self.firstModel(in: value, of: slot).flatMap(slot.relatedModel)?.storage else { return .none }
        if let key = (target.mergedInto ?? target).primaryKey { return .key(key) }
        return .unsaved(target)
    }

    /// The value of a relationship slot, loading it through the context on first access.
    func resolvedRelationshipValue(at index: Int) -> Any {
        if Self.holds(values[index], UnloadedValue.self) { loadUnloadedColumns(for: index) }
        let slot = layout.slots[index]
        let value = values[index]
        if let fault = Self.value(value, as: ToOneFault.self) {
            let destination = layout.mapping(for: slot).destination
            var related = context.map { $0.resolveToOne(destination, primaryKey: fault.primaryKey) }
                ?? detachedLoad(destination, primaryKey: fault.primaryKey)
            if related == nil, slot.optionalType == nil {
                // A property that cannot be nil, referring to a row that is gone (deleted by an older
                // version of ObjectGraph, or by another program, since a save refuses to): it reads as a
                // model marked deleted, as `ModelContext.model(for:)` gives for a missing row, so that
                // the program can give the referrer another model or delete it instead of stopping.
                let identifier = PersistentIdentifier(
                    entityName: destination.name, storeIdentifier: context?.store.identifier ?? store?.identifier,
                    primaryKey: fault.primaryKey)
                related = ModelContext.placeholderModel(of: destination.modelType, identifier: identifier)
            }
            let typed = Self.typedValue(for: slot, models: related.map { [$0] } ?? [])
            values[index] = typed
            return typed
        }
        if let fault = Self.value(value, as: ToManyFault.self) {
            let mapping = layout.mapping(for: slot)
            // Before the read: a save between the two makes the next fetch load it again, not miss it.
            if !mapping.isVersionedByOwner, unversionedToManyLoadedAt == nil, context != nil {
                unversionedToManyLoadedAt = store?.aggregateCache.generationSeen
            }
            guard let loaded = context.map({ $0.loadToMany(of: self, mapping: mapping) }) ?? detachedLoad(mapping) else {
                return Self.typedValue(for: slot, models: fault.pending?.applied(to: []) ?? [])
            }
            let typed = Self.typedValue(for: slot, models: fault.pending?.applied(to: loaded) ?? loaded)
            values[index] = typed
            committedToMany[index] = loaded.compactMap { slot.relatedModel($0)?.storage.primaryKey }
            return typed
        }
        if Self.holds(value, UnsetValue.self), slot.isToMany {
            return Self.typedValue(for: slot, models: [])
        }
        return value
    }

    /// Reads a to-one relationship of a model whose context is gone: a new model of no context.
    private func detachedLoad(_ destination: EntityLayout, primaryKey: Int64) -> AnyObject? {
        guard let store else { return nil }
        let query = RowQuery.row(primaryKey)
        guard let row = try? store.fetchRows(destination, query: query).first else { return nil }
        return try? store.materializeAny(destination.modelType, from: row, layout: destination)
    }

    /// Reads a to-many relationship of a model whose context is gone, as new models of no context.
    private func detachedLoad(_ mapping: RelationshipMapping) -> [AnyObject]? {
        guard let store else { return nil }
        guard let key = primaryKey else { return [] }
        guard let rows = try? store.relatedRows(of: mapping, ownerKeys: [key]) else { return nil }
        return rows.compactMap { try? store.materializeAny(mapping.destination.modelType, from: $0.row, layout: mapping.destination) }
    }

    /// The models a relationship slot refers to, loading them if needed.
    func relatedModels(at index: Int) -> [AnyObject] {
        Self.models(in: resolvedRelationshipValue(at: index), of: layout.slots[index])
    }

    /// The related models if already in memory, without loading a fault.
    func loadedRelatedModels(at index: Int) -> [AnyObject]? {
        let value = values[index]
        guard Self.isInMemory(value) else { return nil }
        return Self.models(in: value, of: layout.slots[index])
    }

    /// Calls `body` with each related model if they are in memory, as `loadedRelatedModels(at:)` lists
    /// them, without making the array where the value is of the declared type; false if not loaded.
    func forEachLoadedRelatedModel(at index: Int, _ body: (AnyObject) -> Void) -> Bool {
        let value = values[index]
        guard Self.isInMemory(value) else { return false }
        let slot = layout.slots[index]
        if let form = slot.relationshipForm, Self.isBoxed(value, as: slot.valueType) {
            form.forEachModel(inValueOfDeclaredType: value, body)
        } else {
            Self.models(in: value, of: slot).forEach(body)
        }
        return true
    }

    /// `loadedRelatedModels(at:)?.first` (a to-one's model, if loaded), without making the array.
    func loadedFirstRelatedModel(at index: Int) -> AnyObject? {
        let value = values[index]
        guard Self.isInMemory(value) else { return nil }
        return Self.firstModel(in: value, of: layout.slots[index])
    }

    /// Whether a relationship slot's value is its models, not a fault or a column not read yet. A
    /// test of the value rather than a function returning it: an `Any?` made for each read cost 1.7%
    /// of inserting snippets.
    @inline(__always) private static func isInMemory(_ value: Any) -> Bool {
        !(holds(value, ToOneFault.self) || holds(value, ToManyFault.self) || holds(value, UnloadedValue.self))
    }

    /// The changes waiting in a to-many relationship that is not loaded, if any.
    func pendingMembership(at index: Int) -> PendingMembership? {
        Self.value(values[index], as: ToManyFault.self)?.pending
    }

    /// Records a model joining or leaving a to-many relationship that is not loaded; false when it is loaded.
    private func recordPendingMembership(of member: AnyObject, at index: Int, joins: Bool) -> Bool {
        guard var fault = Self.value(values[index], as: ToManyFault.self) else { return false }
        let pending = fault.pending ?? PendingMembership()
        if joins { pending.add(member) } else { pending.remove(member) }
        fault.pending = pending
        values[index] = fault
        dirtyRelationships.insert(index)
        context?.storageDidChange(self)
        return true
    }

    /// Whether a loaded to-many slot holds this very model. A separate function, so that its copy of
    /// the array is released before the caller appends to the slot's array in place.
    private func holdsMember(_ member: AnyObject, at index: Int) -> Bool {
        let address = identityAddress(of: member)
        if let addresses = memberAddresses[index] { return addresses.contains(address) }
        guard let array = resolvedRelationshipValue(at: index) as? any _ModelArray else { return false }
        // A short array is scanned; a long one is indexed once, for the members that follow.
        guard array._count >= Self.smallestIndexedRelationship else { return array._containsIdentical(member) }
        var addresses = AddressSet(minimumCapacity: array._count)
        array._forEachMemberAddress { addresses.insert($0) }
        memberAddresses[index] = addresses
        return addresses.contains(address)
    }

    static let smallestIndexedRelationship = 32

    /// Appends a model to a loaded to-many slot, in place: rebuilding the array for every new member
    /// made building a large relationship quadratic.
    private func appendMember(_ member: AnyObject, at index: Int) {
        // Writing the slot drops every index of members; this slot's is carried over the write.
        var addresses = memberAddresses.removeValue(forSlot: index)
        addresses?.insert(identityAddress(of: member))
        defer { if let addresses { memberAddresses[index] = addresses } }
        let slot = layout.slots[index]
        if let arrayType = slot.modelArrayType,
           arrayType._append(member, toArrayIn: &values[index], asOptional: slot.optionalType != nil) {
            return
        }
        values[index] = Self.typedValue(for: slot, models: relatedModels(at: index) + [member])
    }

    /// Sets a relationship and keeps the inverse side of every model it gains or loses in step.
    func setRelationship(_ newValue: Any, at index: Int) {
        let slot = layout.slots[index]
        // Listed once here and reused for the inverses: listing a large relationship is not free.
        let (newValue, new) = Self.canonicalValue(newValue, of: slot, resolvingMerged: context?.holdsMergedModels == true)
        let hasInverse = layout.mapping(for: slot).inverse != nil
        guard model != nil else {
            // Still initializing (property defaults and the initializer's assignments land here): the
            // inverses are linked once, when the model is adopted, so the old value needs no unlinking.
            values[index] = newValue
            dirtyRelationships.insert(index)
            if hasInverse { pendingInverseLinks.insert(index) }
            return
        }
        let old = hasInverse ? relatedModels(at: index) : []
        values[index] = newValue
        dirtyRelationships.insert(index)
        context?.storageDidChange(self)
        guard hasInverse else {
            if let context {
                for case let related as any PersistentModel in new { context.insertNewlyRelated(related) }
            }
            return
        }
        let removed = old.filter { candidate in !new.contains { $0 === candidate } }
        let added = new.filter { candidate in !old.contains { $0 === candidate } }
        linkInverses(of: slot, removed: removed, added: added)
    }

    /// The value to store and its members. A to-many relationship holds each model once, as
    /// SwiftData's (a set underneath) does: a model listed twice keeps its last place, where the save
    /// stores it (appending one it already holds moves it to the end); the array listed it twice,
    /// which no fetch would show. With `resolvingMerged`, a model merged into another by a unique
    /// value stands as that other one, whose row it is: holding both listed one row twice.
    static func canonicalValue(_ value: Any, of slot: PropertySlot, resolvingMerged: Bool) -> (value: Any, members: [AnyObject]) {
        var members = models(in: value, of: slot)
        var rewritten = false
        if resolvingMerged {
            for (position, member) in members.enumerated() {
                guard let survivor = slot.relatedModel(member)?.storage.model, survivor !== member else { continue }
                members[position] = survivor
                rewritten = true
            }
        }
        if slot.isToMany && members.count > 1 && !Self.areDistinct(members) {
            var seen = Set<ObjectIdentifier>(minimumCapacity: members.count)
            members = Array(members.reversed().filter { seen.insert(ObjectIdentifier($0)).inserted }.reversed())
            rewritten = true
        }
        return rewritten ? (typedValue(for: slot, models: members), members) : (value, members)
    }

    /// Whether no model is listed twice. A few members (a snippet's tags) are compared pairwise:
    /// the `Set` that a longer list needs cost more to allocate than the comparisons.
    private static func areDistinct(_ members: [AnyObject]) -> Bool {
        guard members.count <= 8 else {
            var seen = Set<ObjectIdentifier>(minimumCapacity: members.count)
            return members.allSatisfy { seen.insert(ObjectIdentifier($0)).inserted }
        }
        for later in members.indices.dropFirst() where members[..<later].contains(where: { $0 === members[later] }) {
            return false
        }
        return true
    }

    private func linkInverses(of slot: PropertySlot, removed: [AnyObject], added: [AnyObject]) {
        guard let owner = model, let inverse = layout.mapping(for: slot).inverse else { return }
        for related in removed {
            slot.relatedModel(related)?.storage.unlink(owner, fromInverse: inverse)
        }
        for related in added {
            guard let relatedModel = slot.relatedModel(related) else { continue }
            relatedModel.storage.adopt(relatedModel)
            relatedModel.storage.link(owner, intoInverse: inverse, forwardSlot: slot)
            // SwiftData inserts a new model as soon as it is related to one of a context's, from either side.
            if let context {
                context.insertNewlyRelated(relatedModel)
            } else if let context = relatedModel.storage.context, let ownerModel = persistentModel {
                context.insertNewlyRelated(ownerModel)
            }
        }
    }

    /// A model of no context, not deleted nor merged into another: the next relation to one of a
    /// context's, or the save of one that refers to it, inserts it there.
    var awaitsInsert: Bool { context == nil && !isDeleted && mergedInto == nil }

    /// Adds `owner` to this model's side of the relationship, taking it from any previous owner.
    private func link(_ owner: AnyObject, intoInverse slot: PropertySlot, forwardSlot: PropertySlot) {
        if slot.isForeignKey {
            let current = relatedModels(at: slot.index)
            if current.contains(where: { $0 === owner }) { return }
            // A to-one side can point at one owner only: the previous owner loses this model.
            for previous in current {
                slot.relatedModel(previous)?.storage.removeMember(model, at: forwardSlot.index)
            }
            values[slot.index] = Self.typedValue(for: slot, models: [owner])
        } else {
            if recordPendingMembership(of: owner, at: slot.index, joins: true) { return }
            if holdsMember(owner, at: slot.index) { return }
            appendMember(owner, at: slot.index)
        }
        dirtyRelationships.insert(slot.index)
        context?.storageDidChange(self)
    }

    private func unlink(_ owner: AnyObject, fromInverse slot: PropertySlot) {
        if recordPendingMembership(of: owner, at: slot.index, joins: false) { return }
        let current = relatedModels(at: slot.index)
        guard current.contains(where: { $0 === owner }) else { return }
        if slot.isForeignKey && slot.optionalType == nil {
            // A required to-one cannot be emptied; saving will report the model as invalid if it stays orphaned.
            return
        }
        values[slot.index] = Self.typedValue(for: slot, models: current.filter { $0 !== owner })
        dirtyRelationships.insert(slot.index)
        context?.storageDidChange(self)
    }

    /// Removes one model from a relationship without touching the inverse (the caller maintains it).
    func removeMember(_ member: AnyObject?, at index: Int) {
        guard let member else { return }
        if recordPendingMembership(of: member, at: index, joins: false) { return }
        let current = relatedModels(at: index)
        guard current.contains(where: { $0 === member }) else { return }
        let slot = layout.slots[index]
        if slot.isForeignKey && slot.optionalType == nil { return }
        values[index] = Self.typedValue(for: slot, models: current.filter { $0 !== member })
        dirtyRelationships.insert(index)
        context?.storageDidChange(self)
    }

    /// Turns the loaded to-many relationships its row's version does not follow back into faults, so
    /// that they are read again as the store holds them now. For a model with no unsaved change.
    func faultUnversionedToMany() {
        unversionedToManyLoadedAt = nil
        for slot in layout.toManySlots where !layout.mapping(for: slot).isVersionedByOwner {
            if Self.holds(values[slot.index], ToManyFault.self) { continue }
            values[slot.index] = ToManyFault()
            committedToMany[slot.index] = nil
        }
    }

    /// Replaces loaded relationships of a saved model with faults, releasing the related models.
    func faultLoadedRelationships() {
        guard primaryKey != nil else { return }
        for slot in layout.foreignKeySlots {
            // Most rows a context read never loaded their related model: nothing to release.
            if Self.holds(values[slot.index], ToOneFault.self) { continue }
            guard let target = Self.firstModel(in: values[slot.index], of: slot).flatMap(slot.relatedModel),
                  let key = target.storage.primaryKey else { continue }
            values[slot.index] = ToOneFault(primaryKey: key)
        }
        for slot in layout.toManySlots {
            // Changes waiting in a relationship that is not loaded hold the models that joined or left
            // it, which hold this model back: a context closed unsaved drops them, as it drops every
            // change it did not save, so that those models are freed with it.
            if let fault = Self.value(values[slot.index], as: ToManyFault.self), fault.pending == nil { continue }
            values[slot.index] = ToManyFault()
        }
    }

    // MARK: Values of the property's exact type

    /// The models a relationship slot's value holds. The slot knows the destination type, which reads
    /// the value with casts to concrete types: the general path below casts to protocols and bridges
    /// every element, and saving a large graph called it for every relationship of every model.
    static func models(in value: Any, of slot: PropertySlot) -> [AnyObject] {
        if let form = slot.relationshipForm, isBoxed(value, as: slot.valueType) {
            return form.models(inValueOfDeclaredType: value)
        }
        if let destination = slot.destinationType { return destination._relatedObjects(in: value) }
        return models(in: value)
    }

    /// `models(in:of:).first`, without the array where the value is of the declared type: a new
    /// snippet's folder was listed in an array of one for every save (0.3% of inserting snippets).
    static func firstModel(in value: Any, of slot: PropertySlot) -> AnyObject? {
        if let form = slot.relationshipForm, isBoxed(value, as: slot.valueType) {
            return form.firstModel(inValueOfDeclaredType: value)
        }
        return models(in: value, of: slot).first
    }

    static func models(in value: Any) -> [AnyObject] {
        if let optional = value as? any _OptionalValue {
            guard let wrapped = optional.wrappedAny else { return [] }
            return models(in: wrapped)
        }
        if let array = value as? any _ModelArray { return array._models }
        if let model = value as? any PersistentModel { return [model] }
        return []
    }

    /// A relationship value of the slot's declared type (`T`, `T?`, `[T]` or `[T]?`) holding `models`.
    static func typedValue(for slot: PropertySlot, models: [AnyObject]) -> Any {
        let value: Any?
        if let array = slot.modelArrayType {
            value = array._make(from: models)
        } else {
            value = models.first
        }
        if let optional = slot.optionalType { return optional.wrapping(value) }
        return value ?? UnsetValue()
    }
}
