import Foundation

/// The set of entities a ``ModelContainer`` stores, built from model types, as in SwiftData.
///
/// ```swift
/// let schema = Schema([Snippet.self, Folder.self], version: Schema.Version(1, 0, 0))
/// ```
///
/// Models reachable through relationships are added even when not listed.
///
/// ## Topics
/// - ``Entity``, ``Attribute``, ``Relationship``, ``PropertyMetadata``, ``Version``
public final class Schema: Hashable, CustomStringConvertible, @unchecked Sendable {
    /// The entities, in the order their types were first met.
    public let entities: [Entity]
    public let version: Version
    /// The model types, by entity name.
    let modelTypes: [String: any PersistentModel.Type]
    /// Problems found while building the schema; ``ModelContainer`` throws the first one.
    let buildErrors: [SwiftDataError]

    public var entitiesByName: [String: Entity] {
        Dictionary(uniqueKeysWithValues: entities.map { ($0.name, $0) })
    }

    public init(_ types: [any PersistentModel.Type], version: Version = Version(1, 0, 0)) {
        var entities: [Entity] = []
        var modelTypes: [String: any PersistentModel.Type] = [:]
        var errors: [SwiftDataError] = []
        var queue = types
        while !queue.isEmpty {
            let type = queue.removeFirst()
            let name = Schema.entityName(for: type)
            if modelTypes[name] != nil { continue }
            modelTypes[name] = type
            let entity = Entity(modelType: type)
            entities.append(entity)
            errors.append(contentsOf: entity.buildErrors)
            errors.append(contentsOf: entity.layout.relationshipErrors)
            queue.append(contentsOf: entity.relationships.compactMap(\.destinationType))
        }
        errors.append(contentsOf: StoreNames.collisions(in: entities))
        self.entities = entities
        self.modelTypes = modelTypes
        self.version = version
        self.buildErrors = errors
    }

    public convenience init(_ types: any PersistentModel.Type..., version: Version = Version(1, 0, 0)) {
        self.init(types, version: version)
    }

    /// The schema of one version of a ``VersionedSchema``.
    public convenience init(versionedSchema: any VersionedSchema.Type) {
        self.init(versionedSchema.models, version: versionedSchema.versionIdentifier)
    }

    public func entity<T: PersistentModel>(for type: T.Type) -> Entity? {
        entitiesByName[Schema.entityName(for: type)]
    }

    /// The entity name of a model type: its class name, without the names of enclosing types.
    ///
    /// Kept per type once made: `String(describing:)` asks the runtime for the type's name, a few
    /// microseconds, and every fetch and count asks for its entity's layout by this name (a list page
    /// asks some twenty times, a hundredth of its time).
    public static func entityName<T>(for type: T.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = entityNames.withLock({ $0[key] }) { return name }
        let name = String(describing: type)
        // Bounded by the types a program declares: nothing to evict.
        entityNames.withLock { $0[key] = name }
        return name
    }

    /// The names made so far, by type; any thread may fetch.
    private static let entityNames = LockedValue<[ObjectIdentifier: String]>([:])

    public var description: String { SchemaDescription(schema: self).text }

    public static func == (lhs: Schema, rhs: Schema) -> Bool {
        lhs.version == rhs.version && lhs.entities.map(\.name) == rhs.entities.map(\.name)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(entities.map(\.name))
    }
}

extension Schema {
    /// The indexes of a model type, in the form SwiftData's typed `#Index` declares them. Only its
    /// `Types` are used: the macro reads the key paths out of them when it expands.
    public struct Index<Model> {
        /// One index of `#Index<Model>(.binary([\.a]), .rtree([\.b, \.c]))`.
        public enum Types<Root> {
            /// An ordinary index, as the array form of `#Index` declares.
            case binary([PartialKeyPath<Root>])
            /// SwiftData's R-tree index, made here as an ordinary index on the same columns (see `#Index`).
            case rtree([PartialKeyPath<Root>])
        }
    }

    /// A semantic version of a schema, as in SwiftData's `Schema.Version(1, 2, 0)`.
    public struct Version: Codable, Hashable, Comparable, Sendable, CustomStringConvertible {
        public let major: Int
        public let minor: Int
        public let patch: Int

        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }

        public static func < (lhs: Version, rhs: Version) -> Bool {
            (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }

        public var description: String { "\(major).\(minor).\(patch)" }
    }

    /// One stored property of a model, as `@Model` describes it in `schemaMetadata`.
    public struct PropertyMetadata: @unchecked Sendable {
        public let name: String
        public let keypath: AnyKeyPath
        public let defaultValue: Any?
        public let metadata: (any SchemaProperty)?
        /// True for `let` properties and for `var`s whose type is inferred from their initial value:
        /// Swift allows no accessors on those, so their value lives in the instance and the context
        /// reads it through `keypath` when it saves. `@Model` sets it; SwiftData has no such flag.
        public let isStoredInInstance: Bool

        public init(name: String, keypath: AnyKeyPath, defaultValue: Any?, metadata: (any SchemaProperty)?) {
            self.init(name: name, keypath: keypath, defaultValue: defaultValue, metadata: metadata,
                      isStoredInInstance: false)
        }

        public init(name: String, keypath: AnyKeyPath, defaultValue: Any?, metadata: (any SchemaProperty)?,
                    isStoredInInstance: Bool) {
            self.name = name
            self.keypath = keypath
            self.defaultValue = defaultValue
            self.metadata = metadata
            self.isStoredInInstance = isStoredInInstance
        }
    }
}

/// What every property of a ``Schema/Entity`` tells about itself.
public protocol SchemaProperty: AnyObject, CustomStringConvertible {
    var name: String { get }
    var originalName: String { get }
    var valueType: Any.Type { get }
    var isAttribute: Bool { get }
    var isRelationship: Bool { get }
    var isTransient: Bool { get }
    var isOptional: Bool { get }
    var isUnique: Bool { get }
}
