import Foundation
import GRDB

/// One persisted property of a model type: where its value sits in the backing data, and how it is stored.
final class PropertySlot: @unchecked Sendable {
    let index: Int
    let name: String
    let keyPath: AnyKeyPath
    let valueType: Any.Type
    let defaultValue: Any?
    /// True for `let` properties and `var`s with an inferred type: Swift keeps their value in the
    /// instance, so the context reads them through `keyPath` instead of through the backing data.
    let isStoredInInstance: Bool
    let attribute: Schema.Attribute?
    let relationship: Schema.Relationship?
    /// How the attribute's value becomes a column value and back; nil for relationships and transients.
    let codec: AttributeCodec?
    /// The model type a relationship refers to.
    let destinationType: (any PersistentModel.Type)?
    /// `Optional<Wrapped>` when the property is optional; `wrappedValueType` is then `Wrapped`, else `valueType`.
    let optionalType: (any _OptionalValue.Type)?
    let wrappedValueType: Any.Type
    /// `wrappedValueType` as an array of models, for a to-many relationship: found once, where
    /// appending to a relationship and building its value asked the runtime for every member.
    let modelArrayType: (any _ModelArray.Type)?
    /// For a relationship, how its declared type holds the related models.
    let relationshipForm: RelationshipForm?

    init(index: Int, metadata: Schema.PropertyMetadata, entityName: String, errors: inout [SwiftDataError]) {
        self.index = index
        self.name = metadata.name
        self.keyPath = metadata.keypath
        self.valueType = type(of: metadata.keypath).valueType
        self.optionalType = valueType as? any _OptionalValue.Type
        self.wrappedValueType = optionalType?.wrappedType ?? valueType
        self.modelArrayType = wrappedValueType as? any _ModelArray.Type
        self.defaultValue = metadata.defaultValue
        self.isStoredInInstance = metadata.isStoredInInstance

        if let destination = RelationshipShape(valueType) {
            let relationship = (metadata.metadata as? Schema.Relationship) ?? Schema.Relationship()
            relationship.name = metadata.name
            relationship.valueType = valueType
            relationship.destination = Schema.entityName(for: destination.modelType)
            relationship.destinationType = destination.modelType
            relationship.isToOneRelationship = !destination.isToMany
            self.relationship = relationship
            self.attribute = nil
            self.codec = nil
            self.destinationType = destination.modelType
            self.relationshipForm = RelationshipForm(isToMany: destination.isToMany, isOptional: optionalType != nil)
            return
        }
        self.destinationType = nil
        self.relationshipForm = nil
        let attribute = (metadata.metadata as? Schema.Attribute) ?? Schema.Attribute()
        attribute.name = metadata.name
        attribute.valueType = valueType
        attribute.defaultValue = metadata.defaultValue
        self.attribute = attribute
        self.relationship = nil
        if attribute.isTransient {
            self.codec = nil
        } else if let reference = attribute.transformer {
            if let transformer = TransformerRegistry.shared.transformer(for: reference) {
                self.codec = AttributeCodec.make(for: valueType, transformer: transformer)
            } else {
                self.codec = nil
                errors.append(.unregisteredValueTransformer(reference, entity: entityName, property: metadata.name))
            }
        } else if let codec = AttributeCodec.make(for: valueType, opaque: attribute.isOpaqueCodable) {
            self.codec = codec
        } else {
            self.codec = nil
            errors.append(.unsupportedAttributeType(entity: entityName, property: metadata.name, type: valueType))
        }
    }

    /// A member of this relationship as a model, found through the destination type.
    @inline(__always) func relatedModel(_ object: AnyObject) -> (any PersistentModel)? {
        persistentModel(object, expecting: destinationType)
    }

    /// Whether the attribute has a column of its own in the entity's table.
    var isColumn: Bool { codec != nil }
    /// A to-one relationship: stored as the related row's key, in a column of this entity's table.
    /// Both read the slot's own `relationshipForm`, set with the relationship's `isToOneRelationship`
    /// and never changed: reading that class's variable had the runtime check the access, at every
    /// relationship write and save.
    var isForeignKey: Bool { relationshipForm?.isToOne ?? false }
    var isToMany: Bool { relationshipForm.map { !$0.isToOne } ?? false }
    /// A unique attribute, or a to-one relationship marked `@Relationship(.unique)` (SwiftData allows
    /// both): its column has a unique index, and an insert that matches a saved row takes it over.
    var isUnique: Bool { attribute?.isUnique ?? (isForeignKey && relationship?.isUnique == true) }
    var isExternalStorage: Bool { attribute?.isExternalStorage ?? false }
    /// `@Attribute(.codable)`: stored as JSON text that predicates and sorts do not read.
    var isOpaqueCodable: Bool { attribute?.isOpaqueCodable ?? false }
    /// `@Attribute(.transformable(by:))`: stored as the transformer's `Data`, which predicates and sorts do not read.
    var isTransformed: Bool { attribute?.transformer != nil }
    /// Either: a column whose stored form does not compare or sort as its values do.
    var isOpaque: Bool { isOpaqueCodable || isTransformed }
}

