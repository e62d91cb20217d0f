import Foundation

/// Declares the name a model class had in an earlier version, so that a lightweight migration renames
/// its table instead of dropping one and creating another. SwiftData has no such declaration.
///
/// ```swift
/// @Model final class Note { var text: String = "" }
/// extension Note: OriginallyNamedModel { static var originalEntityName: String { "Memo" } }
/// ```
public protocol OriginallyNamedModel: PersistentModel {
    static var originalEntityName: String { get }
}

extension Schema {
    /// One model type as the store sees it: its attributes and relationships.
    public final class Entity: Hashable, CustomStringConvertible, @unchecked Sendable {
        public let name: String
        /// The name the entity had in an earlier version, when its class was renamed.
        public let originalName: String?
        public let attributes: [Attribute]
        public let relationships: [Relationship]
        let layout: EntityLayout

        init(modelType: any PersistentModel.Type) {
            layout = EntityLayout.of(modelType)
            name = layout.name
            originalName = (modelType as? any OriginallyNamedModel.Type)?.originalEntityName
            attributes = layout.slots.compactMap(\.attribute)
            relationships = layout.slots.compactMap(\.relationship)
        }

        var buildErrors: [SwiftDataError] { layout.buildErrors }

        public var properties: [any SchemaProperty] {
            layout.slots.map { $0.attribute ?? $0.relationship! as any SchemaProperty }
        }
        public var storedProperties: [any SchemaProperty] { properties.filter { !$0.isTransient } }
        public var attributesByName: [String: Attribute] {
            Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0) })
        }
        public var relationshipsByName: [String: Relationship] {
            Dictionary(uniqueKeysWithValues: relationships.map { ($0.name, $0) })
        }
        public var storedPropertiesByName: [String: any SchemaProperty] {
            Dictionary(uniqueKeysWithValues: storedProperties.map { ($0.name, $0) })
        }
        /// Each property marked `.unique` is a constraint of its own; each array of `#Unique` is one, its
        /// properties' names in the order written.
        public var uniquenessConstraints: [[String]] {
            layout.uniquenessConstraints.map { $0.slots.map(\.name) }
        }

        /// The indexes `#Index` declares, each the names of its properties in order, as in SwiftData.
        public var indices: [[String]] {
            layout.indexes.map { $0.map(\.propertyName) }
        }

        public var description: String { SchemaDescription.describe(self) }

        public static func == (lhs: Entity, rhs: Entity) -> Bool {
            lhs.name == rhs.name && lhs.attributes == rhs.attributes && lhs.relationships == rhs.relationships
        }

        public func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }
}
