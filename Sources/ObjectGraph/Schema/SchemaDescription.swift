import Foundation

/// The text form of a schema: one block per entity, one line per property.
struct SchemaDescription {
    let schema: Schema

    var text: String {
        "Schema \(schema.version)\n" + schema.entities.map(Self.describe).joined(separator: "\n")
    }

    static func describe(_ entity: Schema.Entity) -> String {
        var lines = ["\(entity.name)"]
        for slot in entity.layout.slots {
            if let relationship = slot.relationship {
                let target = relationship.isToOneRelationship ? relationship.destination : "[\(relationship.destination)]"
                lines.append("  \(slot.name) -> \(target)\(relationship.isOptional ? "?" : "") (\(relationship.deleteRule.rawValue))")
            } else if let attribute = slot.attribute {
                let options = attribute.options.isEmpty ? "" : " [\(attribute.options.map(\.description).joined(separator: ", "))]"
                lines.append("  \(slot.name): \(slot.valueType)\(options)")
            }
        }
        // A `.unique` property shows the option on its own line; the constraints of `#Unique` follow.
        for constraint in entity.layout.uniquenessConstraints where !constraint.isUniquePropertyMark {
            lines.append("  #Unique [\(constraint.slots.map(\.name).joined(separator: ", "))]")
        }
        for index in entity.indices {
            lines.append("  #Index [\(index.joined(separator: ", "))]")
        }
        return lines.joined(separator: "\n")
    }
}