/// How one column of a fetched row becomes its slot's value, worked out once per entity: reading a
/// row asked each slot what kind of column it was (an option list searched for external storage)
/// and copied its codec, for every column of every row.
///
/// The kind carries no payload, and the decoder is a field of its own: as an enum's payload, the
/// closure was copied (its context retained and released) at every test of the kind, twice a column
/// of every row read, a tenth of filling a model from its row.
struct ColumnReader {
    enum Kind {
        /// A value held in the column, decoded straight into the slot by `decode`.
        case inline
        /// The related row's key: the slot holds a fault.
        case foreignKey
        /// Anything else (external storage): decoded through `SQLiteStore.decodeColumn`.
        case general
    }

    let slot: PropertySlot
    /// The slot's index, read for every column of every row without going through `slot`.
    let index: Int
    let kind: Kind
    /// The codec's decoder for an `inline` column; for the others, one that is never called.
    let decode: (DatabaseValue) throws -> Any

    init(_ slot: PropertySlot) {
        self.slot = slot
        index = slot.index
        if slot.isForeignKey {
            kind = .foreignKey
            decode = Self.notInline
        } else if !slot.isExternalStorage, let codec = slot.codec {
            kind = .inline
            decode = codec.decode
        } else {
            kind = .general
            decode = Self.notInline
        }
    }

    private static func notInline(_ stored: DatabaseValue) throws -> Any {
        throw SwiftDataError(.storeFailure, "a column that is not inline was decoded as one")
    }
}

/// The shape of a relationship property's type: `Model`, `Model?`, `[Model]` or `[Model]?`.
struct RelationshipShape {
    let modelType: any PersistentModel.Type
    let isToMany: Bool

    init?(_ type: Any.Type) {
        var unwrapped = type
        if let optional = type as? any _OptionalValue.Type { unwrapped = optional.wrappedType }
        if let model = unwrapped as? any PersistentModel.Type {
            modelType = model
            isToMany = false
        } else if let array = unwrapped as? any _ModelArray.Type {
            guard let element = array.modelType else { return nil }
            modelType = element
            isToMany = true
        } else {
            return nil
        }
    }
}

/// How a relationship property's declared type holds its models: `Model`, `Model?`, `[Model]` or `[Model]?`.
///
/// A value of exactly the declared type is read without a cast. A model is one strong reference, and
/// so is `Model?` (nil is the null reference); `[Model]` is one reference to a buffer of references,
/// the layout `[AnyObject]` has too. The general path casts to `[Model]` or `Model` and then each
/// element to `AnyObject`: generic metadata looked up on every call and a cast per element, about
/// a tenth of inserting a snippet with its folder and tags.
enum RelationshipForm {
    case one, optionalOne, many, optionalMany

    var isToOne: Bool {
        switch self {
        case .one, .optionalOne: true
        case .many, .optionalMany: false
        }
    }

    init(isToMany: Bool, isOptional: Bool) {
        switch (isToMany, isOptional) {
        case (false, false): self = .one
        case (false, true): self = .optionalOne
        case (true, false): self = .many
        case (true, true): self = .optionalMany
        }
    }

    /// The models in `value`, which must be of the property's exact declared type (the caller checks).
    func models(inValueOfDeclaredType value: Any) -> [AnyObject] {
        switch self {
        case .one: [Self.reinterpret(value, as: AnyObject.self)]
        case .optionalOne: Self.reinterpret(value, as: AnyObject?.self).map { [$0] } ?? []
        case .many: Self.copy(Self.reinterpret(value, as: [AnyObject].self))
        case .optionalMany: Self.reinterpret(value, as: [AnyObject]?.self).map(Self.copy) ?? []
        }
    }

    /// Calls `body` with each model in `value`, which must be of the property's exact declared type,
    /// in order. The reinterpreted array is only read here, so it needs no copy of its own: a save
    /// walking every new model's relationships made one for each of them.
    func forEachModel(inValueOfDeclaredType value: Any, _ body: (AnyObject) -> Void) {
        switch self {
        case .one:
            body(Self.reinterpret(value, as: AnyObject.self))
        case .optionalOne:
            if let model = Self.reinterpret(value, as: AnyObject?.self) { body(model) }
        case .many:
            for model in Self.reinterpret(value, as: [AnyObject].self) { body(model) }
        case .optionalMany:
            for model in Self.reinterpret(value, as: [AnyObject]?.self) ?? [] { body(model) }
        }
    }

