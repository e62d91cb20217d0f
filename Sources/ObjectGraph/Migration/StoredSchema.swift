import Foundation

/// The schema as recorded in a store's metadata table, so that the next open can diff it against the
/// code's schema: every entity, and for each property how it is stored.
struct StoredSchema: Codable, Equatable {
    struct Property: Codable, Equatable {
        var name: String
        var originalName: String
        /// "attribute", "toOne" or "toMany".
        var kind: String
        /// The Swift type, as `String(describing:)` prints it.
        var type: String
        var isOptional: Bool
        var options: [String]
        var destination: String?
        var deleteRule: String?
        /// True when the property has a column in the entity's table.
        var hasColumn: Bool?
        /// The join table a to-many relationship reads, and whether this side writes it.
        var joinTable: String?
        var writesJoinTable: Bool?

        var isUnique: Bool { options.contains("unique") }
        var isExternalStorage: Bool { options.contains("externalStorage") }
        var isOpaqueCodable: Bool { options.contains("codable") }
        /// The type without `Optional<…>`, to tell a type change from a change of optionality.
        var baseType: String { Self.unwrapped(type) }

        static func unwrapped(_ type: String) -> String {
            if type.hasPrefix("Optional<") && type.hasSuffix(">") {
                return String(type.dropFirst("Optional<".count).dropLast())
            }
            return type
        }
    }

    struct Entity: Codable, Equatable {
        var name: String
        var properties: [Property]
        /// The constraints of `#Unique`, each its properties' names; nil for none, as stores recorded
        /// before `#Unique` existed have it. A `.unique` property is recorded in its options instead.
        var uniqueness: [[String]]?

        func property(named name: String) -> Property? { properties.first { $0.name == name } }
    }

    var version: String
    var entities: [Entity]

    func entity(named name: String) -> Entity? { entities.first { $0.name == name } }

    var schemaVersion: Schema.Version? {
        let parts = version.split(separator: ".").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        return Schema.Version(parts[0], parts[1], parts[2])
    }

    init(schema: Schema) {
        version = schema.version.description
        entities = schema.entities.map { entity in
            let declared = entity.layout.uniquenessConstraints
                .filter { !$0.isUniquePropertyMark }
                .map { $0.slots.map(\.name) }
            return Entity(
                name: entity.name, properties: entity.layout.slots.map { Self.property(of: $0, in: entity.layout) },
                uniqueness: declared.isEmpty ? nil : declared)
        }
    }

    private static func property(of slot: PropertySlot, in layout: EntityLayout) -> Property {
        if let relationship = slot.relationship {
            let table = layout.mapping(for: slot).joinTable
            return Property(
                name: slot.name, originalName: relationship.originalName,
                kind: relationship.isToOneRelationship ? "toOne" : "toMany",
                type: "\(slot.valueType)", isOptional: relationship.isOptional, options: slot.isUnique ? ["unique"] : [],
                destination: relationship.destination, deleteRule: relationship.deleteRule.rawValue,
                hasColumn: slot.isForeignKey, joinTable: table?.name, writesJoinTable: table?.isWriter)
        }
        let attribute = slot.attribute
        return Property(
            name: slot.name, originalName: attribute?.originalName ?? slot.name, kind: "attribute",
            type: "\(slot.valueType)", isOptional: attribute?.isOptional ?? false,
            options: attribute?.options.map(\.description) ?? [], destination: nil, deleteRule: nil,
            hasColumn: slot.isColumn, joinTable: nil, writesJoinTable: nil)
    }
}
