import Foundation

/// Finds the column a `SortDescriptor`'s key path sorts on, including paths through to-one
/// relationships (`\.folder?.name`), the raw value of an enum (`\.kind?.rawValue`) and the members of a
/// `Codable` value (`\.address.city`).
///
/// Foundation on Linux offers no way to split a key path into components (`_kvcKeyPathString` is
/// Apple-only), and `SortDescriptor` keeps only the whole path. A key path's description lists its
/// components (`\Snippet.<computed 0x… (Optional<Folder>)>?.<computed 0x… (String)>?`), and each
/// component reads the same as in the one-component key path of that property, which `@Model`
/// gives in `schemaMetadata`. Matching those descriptions finds the properties the path goes through.
enum SortKeyPathResolver {
    static func orderTerm(for keyPath: AnyKeyPath, in layout: EntityLayout, alias: String = RowQuery.alias) -> String? {
        if let slot = layout.slot(for: keyPath), slot.isColumn {
            // `@Attribute(.codable)`: its JSON text does not sort as its values do.
            return slot.isOpaqueCodable ? nil : "\(alias.quotedIdentifier).\(slot.name.quotedIdentifier)"
        }
        let description = String(describing: keyPath)
        return resolve(components: description, in: layout, keyExpression: nil, alias: alias, depth: 0)
    }

    /// `path` is a key path description whose root is `layout`'s model; `keyExpression` is the SQL giving
    /// the row's key when the row is reached through a relationship (nil for the query's own row).
    private static func resolve(
        components path: String, in layout: EntityLayout, keyExpression: String?, alias: String, depth: Int
    ) -> String? {
        for slot in layout.slots {
            let own = String(describing: slot.keyPath)
            guard path.hasPrefix(own) else { continue }
            var rest = path.dropFirst(own.count)
            if rest.hasPrefix("?") { rest = rest.dropFirst() }
            let column = columnExpression(slot.name, in: layout, keyExpression: keyExpression, alias: alias, depth: depth)
            if rest.isEmpty {
                return (slot.isColumn && !slot.isOpaqueCodable) || slot.isForeignKey ? column : nil
            }
            guard rest.hasPrefix(".") else { continue }
            let remainder = String(rest.dropFirst())
            if slot.isForeignKey {
                let destination = layout.mapping(for: slot).destination
                return resolve(components: "\\\(Schema.entityName(for: destination.modelType)).\(remainder)",
                               in: destination, keyExpression: column, alias: alias, depth: depth + 1)
            }
            if let raw = rawValueType(of: slot), isSingleComponent(remainder, ofType: raw) {
                // Enums with a raw value are stored as that raw value: `.rawValue` sorts the column itself.
                return column
            }
            if slot.isColumn, !slot.isOpaqueCodable, slot.codec?.storesJSON == true, let member = jsonPath(of: remainder) {
                // A member of a `Codable` value stored as JSON (`\.address.city`): `json_extract` gives
                // numbers, which sort as numbers (a date is the number `JSONEncoder` writes), and text;
                // a missing member or a nil value is NULL, first in forward order, as nil sorts.
                return "json_extract(\(column), '\(member)')"
            }
        }
        return nil
    }

    /// The JSON path of the members `remainder` (`city`, `address.city`, `address?.city`) names, when
    /// each is a plain stored property: a struct's stored properties are the components a key path
    /// describes by name. The path is written into the SQL, so only names of letters, digits and
    /// underscores are taken.
    private static func jsonPath(of remainder: String) -> String? {
        let names = remainder.split(separator: ".", omittingEmptySubsequences: false).map { name in
            name.hasSuffix("?") ? name.dropLast() : name
        }
        let isName = { (name: Substring) in
            guard let first = name.first, first.isASCII, first.isLetter || first == "_" else { return false }
            return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        }
        guard !names.isEmpty, names.allSatisfy(isName) else { return nil }
        return "$." + names.joined(separator: ".")
    }

    private static func columnExpression(
        _ name: String, in layout: EntityLayout, keyExpression: String?, alias: String, depth: Int
    ) -> String {
        guard let keyExpression else { return "\(alias.quotedIdentifier).\(name.quotedIdentifier)" }
        let inner = "s\(depth)".quotedIdentifier
        return "(SELECT \(inner).\(name.quotedIdentifier) FROM \(layout.name.quotedIdentifier) AS \(inner) "
            + "WHERE \(inner).\"_pk\" = \(keyExpression))"
    }

    private static func rawValueType(of slot: PropertySlot) -> Any.Type? {
        var type = slot.valueType
        if let optional = type as? any _OptionalValue.Type { type = optional.wrappedType }
        guard slot.isColumn, let raw = type as? any RawRepresentable.Type else { return nil }
        return raw._rawValueType
    }

    private static func isSingleComponent(_ remainder: String, ofType type: Any.Type) -> Bool {
        var component = Substring(remainder)
        if component.hasSuffix("?") { component = component.dropLast() }
        return !component.contains(">.") && component.hasSuffix("(\(type))>")
    }
}