    /// The first model in `value` (a to-one's model), which must be of the property's exact declared
    /// type, without making the array `models(inValueOfDeclaredType:)` makes.
    func firstModel(inValueOfDeclaredType value: Any) -> AnyObject? {
        switch self {
        case .one: Self.reinterpret(value, as: AnyObject.self)
        case .optionalOne: Self.reinterpret(value, as: AnyObject?.self)
        case .many: Self.reinterpret(value, as: [AnyObject].self).first
        case .optionalMany: Self.reinterpret(value, as: [AnyObject]?.self)?.first
        }
    }

    /// Whether `value`, of the property's exact declared type, holds a model or is a to-many (even an
    /// empty one): what a closing context turns back into a fault. No array is made.
    func holdsModelOrIsMany(inValueOfDeclaredType value: Any) -> Bool {
        switch self {
        case .one, .many, .optionalMany: true
        case .optionalOne: Self.reinterpret(value, as: AnyObject?.self) != nil
        }
    }

    /// The value's bits as a `T`. `unsafeBitCast` checks at run time that the sizes agree.
    private static func reinterpret<T>(_ value: Any, as type: T.Type) -> T {
        func open<Value>(_ value: Value) -> T { unsafeBitCast(value, to: T.self) }
        return open(value)
    }

    /// An array with a buffer of its own: the reinterpreted one still shares the buffer made for the
    /// model type, which must not be handed out to be mutated as an array of any objects.
    private static func copy(_ shared: [AnyObject]) -> [AnyObject] {
        shared.withUnsafeBufferPointer { Array($0) }
    }
}

/// Everything ObjectGraph derives once from a model type's `schemaMetadata`: its entity name and slots.
///
/// A layout depends on the type alone, not on a container, so models created before any container
/// exists keep their values in the same slots a context later reads.
final class EntityLayout: @unchecked Sendable {
    let name: String
    let modelType: any PersistentModel.Type
    let slots: [PropertySlot]
    let slotIndexByKeyPath: [AnyKeyPath: Int]
    /// The address of each slot's key path object, by slot index (see `slotIndex(for:)`).
    private let slotKeyPathIdentities: [ObjectIdentifier]
    let slotsByName: [String: PropertySlot]
    /// Attributes with a column, in column order.
    let columnSlots: [PropertySlot]
    /// To-one relationships, each a column holding the related row's key.
    let foreignKeySlots: [PropertySlot]
    /// Every column after the primary key: attributes, then foreign keys. Rows are read and written in this order.
    let storedColumnSlots: [PropertySlot]
    /// Attributes marked `.preserveValueOnDeletion`, in column order: a deleted row's history keeps them.
    let preservedSlots: [PropertySlot]
    /// The combinations of columns no two rows share: each property marked `.unique` alone, then each
    /// array of `#Unique`; repeats are left out. Each has a unique index.
    let uniquenessConstraints: [UniquenessConstraint]
    /// Every column some uniqueness constraint covers, in column order.
    let uniqueColumnSlots: [PropertySlot]
    /// For each slot, its position in `storedColumnSlots` (and so among a row's stored columns), or nil.
    let storedColumnPositionBySlot: [Int?]
    /// `storedColumnSlots`, each with how its column is read.
    let columnReaders: [ColumnReader]
    /// The indexes of the attributes without a column (transient ones): a row's fill gives each its
    /// fallback value, where it looked at every slot of every row to find them.
    let attributeSlotsWithoutColumns: [Int]
    let toManySlots: [PropertySlot]
    /// To-one and to-many relationships, in slot order.
    let relationshipSlots: [PropertySlot]
    /// The indexes `#Index` declares, each its columns in order; repeats are left out.
    let indexes: [[IndexColumn]]
    /// Each relationship slot's mapping once resolved, by slot index: an array, not a dictionary,
    /// as a save asks for them several times for every model it links (a dictionary's hashing was
    /// half of the 1.6% of inserting snippets that the look-ups took, by callgrind).
    private let mappings: LockedValue<[RelationshipMapping?]>
    let hasInstanceStoredProperties: Bool
    let buildErrors: [SwiftDataError]
    /// `\Model.persistentModelID`, made once: built for a type known only at run time, a key path is
    /// instantiated by the runtime from its mangled name, and a predicate's translation compared
    /// every property it reads with this one (a quarter of translating a list page's predicates).
    let persistentModelIDKeyPath: AnyKeyPath
    /// `DefaultBackingData<modelType>`, looked up once: in a fetch generic over a model type known only
    /// at run time, naming that class looked it up in the runtime's table of generic metadata for every
    /// row (see `SQLiteStore.materialize`).
    let storageClass: ModelStorage.Type
    /// A value per slot, each `UnsetValue`: a new storage's values before anything is set. Shared,
    /// and copied on a storage's first write: making the array for every fetched row was 3.5% of
    /// fetching rows into models by callgrind, and the copy costs about two thirds of that
    /// (5,000 rows 137.9 → 136.5 M instructions). A new storage filled from a row no longer uses
    /// it: `SQLiteStore.fillNew` appends each slot's value to a reserved array, once.
    let unsetValues: [Any]
    /// Where each slot of a new storage takes its value from when a row fills it, in slot order
    /// (`SQLiteStore.fill`); nil when a column must be read another way (external storage).
    let newStorageSlotSources: [SlotSource]?

