import Foundation

extension Schema {
    /// A stored attribute of an entity. `@Attribute(...)` builds one for `schemaMetadata`.
    public final class Attribute: SchemaProperty, Hashable, @unchecked Sendable {
        public internal(set) var name: String
        public let options: [Option]
        let declaredOriginalName: String?
        public let hashModifier: String?
        public internal(set) var valueType: Any.Type = Any.self
        public internal(set) var defaultValue: Any?

        public init(_ options: Option..., originalName: String? = nil, hashModifier: String? = nil) {
            self.name = ""
            self.options = options
            self.declaredOriginalName = originalName
            self.hashModifier = hashModifier
        }

        public init(name: String, originalName: String? = nil, options: [Option] = [], valueType: Any.Type,
                    defaultValue: Any? = nil, hashModifier: String? = nil) {
            self.name = name
            self.options = options
            self.declaredOriginalName = originalName
            self.hashModifier = hashModifier
            self.valueType = valueType
            self.defaultValue = defaultValue
        }

        public var originalName: String { declaredOriginalName ?? name }
        public var isAttribute: Bool { true }
        public var isRelationship: Bool { false }
        public var isTransient: Bool { options.contains(.transient) || options.contains(.ephemeral) }
        public var isOptional: Bool { valueType is any _OptionalValue.Type }
        public var isUnique: Bool { options.contains(.unique) }
        public var isExternalStorage: Bool { options.contains(.externalStorage) }
        /// Stored as its `Codable` representation, opaque to predicates and sorts (`.codable`).
        var isOpaqueCodable: Bool { options.contains(.codable) }
        /// The transformer `.transformable(by:)` names: the value is stored as the `Data` it makes.
        var transformer: TransformerReference? { options.lazy.compactMap(\.transformer).first }
        public var description: String { "Attribute \(name): \(valueType)\(options.isEmpty ? "" : " \(options)")" }

        public static func == (lhs: Attribute, rhs: Attribute) -> Bool {
            lhs.name == rhs.name && lhs.options == rhs.options && lhs.valueType == rhs.valueType
                && lhs.declaredOriginalName == rhs.declaredOriginalName
        }

        public func hash(into hasher: inout Hasher) { hasher.combine(name) }

        /// The value transformer `.transformable(by:)` names: a type, by its full name, or a name it
        /// was registered under.
        public enum TransformerReference: Hashable, Sendable {
            case type(String)
            case name(String)
        }

        /// How an attribute is stored, as in SwiftData's `Schema.Attribute.Option`.
        public struct Option: Hashable, Sendable, CustomStringConvertible {
            let name: String
            var transformer: TransformerReference?
            public var description: String { name }

            init(name: String, transformer: TransformerReference? = nil) {
                self.name = name
                self.transformer = transformer
            }

            /// The value is stored as the `Data` an instance of `transformerType` turns it into, and
            /// read back through its `reverseTransformedValue(_:)`: for a type that is not `Codable`.
            /// The column is opaque, as with `.codable`: predicates and sort descriptors cannot read it.
            public static func transformable(by transformerType: ValueTransformer.Type) -> Option {
                let key = String(reflecting: transformerType)
                TransformerRegistry.shared.register(transformerType, as: key)
                return Option(name: "transformable(by: \(key))", transformer: .type(key))
            }

            /// As `transformable(by:)` with a type, through the transformer registered under `name`
            /// (`ValueTransformer.setValueTransformer(_:forName:)`) when the container is made.
            public static func transformable(by name: String) -> Option {
                Option(name: "transformable(by: \"\(name)\")", transformer: .name(name))
            }

            /// The value is unique among all models of the entity; inserting a duplicate updates the saved model.
            public static let unique = Option(name: "unique")
            /// Large values are kept in files beside the store instead of in the database row.
            public static let externalStorage = Option(name: "externalStorage")
            /// The value lives in memory only and is never written to the store.
            public static let transient = Option(name: "transient")
            /// Changes are tracked but the value is not persisted (SwiftData's name for transient).
            public static let ephemeral = Option(name: "ephemeral")
            /// The value (a `String`) is indexed for full-text search: `ModelContext.search` finds and
            /// ranks models by it. (SwiftData hands it to Spotlight, which Linux does not have.)
            public static let spotlight = Option(name: "spotlight")
            /// Kept for source compatibility; ObjectGraph has no cloud store.
            public static let allowsCloudEncryption = Option(name: "allowsCloudEncryption")
            /// The value is kept in the persistent history when the model is deleted: read it back as
            /// `HistoryDelete.tombstone[\.property]`.
            public static let preserveValueOnDeletion = Option(name: "preserveValueOnDeletion")
            /// The value's `Codable` representation is stored as one opaque value (JSON text), whatever
            /// the type, as SwiftData's option (2026) does: predicates and sort descriptors cannot read
            /// it (`unsupportedPredicate`, `unsupportedSortDescriptor`), and a change of its type needs
            /// no migration stage, as long as the stored values still decode as the new type.
            public static let codable = Option(name: "codable")
        }
    }

    /// A relationship of an entity to another. `@Relationship(...)` builds one for `schemaMetadata`.
    public final class Relationship: SchemaProperty, Hashable, @unchecked Sendable {
        public internal(set) var name: String
        public let options: [Option]
        public let deleteRule: DeleteRule
        public let minimumModelCount: Int?
        public let maximumModelCount: Int?
        let declaredOriginalName: String?
        public let inverseKeyPath: AnyKeyPath?
        public let hashModifier: String?
        public internal(set) var valueType: Any.Type = Any.self
        public internal(set) var destination: String = ""
        public internal(set) var isToOneRelationship = true
        public internal(set) var inverseName: String?
        var destinationType: (any PersistentModel.Type)?

        public init(
            _ options: Option...,
            deleteRule: DeleteRule = .nullify,
            minimumModelCount: Int? = 0,
            maximumModelCount: Int? = 0,
            originalName: String? = nil,
            inverse: AnyKeyPath? = nil,
            hashModifier: String? = nil
        ) {
            self.name = ""
            self.options = options
            self.deleteRule = deleteRule
            self.minimumModelCount = minimumModelCount
            self.maximumModelCount = maximumModelCount
            self.declaredOriginalName = originalName
            self.inverseKeyPath = inverse
            self.hashModifier = hashModifier
        }

        public var keypath: AnyKeyPath? { nil }
        public var originalName: String { declaredOriginalName ?? name }
        public var isAttribute: Bool { false }
        public var isRelationship: Bool { true }
        public var isTransient: Bool { false }
        public var isOptional: Bool { valueType is any _OptionalValue.Type }
        public var isUnique: Bool { options.contains(.unique) }
        public var description: String {
            "Relationship \(name) -> \(isToOneRelationship ? destination : "[\(destination)]") (\(deleteRule))"
        }

        public static func == (lhs: Relationship, rhs: Relationship) -> Bool {
            lhs.name == rhs.name && lhs.destination == rhs.destination && lhs.deleteRule == rhs.deleteRule
                && lhs.isToOneRelationship == rhs.isToOneRelationship
        }

        public func hash(into hasher: inout Hasher) { hasher.combine(name) }

        public struct Option: Hashable, Sendable {
            let name: String
            public static let unique = Option(name: "unique")
        }

        /// What deleting a model does to the models on the other side of the relationship.
        public enum DeleteRule: String, Codable, Hashable, Sendable {
            case cascade, deny, noAction, nullify
        }
    }
}
