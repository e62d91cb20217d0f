import Foundation
import GRDB

/// Marks a slot whose value was never set: a model read before its initializer set the property.
struct UnsetValue {}

/// Marks a column left out by `FetchDescriptor.propertiesToFetch`: it is read on first access.
struct UnloadedValue {}

extension ModelStorage {
    /// The type an `Any` was made with, read from the box itself: an `Any` is three words of value
    /// (or of a pointer to it) followed by the type's metadata, the layout of Swift's stable ABI for
    /// existential containers. `type(of:)` asks the runtime instead (`swift_getDynamicType`), which
    /// looks for a class instance's own class and for nested boxes: 40 instructions a check, and the
    /// checks below ran a million times in inserting 5,000 snippets (2.5% of it).
    ///
    /// For a value of a struct or enum, this is its type; for a class instance, the class it was boxed
    /// as, which may be a superclass of its own. So a check that it equals `T` says the box holds
    /// exactly a `T`, and one that fails falls back to the runtime's cast where it matters (`unboxed`).
    @inline(__always) static func boxedType(of value: Any) -> UnsafeRawPointer {
        withUnsafePointer(to: value) { box in
            UnsafeRawPointer(box).load(fromByteOffset: 3 * MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer.self)
        }
    }

    /// Whether `value` was boxed as exactly `type` (see `boxedType(of:)`).
    @inline(__always) static func isBoxed(_ value: Any, as type: Any.Type) -> Bool {
        boxedType(of: value) == unsafeBitCast(type, to: UnsafeRawPointer.self)
    }

    /// Whether a slot's value is one of the markers above (or a fault), which are structs: comparing
    /// the type in the box is a load and a compare, where `is` on an `Any` runs the runtime's general
    /// cast; these checks run on every property access and for every relationship of every model a
    /// save looks at.
    @inline(__always) static func holds<Marker>(_ value: Any, _ marker: Marker.Type) -> Bool {
        isBoxed(value, as: marker)
    }

    @inline(__always) static func value<Marker>(_ value: Any, as marker: Marker.Type) -> Marker? {
        holds(value, marker) ? value as? Marker : nil
    }

    /// A value known to be of type `Value`, opened out of its `Any` box. A forced cast (`as! Value`)
    /// runs the runtime's general cast, which looks for optionals, existentials and bridging first:
    /// a third of a property read.
    @inline(__always) static func sameTypeValue<Value>(_ value: Any, as type: Value.Type) -> Value {
        func open<Stored>(_ stored: Stored) -> Value {
            // `Stored` is `Value`: the caller checked the type in the box.
            unsafeBitCast(stored, to: Value.self)
        }
        return _openExistential(value, do: open)
    }

    /// `value` as a `Value`: opened as above when it holds exactly one, else by the runtime's cast.
    @inline(__always) static func unboxed<Value>(_ value: Any, as type: Value.Type) -> Value? {
        isBoxed(value, as: Value.self) ? sameTypeValue(value, as: Value.self) : value as? Value
    }
}

/// The values of one model instance and its bookkeeping: row key, context, last saved state.
///
/// `DefaultBackingData<Model>` is the generic face `@Model` code sees; the context works with this
/// non-generic base so that it can handle models of every type in one save.
@usableFromInline
class ModelStorage {
    let layout: EntityLayout
    /// Current values, one per slot, each of the property's exact type boxed in `Any`.
    ///
    /// A release build does not check accesses to them for overlap at run time: the check
    /// (`swift_beginAccess`) was a seventh of every property read and of filling a model from a row.
    /// A storage is used on one context's thread at a time (models are not `Sendable`), and no access
    /// to it overlaps another: the one `inout` use, `appendMember`'s, hands a slot to a function that
    /// touches no storage. Debug builds, which the tests run, keep the check, so an overlap a change
    /// brings in still traps there.
    ///
    /// The bookkeeping every write of a relationship reads or changes (`memberAddresses`,
    /// `dirtyRelationships`, `pendingInverseLinks`, `unloadedSlots`, `discardsWrites`) is unchecked in
    /// release too, for the same reasons: its checks were 3% of inserting snippets with a folder and
    /// two tags. Each is a value changed only by its own methods (inserts, removals, a flag set), none
    /// of which calls out while the change is under way; the closures that read one (`filter`) read.
    #if DEBUG
    var values: [Any] { didSet { valuesDidChange() } }
    #else
    @exclusivity(unchecked) var values: [Any] { didSet { valuesDidChange() } }
    #endif