    /// The source of one slot's value in a new storage filled from a row.
    enum SlotSource {
        /// Decoded from the column `columnReaders[position]` reads (inline or a to-one's key).
        case column(position: Int)
        case toManyFault
        /// An attribute without a column: its default, or nil.
        case fallback
        /// Nothing the row holds (the side of a one-to-one without the key).
        case unset
    }

    /// Made from the tables the general fill walks (`columnReaders`, `toManySlots`,
    /// `attributeSlotsWithoutColumns`), so that both give a new storage the same values.
    private static func newStorageSlotSources(
        columnReaders: [ColumnReader], storedColumnPositionBySlot: [Int?], toManySlots: [PropertySlot],
        attributeSlotsWithoutColumns: [Int]
    ) -> [SlotSource]? {
        if columnReaders.contains(where: { $0.kind == .general }) { return nil }
        var sources = [SlotSource](repeating: .unset, count: storedColumnPositionBySlot.count)
        for (index, position) in storedColumnPositionBySlot.enumerated() {
            if let position { sources[index] = .column(position: position) }
        }
        for slot in toManySlots { sources[slot.index] = .toManyFault }
        for index in attributeSlotsWithoutColumns { sources[index] = .fallback }
        return sources
    }

    private static func storageClass<Model: PersistentModel>(of type: Model.Type) -> ModelStorage.Type {
        DefaultBackingData<Model>.self
    }

