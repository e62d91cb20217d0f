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
    /// Nil when the path names no column it can sort on; throws when it names a member of a
    /// `Codable` value that `store`'s JSON keeps under another key (`JSONMemberNames`).
    static func orderTerm(
        for keyPath: AnyKeyPath, in layout: EntityLayout, store: SQLiteStore, alias: String = RowQuery.alias
    ) throws -> String? {
        if let slot = layout.slot(for: keyPath), slot.isColumn {
            // `@Attribute(.codable)`: its JSON text does not sort as its values do (nor a transformer's bytes).
            return slot.isOpaque ? nil : try ordered("\(alias.quotedIdentifier).\(slot.name.quotedIdentifier)", slot: slot, in: layout)
        }
        let description = String(describing: keyPath)
        return try resolve(components: description, in: layout, store: store, keyExpression: nil, alias: alias, depth: 0)
    }

    /// `path` is a key path description whose root is `layout`'s model; `keyExpression` is the SQL giving
    /// the row's key when the row is reached through a relationship (nil for the query's own row).
    private static func resolve(
        components path: String, in layout: EntityLayout, store: SQLiteStore, keyExpression: String?, alias: String, depth: Int
    ) throws -> String? {
        for slot in layout.slots {
            let own = String(describing: slot.keyPath)
            guard path.hasPrefix(own) else { continue }
            var rest = path.dropFirst(own.count)
            if rest.hasPrefix("?") { rest = rest.dropFirst() }
            let column = columnExpression(slot.name, in: layout, keyExpression: keyExpression, alias: alias, depth: depth)
            if rest.isEmpty {
                if slot.isForeignKey { return column }
                return slot.isColumn && !slot.isOpaque ? try ordered(column, slot: slot, in: layout) : nil
            }
            guard rest.hasPrefix(".") else { continue }
            let remainder = String(rest.dropFirst())
            if slot.isForeignKey {
                let destination = layout.mapping(for: slot).destination
                return try resolve(components: "\\\(Schema.entityName(for: destination.modelType)).\(remainder)",
                                   in: destination, store: store, keyExpression: column, alias: alias, depth: depth + 1)
            }
            if let raw = rawValueType(of: slot), isSingleComponent(remainder, ofType: raw) {
                // Enums with a raw value are stored as that raw value: `.rawValue` sorts the column itself.
                return column
            }
            if slot.isColumn, !slot.isOpaque, slot.codec?.storesJSON == true, let members = memberNames(in: remainder) {
                // A member of a `Codable` value stored as JSON (`\.address.city`): `json_extract` gives
                // numbers, which sort as numbers (a date is the number `JSONEncoder` writes), and text;
                // a missing member or a nil value is NULL, first in forward order, as nil sorts.
                try requireStoredUnderTheirNames(members, of: slot, in: layout, store: store)
                let member = "json_extract(\(column), '$.\(members.joined(separator: "."))')"
                // Ordered as a predicate compares it: a `CaseIterable` member by rank.
                guard let type = memberType(members, of: slot) else { return member }
                return try ordered(member, type: type, naming: ([slot.name] + members).joined(separator: "."), in: layout)
            }
        }
        return nil
    }

    /// The term that sorts an attribute's column as its type's `<` orders the values (`StoredOrder`):
    /// the column itself, or a `CaseIterable` type's ranks; throws for a type whose stored form does
    /// not sort as its values do (a struct stored as JSON, an enum that is not `CaseIterable`).
    private static func ordered(_ column: String, slot: PropertySlot, in layout: EntityLayout) throws -> String {
        try ordered(column, type: slot.wrappedValueType, naming: slot.name, in: layout)
    }

    private static func ordered(_ term: String, type: Any.Type, naming name: String, in layout: EntityLayout) throws -> String {
        switch StoredOrder.of(type) {
        case .asStored:
            return term
        case .ranked(let cases):
            return StoredOrder.rankSQL(term, among: cases)
        case .unordered(let reason):
            throw SwiftDataError(.unsupportedSortDescriptor, "cannot sort \(layout.name) by \(name): \(reason)", entity: layout.name)
        }
    }

    /// The type of the member `members` names inside the attribute's value, as `JSONMemberNames` saw
    /// it; nil where it has not seen it.
    private static func memberType(_ members: [String], of slot: PropertySlot) -> Any.Type? {
        var type: Any.Type? = slot.wrappedValueType
        for member in members {
            type = type.flatMap { JSONMemberNames.shared.memberType(member, of: nonOptional($0)) }
        }
        return type
    }

    /// Follows the members down from the attribute's type, each by the type `JSONMemberNames` saw it
    /// hold, and throws at the first that stored JSON showed under another key: sorting on it would
    /// sort on NULL.
    private static func requireStoredUnderTheirNames(
        _ members: [String], of slot: PropertySlot, in layout: EntityLayout, store: SQLiteStore
    ) throws {
        var type = slot.wrappedValueType
        for member in members {
            if let reason = store.reasonMemberIsUnreadable(member, of: type) {
                throw SwiftDataError(
                    .unsupportedSortDescriptor,
                    "cannot sort \(layout.name) by \(([slot.name] + members).joined(separator: ".")): \(reason)",
                    entity: layout.name)
            }
            guard let next = JSONMemberNames.shared.memberType(member, of: type) else { return }
            type = next
        }
    }

    /// The members `remainder` (`city`, `address.city`, `address?.city`) names, when each is a plain
    /// stored property: a struct's stored properties are the components a key path describes by
    /// name. They are written into the SQL as a JSON path, so only names of letters, digits and
    /// underscores are taken.
    private static func memberNames(in remainder: String) -> [String]? {
        let names = remainder.split(separator: ".", omittingEmptySubsequences: false).map { name in
            name.hasSuffix("?") ? name.dropLast() : name
        }
        let isName = { (name: Substring) in
            guard let first = name.first, first.isASCII, first.isLetter || first == "_" else { return false }
            return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
        }
        guard !names.isEmpty, names.allSatisfy(isName) else { return nil }
        return names.map(String.init)
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