    @inline(__always) private func valuesDidChange() {
        if !memberAddresses.isEmpty { memberAddresses.removeAll() }
        // A storage outside any context (a new model, or a row being read) is looked at once, when
        // it joins one: its initializer and a row's fill write every slot.
        if hasHeldRelatedModels || layout.relationshipSlots.isEmpty {
            // Nothing to look for.
        } else if belongsToContext {
            noteRelatedModels()
        } else if valuesHoldNoRelatedModels {
            valuesHoldNoRelatedModels = false
        }
    }

    /// Whether a relationship slot has held what its context turns back into a fault when it closes
    /// (a loaded to-many, a to-many's waiting changes, or a to-one that holds a model; see
    /// `ModelContext.deinit`), which breaks the cycles related models make. Every write of a slot goes
    /// through `values`, whose observer sets it.
    private(set) var hasHeldRelatedModels = false
    /// The addresses of the models each large loaded to-many slot holds, by slot, so that linking
    /// one more member into a relationship of thousands does not scan all of them: building a
    /// folder of 5,000 new snippets scanned 12.5 million elements. Any write to `values` drops
    /// them, so they can never describe an array that has since changed; `appendMember` keeps its
    /// slot's set in step with the one element it adds.
    #if DEBUG
    var memberAddresses = SlotMap<AddressSet>()
    #else
    @exclusivity(unchecked) var memberAddresses = SlotMap<AddressSet>()
    #endif
    /// The column values as last read from or written to the store, by slot (`.null` for non-columns);
    /// nil for a model that was never saved. Saving diffs against it; `rollback()` restores it.
    var committedRow: [DatabaseValue]?
    /// Names of the files that hold this row's external-storage values, by slot, as last committed.
    var committedExternalFiles: [Int: String] = [:]
    // `primaryKey`, `context`, `owner`, `sharingModels`, `hasModel` and `isDeleted` are unchecked in
    // release builds for the reasons `values` gives: each relationship write and each model a save
    // looks at reads several of them, and their run-time checks were 2% of inserting snippets.
    #if DEBUG
    var primaryKey: Int64?
    #else
    @exclusivity(unchecked) var primaryKey: Int64?
    #endif
    /// The row's `_version` when it was last read or saved by this storage's context.
    var version: Int64 = 1
    var storeIdentifier: String?
    private var temporaryKey: UUID?
    #if DEBUG
    weak var context: ModelContext? { didSet { contextDidChange() } }
    #else
    @exclusivity(unchecked) weak var context: ModelContext? { didSet { contextDidChange() } }
    #endif

    private func contextDidChange() {
        belongsToContext = context != nil
        if hasHeldRelatedModels {
            context?.mayHoldRelatedModels = true
        } else if belongsToContext, !valuesHoldNoRelatedModels, !layout.relationshipSlots.isEmpty {
            noteRelatedModels()
        }
    }
    /// Whether `context` was set last to a context, read where loading the weak reference would cost
    /// more than the rest of the check.
    private(set) var belongsToContext = false
    /// Set when the values were just filled from a row, whose relationships are faults (or nil), and
    /// cleared by the next write: a fetched row joins its context without being looked at.
    var valuesHoldNoRelatedModels = false
    /// The store the model was read from or saved to. When its context is gone, the model still reads
    /// its unloaded relationships from here, as new models that belong to no context.
    var store: SQLiteStore?
    /// The model that owns this storage, and that the storage cannot outlive: the model holds it
    /// strongly. `unowned`, not `weak`: a weakly referenced object keeps its reference counts in a
    /// side table, and every retain and release of every model then took the runtime's slow path,
    /// a fifth of inserting and reading rows.
    #if DEBUG
    private unowned var owner: AnyObject? { didSet { hasModel = owner != nil } }
    #else
    @exclusivity(unchecked) private unowned var owner: AnyObject? { didSet { hasModel = owner != nil } }
    #endif
    /// The models that read and write this storage when there are several: a model merged into another
    /// by a unique value shares that one's storage (`shareBackingData(with:)`), and either may go
    /// first, so the storage can outlive any one of them. Weak, for those few models alone: reading
    /// the unowned `owner` after it went would trap.
    #if DEBUG
    private var sharingModels: [WeakModel]?
    #else
    @exclusivity(unchecked) private var sharingModels: [WeakModel]?
    #endif