    private init(modelType: any PersistentModel.Type) {
        let name = Schema.entityName(for: modelType)
        var errors: [SwiftDataError] = []
        var slots: [PropertySlot] = []
        for (index, metadata) in modelType.schemaMetadata.enumerated() {
            slots.append(PropertySlot(index: index, metadata: metadata, entityName: name, errors: &errors))
        }
        self.name = name
        self.modelType = modelType
        self.storageClass = Self.storageClass(of: modelType)
        self.slots = slots
        self.unsetValues = Array(repeating: UnsetValue(), count: slots.count)
        self.mappings = LockedValue(Array(repeating: nil, count: slots.count))
        let slotIndexByKeyPath = Dictionary(slots.map { ($0.keyPath, $0.index) }, uniquingKeysWith: { first, _ in first })
        self.slotIndexByKeyPath = slotIndexByKeyPath
        self.slotKeyPathIdentities = slots.map { ObjectIdentifier($0.keyPath) }
        self.slotsByName = Dictionary(slots.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.columnSlots = slots.filter(\.isColumn)
        self.foreignKeySlots = slots.filter(\.isForeignKey)
        self.storedColumnSlots = columnSlots + foreignKeySlots
        self.preservedSlots = columnSlots.filter { $0.attribute?.options.contains(.preserveValueOnDeletion) == true }
        self.columnReaders = storedColumnSlots.map(ColumnReader.init)
        var storedColumnPositionBySlot = [Int?](repeating: nil, count: slots.count)
        for (position, slot) in storedColumnSlots.enumerated() { storedColumnPositionBySlot[slot.index] = position }
        self.storedColumnPositionBySlot = storedColumnPositionBySlot
        self.attributeSlotsWithoutColumns = slots.filter { !$0.isColumn && $0.relationship == nil }.map(\.index)
        let declaredUniqueness = Self.resolveUniqueness(
            modelType._objectGraphUniqueness, entityName: name, slots: slots, slotIndexByKeyPath: slotIndexByKeyPath,
            errors: &errors)
        self.uniquenessConstraints = Self.uniquenessConstraints(
            marked: storedColumnSlots.filter(\.isUnique), declared: declaredUniqueness,
            entityName: name, storedColumnSlots: storedColumnSlots, errors: &errors)
        let constrained = Set(uniquenessConstraints.flatMap { $0.slots.map(\.index) })
        self.uniqueColumnSlots = storedColumnSlots.filter { constrained.contains($0.index) }
        self.toManySlots = slots.filter(\.isToMany)
        self.newStorageSlotSources = Self.newStorageSlotSources(
            columnReaders: columnReaders, storedColumnPositionBySlot: storedColumnPositionBySlot, toManySlots: toManySlots,
            attributeSlotsWithoutColumns: attributeSlotsWithoutColumns)
        self.relationshipSlots = slots.filter { $0.relationship != nil }
        self.hasInstanceStoredProperties = slots.contains(where: \.isStoredInInstance)
        let rowKeyPath = Self.rowKeyPath(of: modelType)
        self.persistentModelIDKeyPath = rowKeyPath
        self.indexes = Self.resolveIndexes(
            modelType._objectGraphIndexes, entityName: name, slots: slots, slotIndexByKeyPath: slotIndexByKeyPath,
            rowKeyPath: rowKeyPath, errors: &errors)
        self.buildErrors = errors
    }

    /// The name of an index's table entry, from the entity and its columns, so that reopening a store
    /// finds the index it created before.
    static func indexName(entity: String, columns: [IndexColumn]) -> String {
        ([entity] + columns.map(\.propertyName) + ["index"]).joined(separator: "_")
    }

    /// The index that keeps a uniqueness constraint: `Tag_name_unique` for `.unique` on `name` (the
    /// name stores made before `#Unique` have), `Trip_name_startDate_unique` for a pair.
    static func uniqueIndexName(entity: String, slots: [PropertySlot]) -> String {
        ([entity] + slots.map(\.name) + ["unique"]).joined(separator: "_")
    }

    /// The index on a to-one relationship's key column.
    static func foreignKeyIndexName(entity: String, slot: PropertySlot) -> String { "\(entity)_\(slot.name)_key" }

    /// The index of a join table by the other side's key, then the owner's.
    static func joinTableIndexName(table: String) -> String { "\(table)_destination_source" }

    /// `\Model.persistentModelID`, which `#Index` may name first: an index that starts with the row's
    /// key holds a narrow copy of a few columns, which a query that joins the table by key (a
    /// search's hits, a to-many relationship's members) reads instead of the whole, wide rows.
    private static func rowKeyPath<Model: PersistentModel>(of _: Model.Type) -> AnyKeyPath {
        \Model.persistentModelID
    }

    /// Turns the key paths of `#Index` into columns (see `storedSlot`).
    private static func resolveIndexes(
        _ declared: [[AnyKeyPath]], entityName: String, slots: [PropertySlot],
        slotIndexByKeyPath: [AnyKeyPath: Int], rowKeyPath: AnyKeyPath, errors: inout [SwiftDataError]
    ) -> [[IndexColumn]] {
        var indexes: [[IndexColumn]] = []
        var columnsByIndexName: [String: [String]] = [:]
        for keyPaths in declared {
            var columns: [IndexColumn] = []
            for keyPath in keyPaths {
                if keyPath == rowKeyPath {
                    columns.append(.rowKey)
                    continue
                }
                guard let slot = storedSlot(
                    named: keyPath, declaredBy: "#Index", entityName: entityName, slots: slots,
                    slotIndexByKeyPath: slotIndexByKeyPath, errors: &errors)
                else { continue }
                columns.append(IndexColumn(slot))
            }
            guard !columns.isEmpty, columns.count == keyPaths.count else { continue }
            let name = indexName(entity: entityName, columns: columns)
            if let existing = columnsByIndexName[name] {
                if existing != columns.map(\.columnName) {
                    errors.append(SwiftDataError(
                        .unsupportedKeyPath,
                        "two indexes of \(entityName) would both be named \(name), because their property names "
                            + "contain underscores: rename one of the properties",
                        entity: entityName))
                }
                continue
            }
            columnsByIndexName[name] = columns.map(\.columnName)
            indexes.append(columns)
        }
        return indexes
    }

    /// The slot with a column that a key path of `#Index` or `#Unique` names. A key path without one
    /// (a to-many relationship, a transient or computed property) is reported rather than skipped: an
    /// index that silently lost a column would not serve the queries it was declared for, and a
    /// constraint that lost one would refuse models that differ only there.
    private static func storedSlot(
        named keyPath: AnyKeyPath, declaredBy declaration: String, entityName: String, slots: [PropertySlot],
        slotIndexByKeyPath: [AnyKeyPath: Int], errors: inout [SwiftDataError]
    ) -> PropertySlot? {
        guard let slot = slotIndexByKeyPath[keyPath].map({ slots[$0] }) else {
            errors.append(SwiftDataError(
                .unsupportedKeyPath,
                "the \(declaration) of \(entityName) names \(keyPath), which is not a persisted property of \(entityName): "
                    + "only stored attributes and to-one relationships have a column "
                    + "(a @Transient or computed property has none)",
                entity: entityName))
            return nil
        }
        if slot.isToMany {
            errors.append(SwiftDataError(
                .unsupportedKeyPath,
                "the \(declaration) of \(entityName) names \(slot.name), a to-many relationship, which has no column in "
                    + "\(entityName)'s table: name the to-one relationship on the other side instead",
                entity: entityName, property: slot.name))
            return nil
        }
        guard slot.isColumn || slot.isForeignKey else {
            errors.append(SwiftDataError(
                .unsupportedKeyPath,
                "the \(declaration) of \(entityName) names \(slot.name), which is not stored in \(entityName)'s table "
                    + "(a transient attribute has no column): name stored attributes and to-one relationships only",
                entity: entityName, property: slot.name))
            return nil
        }
        return slot
    }

    /// Turns the key paths of `#Unique` into the slots of each constraint, in the order written.
    private static func resolveUniqueness(
        _ declared: [[AnyKeyPath]], entityName: String, slots: [PropertySlot],
        slotIndexByKeyPath: [AnyKeyPath: Int], errors: inout [SwiftDataError]
    ) -> [[PropertySlot]] {
        declared.compactMap { keyPaths in
            let constraint = keyPaths.compactMap { keyPath in
                storedSlot(named: keyPath, declaredBy: "#Unique", entityName: entityName, slots: slots,
                           slotIndexByKeyPath: slotIndexByKeyPath, errors: &errors)
            }
            return constraint.count == keyPaths.count && !constraint.isEmpty ? constraint : nil
        }
    }

    /// The `.unique` properties, each a constraint of its own, then the constraints of `#Unique`. A
    /// constraint that names a property twice is that of its distinct properties; one that repeats
    /// another (in any order: the values are unique together either way) is left out, so that
    /// `#Unique<Tag>([\.name])` beside `@Attribute(.unique) var name` makes one index.
    private static func uniquenessConstraints(
        marked: [PropertySlot], declared: [[PropertySlot]], entityName: String,
        storedColumnSlots: [PropertySlot], errors: inout [SwiftDataError]
    ) -> [UniquenessConstraint] {
        let positions = Dictionary(uniqueKeysWithValues: storedColumnSlots.enumerated().map { ($1.index, $0) })
        var constraints: [UniquenessConstraint] = []
        var seen = Set<Set<Int>>()
        var columnsByIndexName: [String: Set<Int>] = [:]
        for slots in marked.map({ [$0] }) + declared {
            let distinct = slots.distinct(by: { $0 === $1 })
            let members = Set(distinct.map(\.index))
            guard seen.insert(members).inserted else { continue }
            let constraint = UniquenessConstraint(
                slots: distinct, columnPositions: distinct.compactMap { positions[$0.index] },
                indexName: uniqueIndexName(entity: entityName, slots: distinct))
            if let existing = columnsByIndexName[constraint.indexName], existing != members {
                errors.append(SwiftDataError(
                    .unsupportedKeyPath,
                    "two uniqueness constraints of \(entityName) would both be named \(constraint.indexName), because "
                        + "their property names contain underscores: rename one of the properties",
                    entity: entityName))
                continue
            }
            columnsByIndexName[constraint.indexName] = members
            constraints.append(constraint)
        }
        return constraints
    }

    private static let cache = LockedValue<[ObjectIdentifier: EntityLayout]>([:])

    static func of(_ type: any PersistentModel.Type) -> EntityLayout {
        let key = ObjectIdentifier(type)
        if let layout = cache.withLock({ $0[key] }) { return layout }
        let layout = EntityLayout(modelType: type)
        return cache.withLock { cache in
            if let existing = cache[key] { return existing }
            cache[key] = layout
            return layout
        }
    }

    func slot(for keyPath: AnyKeyPath) -> PropertySlot? {
        slotIndexByKeyPath[keyPath].map { slots[$0] }
    }

    /// The index of the slot a key path of the model names, or nil for a key path that names no slot.
    ///
    /// First by the key path's address: a key path literal without captured values is instantiated
    /// once, and in a release build the accessors `@Model` writes hand the very objects its
    /// `schemaMetadata` lists (no key path is hashed while reading fetched models), which the slots
    /// keep alive. Comparing a few addresses costs less than hashing the key path, which walks its
    /// components (670 instructions a property read). The table is immutable, so threads read it
    /// without a lock. Key paths built at run time are other objects, found by hashing.
    func slotIndex(for keyPath: AnyKeyPath) -> Int? {
        let identity = ObjectIdentifier(keyPath)
        if let position = slotKeyPathIdentities.firstIndex(of: identity) { return position }
        return slotIndexByKeyPath[keyPath]
    }

    /// How a relationship slot is stored and which slot of the destination is its inverse.
    /// Resolved on first use, because it needs the destination's layout, which may need this one.
    func mapping(for slot: PropertySlot) -> RelationshipMapping {
        // Only this layout's own slots are kept by index.
        guard slot.index < slots.count, slots[slot.index] === slot else { return RelationshipMapping(slot: slot, in: self) }
        if let mapping = mappings.withLock({ $0[slot.index] }) { return mapping }
        let mapping = RelationshipMapping(slot: slot, in: self)
        return mappings.withLock { cache in
            if let existing = cache[slot.index] { return existing }
            cache[slot.index] = mapping
            return mapping
        }
    }

    /// Problems with the relationships' inverses, found when a container opens.
    var relationshipErrors: [SwiftDataError] {
        slots.filter { $0.relationship != nil }.compactMap { mapping(for: $0).error }
    }
}

extension Sequence {
    /// The elements without repeats, in the order first met, compared by `same`: a scan with no
    /// hashing, for the few distinct values among many (a save's entities, a constraint's columns).
    func distinct(by same: (Element, Element) -> Bool) -> [Element] {
        var distinct: [Element] = []
        for element in self where !distinct.contains(where: { same($0, element) }) { distinct.append(element) }
        return distinct
    }
}

/// A value guarded by a lock, for the few caches shared between tasks.
final class LockedValue<Value>: @unchecked Sendable {
    /// Unchecked: the lock already keeps accesses apart (a nested `withLock` would deadlock before
    /// it could overlap), and the runtime's check on top cost 1,260 instructions a snippet inserted
    /// (0.6%), most of them in `EntityLayout.mapping(for:)`, which every relationship write asks.
    @exclusivity(unchecked) private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

/// Lets ObjectGraph look inside `Optional` types and values without `Mirror`.
public protocol _OptionalValue {
    static var wrappedType: Any.Type { get }
    var wrappedAny: Any? { get }
    static func wrapping(_ value: Any?) -> Any
}

/// `type` itself, or the type it wraps when it is an `Optional`.
func nonOptional(_ type: Any.Type) -> Any.Type {
    (type as? any _OptionalValue.Type)?.wrappedType ?? type
}

extension Optional: _OptionalValue {
    public static var wrappedType: Any.Type { Wrapped.self }
    public var wrappedAny: Any? {
        switch self {
        case .some(let wrapped): wrapped
        case .none: nil
        }
    }
    public static func wrapping(_ value: Any?) -> Any {
        let typed: Wrapped? = value.flatMap { $0 as? Wrapped }
        return typed as Any
    }
}

/// Recognises `[Model]` at run time, for to-many relationships, and builds such arrays from models.
public protocol _ModelArray {
    static var modelType: (any PersistentModel.Type)? { get }
    static var _countKeyPath: AnyKeyPath { get }
    static var _isEmptyKeyPath: AnyKeyPath { get }
    static func _make(from models: [AnyObject]) -> Any
    var _models: [AnyObject] { get }
    /// Whether the array holds this very instance.
    func _containsIdentical(_ model: AnyObject) -> Bool
    var _count: Int { get }
    /// Calls `body` with the address of each instance the array holds.
    func _forEachMemberAddress(_ body: (UnsafeRawPointer) -> Void)
    /// Appends `model` to the array `value` holds, without copying the array; false when `value`
    /// holds no array of this type (nil, for an optional one).
    static func _append(_ model: AnyObject, toArrayIn value: inout Any, asOptional: Bool) -> Bool
}

/// The address of an instance, which names it as `===` does, without retaining it.
func identityAddress(of object: AnyObject) -> UnsafeRawPointer {
    UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
}

extension Array: _ModelArray {
    public static var modelType: (any PersistentModel.Type)? { Element.self as? any PersistentModel.Type }
    public static var _countKeyPath: AnyKeyPath { \[Element].count }
    public static var _isEmptyKeyPath: AnyKeyPath { \[Element].isEmpty }
    /// Loops, not `compactMap`: these run for a type known only at run time, where the standard
    /// library's generic `compactMap` looked up `Element?`'s metadata for every element (each row's
    /// tags on a list page). A model of exactly the element type is taken as it is, without the
    /// runtime's general cast.
    public static func _make(from models: [AnyObject]) -> Any {
        var made: [Element] = []
        made.reserveCapacity(models.count)
        for model in models {
            if let element = element(model) { made.append(element) }
        }
        return made
    }