    /// The model this storage belongs to: its owner, or the first of the models sharing it still alive.
    var model: AnyObject? {
        get {
            guard let sharingModels else { return owner }
            return sharingModels.lazy.compactMap(\.object).first
        }
        set {
            guard sharingModels != nil else {
                owner = newValue
                return
            }
            if let newValue { share(with: newValue) }
        }
    }

    /// `model` as a model, found through the layout's model type.
    var persistentModel: (any PersistentModel)? {
        model.flatMap { ObjectGraph.persistentModel($0, expecting: layout.modelType) }
    }

    /// Lets `other` read and write this storage too, besides the model that owns it.
    func share(with other: AnyObject) {
        // The owner is alive here: its context holds it, as a pending insert or a registered model.
        var sharing = sharingModels ?? owner.map { [WeakModel(object: $0)] } ?? []
        if !sharing.contains(where: { $0.object === other }) { sharing.append(WeakModel(object: other)) }
        sharingModels = sharing
        owner = nil
        hasModel = true
    }
    /// Whether `model` is set. Every property read asks (`adopt`), and reading an `unowned` reference
    /// to compare it with nil takes and drops a strong reference: more than the rest of the read.
    #if DEBUG
    private(set) var hasModel = false
    #else
    @exclusivity(unchecked) private(set) var hasModel = false
    #endif
    #if DEBUG
    var isDeleted = false
    #else
    @exclusivity(unchecked) var isDeleted = false
    #endif
    /// Set when this model's row was found gone while its values were wanted (see `EmptyValue`):
    /// a property with no value in memory then reads as its type's empty value.
    var rowIsGone = false
    /// The key a save in progress gave this new model's row, until the save ends (`SQLiteStore.save`
    /// clears it whether the save commits or not; the context then sets `primaryKey` from the result).
    /// Kept here, not in a dictionary by storage: each of the save's join rows and references to new
    /// rows looks it up.
    var keyInSave: Int64?
    /// Set when a pending insert collided with another model on a unique attribute and was merged into it.
    weak var mergedInto: ModelStorage?
    /// The keys of the related rows of each loaded to-many relationship, as last read or saved.
    var committedToMany = SlotMap<[Int64]>()
    /// Relationship slots changed since the last save.
    #if DEBUG
    var dirtyRelationships = SlotSet()
    #else
    @exclusivity(unchecked) var dirtyRelationships = SlotSet()
    #endif
    /// The store's generation (`AggregateCache.generationSeen`) when the first of this model's loaded
    /// to-many relationships that its own row's version does not follow was loaded: one read through
    /// the inverse's column (a folder's snippets), or the other side of a many-to-many pair (a tag's
    /// snippets). Another context's save changes those without changing this row, so a fetch of the
    /// unchanged model turns them back into faults once the store has moved on (`faultUnversionedToMany`).
    var unversionedToManyLoadedAt: UInt64?
    /// Relationships set while the model was being initialized, before it could be linked to inverses.
    /// A `SlotSet`, not a `Set<Int>`: every new model's initializer sets its to-many defaults (`[]`),
    /// and the `Set` allocated its table for the first (its inserts were 19 M of the 2,199 M
    /// instructions of inserting 2 × 5,000 snippets). Linked in slot order.
    #if DEBUG
    var pendingInverseLinks = SlotSet()
    #else
    @exclusivity(unchecked) var pendingInverseLinks = SlotSet()
    #endif
    /// Columns not read yet (see `propertiesToFetch`); their committed values are unknown until read.
    #if DEBUG
    var unloadedSlots: Set<Int> = []
    #else
    @exclusivity(unchecked) var unloadedSlots: Set<Int> = []
    #endif

    /// Set while a model is made from a row and its property defaults run: what they write is dropped.
    #if DEBUG
    var discardsWrites = false
    #else
    @exclusivity(unchecked) var discardsWrites = false
    #endif

    /// While a model is made from a row (`RowMaterialization.initializing`): the model type being
    /// made, which only that type's `createBackingData()` may take this storage for.
    #if DEBUG
    var initializingModelType: UnsafeRawPointer?
    #else
    @exclusivity(unchecked) var initializingModelType: UnsafeRawPointer?
    #endif