    /// `model` as an element: taken as it is when its class is exactly `Element`, else by the cast.
    private static func element(_ model: AnyObject) -> Element? {
        // The dynamic type is `Element`, a class: the reference is one of that type.
        ObjectIdentifier(type(of: model)) == ObjectIdentifier(Element.self) ? unsafeBitCast(model, to: Element.self) : model as? Element
    }

    public var _models: [AnyObject] {
        var models: [AnyObject] = []
        models.reserveCapacity(count)
        for element in self { models.append(element as AnyObject) }
        return models
    }

    public func _containsIdentical(_ model: AnyObject) -> Bool {
        let target = identityAddress(of: model)
        guard Self.holdsReferences else { return contains { ($0 as AnyObject) === model } }
        return withUnsafeBytes { bytes in
            stride(from: 0, to: bytes.count, by: MemoryLayout<UnsafeRawPointer>.stride).contains {
                bytes.load(fromByteOffset: $0, as: UnsafeRawPointer.self) == target
            }
        }
    }

    public var _count: Int { count }

    public func _forEachMemberAddress(_ body: (UnsafeRawPointer) -> Void) {
        guard Self.holdsReferences else {
            for element in self { body(identityAddress(of: element as AnyObject)) }
            return
        }
        withUnsafeBytes { bytes in
            for offset in stride(from: 0, to: bytes.count, by: MemoryLayout<UnsafeRawPointer>.stride) {
                body(bytes.load(fromByteOffset: offset, as: UnsafeRawPointer.self))
            }
        }
    }