    /// Sets `hasHeldRelatedModels` when a relationship slot holds a loaded value or changes waiting in a
    /// to-many that is not loaded, and tells the context.
    private func noteRelatedModels() {
        for slot in layout.relationshipSlots where slot.index < values.count {
            let value = values[slot.index]
            if Self.holds(value, ToOneFault.self) || Self.holds(value, UnsetValue.self) || Self.holds(value, UnloadedValue.self) { continue }
            // A to-many not loaded holds the models whose joining or leaving waits in it, if any.
            if Self.holds(value, ToManyFault.self), Self.value(value, as: ToManyFault.self)?.pending == nil { continue }
            // A to-one that holds nothing (nil) is left as it is when the context closes.
            if let form = slot.relationshipForm, Self.isBoxed(value, as: slot.valueType) {
                if !form.holdsModelOrIsMany(inValueOfDeclaredType: value) { continue }
            } else if !slot.isToMany, Self.models(in: value, of: slot).isEmpty {
                continue
            }
            hasHeldRelatedModels = true
            context?.mayHoldRelatedModels = true
            return
        }
    }

    /// Required, so that a storage can be made from `EntityLayout.storageClass`.
    required init(layout: EntityLayout) {
        self.layout = layout
        self.values = layout.unsetValues
    }

    var identifier: PersistentIdentifier {
        if let target = mergedInto { return target.identifier }
        if let primaryKey {
            return PersistentIdentifier(entityName: layout.name, storeIdentifier: storeIdentifier, primaryKey: primaryKey)
        }
        if temporaryKey == nil { temporaryKey = UUID() }
        return PersistentIdentifier(entityName: layout.name, temporaryKey: temporaryKey ?? UUID())
    }

    func value(at index: Int) -> Any { values[index] }

    func setValue(_ value: Any, at index: Int) {
        if !unloadedSlots.isEmpty {
            loadUnloadedColumns()
            // An external file not read yet is replaced unread: the save retires it by its name.
            unloadedSlots.remove(index)
        }
        values[index] = value
        context?.storageDidChange(self)
    }

    /// Reads columns the fetch left out. An external file the fetched row named is read by that name,
    /// alone, when its own property is read (`index`), and never for a write: the save keeps an
    /// unread file's name, so a write needs no file it does not change (it read every one, so a
    /// model whose file was gone could not be saved again, not even to clear that value). Other
    /// columns (`propertiesToFetch`) are read all at once, from the row as it is now, the first time
    /// one of them is needed or, `index` nil, before a write changes the model.
    func loadUnloadedColumns(for index: Int? = nil) {
        guard !unloadedSlots.isEmpty, let store, let primaryKey else { return }
        let wanted: Set<Int>
        if let index, isUnreadExternalFile(index) {
            wanted = [index]
        } else {
            wanted = unloadedSlots.filter { !isUnreadExternalFile($0) }
        }
        guard !wanted.isEmpty else { return }
        do {
            var committed = committedRow ?? [DatabaseValue](repeating: .null, count: layout.slots.count)
            let rowNeeded = wanted.contains { !isUnreadExternalFile($0) }
            let row = rowNeeded ? try store.fetchRows(layout, query: RowQuery.row(primaryKey)).first : nil
            if rowNeeded && row == nil {
                rowIsGone = true
                return
            }
            for reader in layout.columnReaders where wanted.contains(reader.slot.index) {
                let index = reader.slot.index
                if !isUnreadExternalFile(index), let row { committed[index] = row.valuesBySlot[index] }
                values[index] = try store.read(committed[index], with: reader, for: self, rowKey: primaryKey, committed: &committed)
            }
            committedRow = committed
            unloadedSlots.subtract(wanted)
        } catch is SQLiteStore.RowDeletedSinceRead {
            // As for the other columns of a row that is gone (above): the value reads as the property's
            // fallback, and a save of this model meets the delete as a conflict. Reported as an error,
            // it made the context's next save throw, whatever that save held.
            rowIsGone = true
            return
        } catch {
            context?.deferredErrors.append(SwiftDataError(
                .storeFailure, "cannot read the rest of a \(layout.name): \(error)", entity: layout.name))
        }
    }

    /// Whether a slot holds an external file not read yet, whose name the committed row holds.
    private func isUnreadExternalFile(_ index: Int) -> Bool {
        unloadedSlots.contains(index) && committedExternalFiles[index] != nil
    }