    /// Whether the elements are class references, one pointer each: reading them as pointers avoids
    /// a dynamic cast per element, which made linking into a large relationship slow.
    private static var holdsReferences: Bool {
        Element.self is AnyObject.Type && MemoryLayout<Element>.stride == MemoryLayout<UnsafeRawPointer>.stride
    }

    public static func _append(_ model: AnyObject, toArrayIn value: inout Any, asOptional: Bool) -> Bool {
        // Most slots hold the declared array itself, and most models are of exactly the element class:
        // both are taken as they are, without the runtime's general cast (a quarter of appending a
        // member). Compared with `self` (this array type) and `Element.self`, which this code,
        // generic over the element type, is handed; the other cases are in functions of their own,
        // since naming `[Element]` or `Element?` here had the runtime look up their metadata on every
        // call (650 of the 2,500 instructions an append took).
        guard ObjectIdentifier(type(of: model)) == ObjectIdentifier(Element.self), ModelStorage.isBoxed(value, as: self) else {
            return appendConverting(model, toArrayIn: &value, asOptional: asOptional)
        }
        var array = ModelStorage.sameTypeValue(value, as: self)
        // The slot lets go of its copy first, so that the array's buffer has one owner and grows in place.
        value = ()
        array.append(unsafeBitCast(model, to: Element.self))
        value = asOptional ? optionalValue(array) : array
        return true
    }

    /// `_append` for a model of a subclass, or a slot holding an optional array.
    @inline(never)
    private static func appendConverting(_ model: AnyObject, toArrayIn value: inout Any, asOptional: Bool) -> Bool {
        guard let element = element(model), var array = ModelStorage.unboxed(value, as: [Element].self) else { return false }
        value = ()
        array.append(element)
        value = asOptional ? optionalValue(array) : array
        return true
    }

    @inline(never)
    private static func optionalValue(_ array: [Element]) -> Any { Optional(array) as Any }
}

/// One column of an index `#Index` declares: a property's column, or the row's key.
/// Properties whose values together no two rows of an entity share (see `EntityLayout.uniquenessConstraints`).
struct UniquenessConstraint {
    /// Stored attributes and to-one relationships, in the order declared.
    let slots: [PropertySlot]
    /// Where each slot's value sits in a row's values, which follow `storedColumnSlots`.
    let columnPositions: [Int]
    let indexName: String

    /// A `.unique` property's own constraint (or a `#Unique` array that repeats it): the stored schema
    /// and the schema's description show it as the property's option, not as a `#Unique`.
    var isUniquePropertyMark: Bool { slots.count == 1 && slots[0].isUnique }

    /// Whether two rows can collide: SQLite's unique index never compares a NULL as equal, so a
    /// row with nil in any of the constraint's columns is free of it.
    func constrains(_ row: [DatabaseValue]) -> Bool {
        columnPositions.allSatisfy { !row[$0].isNull }
    }
}

struct IndexColumn: Equatable {
    /// The column's name in the table.
    let columnName: String
    /// The property's name, as `Schema.Entity.indices` reports it and the index's name spells it.
    let propertyName: String

    init(_ slot: PropertySlot) {
        columnName = slot.name
        propertyName = slot.name
    }

    private init(columnName: String, propertyName: String) {
        self.columnName = columnName
        self.propertyName = propertyName
    }

    static let rowKey = IndexColumn(columnName: "_pk", propertyName: "persistentModelID")
}