    /// The value a property reads when nothing was set: its declared default, or nil for optionals.
    func fallbackValue(at index: Int) -> Any? {
        let slot = layout.slots[index]
        if let defaultValue = slot.defaultValue { return defaultValue }
        if let optional = slot.optionalType { return optional.wrapping(nil) }
        return nil
    }

    /// Copies the values of `let` and type-inferred properties, which live in the instance, into the slots.
    func pullInstanceStoredValues() {
        guard layout.hasInstanceStoredProperties, let model else { return }
        for slot in layout.slots where slot.isStoredInInstance {
            if let value = (model as Any)[keyPath: slot.keyPath] { values[slot.index] = value }
        }
    }

    func hasUnsavedChanges(model: AnyObject) -> Bool {
        guard let context else { return false }
        return context.hasPendingChanges(for: self)
    }
}

/// A model that may go before the storage it shares.
struct WeakModel {
    weak var object: AnyObject?
}

/// The backing data ObjectGraph gives every model: values in slots, indexed through the entity layout.
///
/// `@usableFromInline`, with its superclass and the members `BackingData` requires, only for
/// `PersistentModel.createBackingData()`, which is inlinable; nothing of it is public.
@usableFromInline
final class DefaultBackingData<Model: PersistentModel>: ModelStorage, BackingData {
    @usableFromInline
    required init(for modelType: Model.Type) {
        super.init(layout: EntityLayout.of(modelType))
    }

    /// For a row of the entity whose layout the caller already has.
    required init(layout: EntityLayout) {
        super.init(layout: layout)
    }

    @usableFromInline
    var persistentModelID: PersistentIdentifier? {
        get { identifier }
        set {
            if let key = newValue?.primaryKey { primaryKey = key }
        }
    }

    @usableFromInline
    var metadata: Any { layout }

    @usableFromInline
    func getValue<Value>(forKey key: KeyPath<Model, Value>) -> Value {
        guard let index = layout.slotIndex(for: key) else {
            preconditionFailure("\(key) is not a persisted property of \(layout.name)")
        }
        let stored = values[index]
        // An attribute's slot holds a value of the property's exact type: the forced cast is then a
        // copy. Every other case is in `slowValue`, whose `as? Value` has the runtime look up
        // `Optional<Value>`'s metadata, which cost as much as the rest of a property read.
        if Self.isBoxed(stored, as: Value.self), layout.slots[index].relationship == nil {
            return Self.sameTypeValue(stored, as: Value.self)
        }
        return slowValue(at: index, as: Value.self)
    }

    @inline(never)
    private func slowValue<Value>(at index: Int, as type: Value.Type) -> Value {
        if Self.holds(values[index], UnloadedValue.self) { loadUnloadedColumns(for: index) }
        if layout.slots[index].relationship != nil {
            let resolved = resolvedRelationshipValue(at: index)
            // Mostly of the property's exact type (`Folder?`, `[Tag]`): opened without the runtime's
            // general cast, which looked up the type's metadata on every read of a relationship.
            if let value = Self.unboxed(resolved, as: Value.self) { return value }
        } else if let value = values[index] as? Value {
            return value
        }
        if let fallback = fallbackValue(at: index) as? Value { return fallback }
        // An external file that cannot be read (deleted behind the store's back) leaves a `Data` that
        // is not optional without a value, and a read cannot throw: it reads as empty, and the
        // context's next save says why.
        if layout.slots[index].isExternalStorage, let empty = Data() as? Value { return empty }
        let name = "\(layout.name).\(layout.slots[index].name)"
        guard rowIsGone else { preconditionFailure("\(name) was read before it was given a value") }
        if let empty = EmptyValue.of(Value.self) { return empty }
        preconditionFailure("\(name) has no value: its row is gone, and \(Value.self) has no empty value to read instead")
    }

    @usableFromInline
    func setValue<Value>(forKey key: KeyPath<Model, Value>, to newValue: Value) {
        if discardsWrites { return }
        guard let index = layout.slotIndex(for: key) else {
            preconditionFailure("\(key) is not a persisted property of \(layout.name)")
        }
        if !unloadedSlots.isEmpty { loadUnloadedColumns() }
        if layout.slots[index].relationship != nil {
            setRelationship(newValue, at: index)
        } else {
            setValue(newValue, at: index)
        }
    }
}
