import Foundation
import GRDB

/// Translates a Foundation `Predicate` into a SQL condition on one entity's table.
///
/// Each `PredicateExpressions` node type translates itself (see `PredicateExpressions+SQL.swift`),
/// as swift-foundation's own conversions do. Sub-trees without a variable are evaluated once and
/// bound as parameters: no value is ever spliced into the SQL text. What cannot be translated
/// throws `SwiftDataError.unsupportedPredicate`, naming the node; nothing falls back to filtering
/// a whole table in memory.
enum PredicateTranslator {
    /// `store` is the one the SQL will run on: what its JSON columns hold tells which members of a
    /// `Codable` value can be read by name (`JSONMemberNames`).
    static func translate<T: PersistentModel>(
        _ predicate: Predicate<T>, layout: EntityLayout, store: SQLiteStore, use: ConditionUse = .testingRows
    ) throws -> SQLFragment {
        let translation = PredicateTranslation(layout: layout, store: store, use: use)
        translation.bind(predicate.variable.key, to: .entity(EntityReference(root: layout)))
        return try translation.condition(predicate.expression)
    }
}

/// How the statement a condition goes into reads the rows it selects, which decides how a to-many
/// test is best written. Both forms select the same rows.
enum ConditionUse {
    /// Rows in an order, often only the first few (a fetch's window): each row looks up its own
    /// related rows, so that a walk in the sort's order can stop at the limit.
    case testingRows
    /// Every row that matches (a count, counts per group, without a full-text match driving them):
    /// a test on a few related rows named by a unique value reads their owners once, as a set.
    case collectingMatches
}

/// A model reached by a predicate: the table it is in, and an SQL expression giving its primary key.
struct EntityReference {
    let layout: EntityLayout
    /// The table alias when the model's own row is in the query (the root, or an element of a
    /// to-many subquery); nil when the model is reached through a key, and read by subquery.
    let alias: String?
    let key: SQLFragment

    init(root layout: EntityLayout, alias: String = RowQuery.alias) {
        self.layout = layout
        self.alias = alias
        self.key = SQLFragment("\(alias.quotedIdentifier).\"_pk\"")
    }

    init(layout: EntityLayout, key: SQLFragment) {
        self.layout = layout
        self.alias = nil
        self.key = key
    }
}

extension SQLFragment {
    /// True for a lone bound NULL: a captured nil.
    var isNullParameter: Bool { sql == "?" && arguments.count == 1 && arguments[0].isNull }
}

/// A to-many relationship reached by a predicate, with any `filter` applied to it.
struct ToManyReference {
    let mapping: RelationshipMapping
    let ownerKey: SQLFragment
    /// The owner's row is in the query (`ownerKey` is its alias's key, never NULL), rather than
    /// reached through a foreign key that may be NULL.
    let ownerIsRowInQuery: Bool
    var filters: [(variable: PredicateExpressions.VariableID, expression: Any)] = []
}

/// What a translated sub-expression stands for.
enum SQLTerm {
    /// A SQL value; `codec` encodes Swift values compared with it, when it is a stored attribute.
    case value(SQLFragment, codec: AttributeCodec?)
    case condition(SQLFragment)
    case entity(EntityReference)
    case toMany(ToManyReference)
    /// A model's `persistentModelID`: its key, and its entity's name.
    case identifier(SQLFragment, entity: String)
    /// A Swift value computed from captured values, not yet encoded.
    case constant(Any)
}

/// The state of one translation: variables in scope and aliases in use.
final class PredicateTranslation {
    let rootLayout: EntityLayout
    let store: SQLiteStore
    let use: ConditionUse
    private var variables: [PredicateExpressions.VariableID: SQLTerm] = [:]
    private var aliasCounter = 0

    init(layout: EntityLayout, store: SQLiteStore, use: ConditionUse = .testingRows) {
        self.rootLayout = layout
        self.store = store
        self.use = use
    }

    func bind(_ variable: PredicateExpressions.VariableID, to term: SQLTerm) {
        variables[variable] = term
    }

    func lookup(_ variable: PredicateExpressions.VariableID) throws -> SQLTerm {
        guard let term = variables[variable] else {
            throw SwiftDataError(.unsupportedPredicate, "the predicate uses a variable that is not in scope")
        }
        return term
    }

    func newAlias() -> String {
        aliasCounter += 1
        return "t\(aliasCounter)"
    }

    // MARK: Translating nodes

    /// Translates any node: by its own conformance, or, when it has no variable, by evaluating it once.
    func term(_ expression: Any) throws -> SQLTerm {
        if let node = expression as? any SQLTranslatableExpression {
            return try node.sqlTerm(in: self)
        }
        if let constant = try? Self.evaluateWithoutVariables(expression) {
            return .constant(constant)
        }
        throw unsupported(expression)
    }

    /// Translates a node that must be a condition (an `&&` operand, the predicate itself).
    func condition(_ expression: Any) throws -> SQLFragment {
        try condition(of: term(expression), from: expression)
    }

    func condition(of term: SQLTerm, from expression: Any) throws -> SQLFragment {
        switch term {
        case .condition(let fragment):
            return fragment
        case .value(let fragment, _):
            return SQLFragment("(\(fragment.sql) IS 1)", fragment.arguments)
        case .constant(let value):
            guard let flag = value as? Bool else { throw unsupported(expression) }
            return SQLFragment(flag ? "1" : "0")
        default:
            throw unsupported(expression)
        }
    }

    /// Translates a node that must be a SQL value; constants are encoded with `codec` when given.
    func value(_ expression: Any, codec: AttributeCodec? = nil) throws -> (fragment: SQLFragment, codec: AttributeCodec?) {
        try value(of: term(expression), from: expression, codec: codec)
    }

    func value(of term: SQLTerm, from expression: Any, codec: AttributeCodec? = nil) throws -> (fragment: SQLFragment, codec: AttributeCodec?) {
        switch term {
        case .value(let fragment, let ownCodec):
            return (fragment, ownCodec)
        case .condition(let fragment):
            // A `Bool` is true or false, never nil; SQL's test may be NULL where Swift's is false
            // (`$0.folder?.name == "Work"` for a snippet without a folder), which a WHERE clause reads
            // as false but a comparison (`… == false`) passed on. A `Bool?` (`$0.folder?.name.contains("x")`)
            // stays NULL where it is nil.
            guard Self.isBool(expression) else { return (fragment, nil) }
            return (SQLFragment("COALESCE(\(fragment.sql), 0)", fragment.arguments), nil)
        case .constant(let constant):
            return (SQLFragment("?", [try encode(constant, with: codec)]), codec)
        case .identifier(let key, _):
            return (key, nil)
        case .entity(let reference):
            return (reference.key, nil)
        case .toMany:
            throw unsupported(expression)
        }
    }

    /// Whether a predicate expression's Swift value is a `Bool`, not a `Bool?`.
    static func isBool(_ expression: Any) -> Bool {
        guard let expression = expression as? any PredicateExpression else { return false }
        func output<Expression: PredicateExpression>(of _: Expression) -> Any.Type { Expression.Output.self }
        return output(of: expression) == Bool.self
    }

    /// Encodes a captured value for comparison with a column: with the column's codec, so that an
    /// enum case becomes its raw value and a date its number, or else by the value's own type.
    func encode(_ constant: Any, with codec: AttributeCodec?) throws -> DatabaseValue {
        if let optional = constant as? any _OptionalValue {
            guard let wrapped = optional.wrappedAny else { return .null }
            if let codec, codec.isOptional { return try codec.encode(constant) }
            return try encode(wrapped, with: codec)
        }
        if let codec {
            do {
                return try codec.encode(constant)
            } catch {
                if let codec = AttributeCodec.make(for: type(of: constant)) { return try codec.encode(constant) }
                throw error
            }
        }
        if let identifier = constant as? PersistentIdentifier {
            // Another store's key names none of this store's rows: NULL, which no key equals.
            guard identifier.storeIdentifier == store.identifier else { return .null }
            return identifier.primaryKey?.databaseValue ?? .null
        }
        guard let codec = AttributeCodec.make(for: type(of: constant)) else {
            throw SwiftDataError(.unsupportedPredicate, "a captured value of type \(type(of: constant)) cannot be compared in SQL")
        }
        return try codec.encode(constant)
    }

    func unsupported(_ expression: Any, detail: String? = nil) -> SwiftDataError {
        let name = String(describing: type(of: expression))
        return SwiftDataError(
            .unsupportedPredicate,
            "a predicate on \(rootLayout.name) uses \(name), which ObjectGraph cannot translate to SQL"
                + (detail.map { ": \($0)" } ?? ""),
            entity: rootLayout.name)
    }

    static func evaluateWithoutVariables(_ expression: Any) throws -> Any {
        guard let expression = expression as? any PredicateExpression else {
            throw SwiftDataError(.unsupportedPredicate, "\(type(of: expression)) is not a predicate expression")
        }
        return try evaluate(expression)
    }

    private static func evaluate<E: PredicateExpression>(_ expression: E) throws -> Any {
        try expression.evaluate(PredicateBindings())
    }

    // MARK: Shapes shared by several nodes

    /// `==` and `!=`: NULL-safe, by key for models, by the column's codec for captured values.
    func equality(_ lhs: Any, _ rhs: Any, negated: Bool, node: Any) throws -> SQLTerm {
        let left = try term(lhs)
        let right = try term(rhs)
        if case .constant = left, case .constant = right {
            return .constant(try Self.evaluateWithoutVariables(node))
        }
        if case .identifier(let key, let entity) = left, case .constant(let constant) = right {
            return .condition(try identifierTest(key: key, entity: entity, constant: constant, negated: negated))
        }
        if case .constant(let constant) = left, case .identifier(let key, let entity) = right {
            return .condition(try identifierTest(key: key, entity: entity, constant: constant, negated: negated))
        }
        let left_ = try value(of: left, from: lhs, codec: codec(of: right))
        let right_ = try value(of: right, from: rhs, codec: codec(of: left))
        for (operand, other) in [(left_.fragment, right_.fragment), (right_.fragment, left_.fragment)] where other.isNullParameter {
            return .condition(SQLFragment("(\(operand.sql) IS \(negated ? "NOT " : "")NULL)", operand.arguments))
        }
        // `=` lets SQLite use an index against a captured value; `IS NOT` keeps `nil != value` true, as in Swift.
        let isConstantTest = right_.fragment.sql == "?" || left_.fragment.sql == "?"
        let op = negated ? "IS NOT" : (isConstantTest ? "=" : "IS")
        return .condition(SQLFragment(
            "(\(left_.fragment.sql) \(op) \(right_.fragment.sql))", left_.fragment.arguments + right_.fragment.arguments))
    }

    func codec(of term: SQLTerm) -> AttributeCodec? {
        if case .value(_, let codec) = term { return codec }
        return nil
    }

    private func identifierTest(key: SQLFragment, entity: String, constant: Any, negated: Bool) throws -> SQLFragment {
        let identifier = (constant as? PersistentIdentifier) ?? ((constant as? any _OptionalValue)?.wrappedAny as? PersistentIdentifier)
        guard let identifier else {
            return SQLFragment("(\(key.sql) IS \(negated ? "NOT " : "")NULL)", key.arguments)
        }
        // Another store's identifier matches none of this store's rows, whatever its key.
        guard identifier.entityName == entity, identifier.storeIdentifier == store.identifier, let primaryKey = identifier.primaryKey else {
            return SQLFragment(negated ? "1" : "0")
        }
        return SQLFragment("(\(key.sql) IS \(negated ? "NOT " : "")?)", key.arguments + [primaryKey.databaseValue])
    }

    /// A binary operator on two values; a captured value takes the codec of the other side.
    ///
    /// `ordering`: an order comparison of values of that type, which SQL makes only where it orders
    /// their stored forms as the type's `<` does (`StoredOrder`): by rank for a `CaseIterable` type.
    /// `arithmeticOn`: arithmetic on values of that type (`requireArithmeticInSQL`).
    func binary(
        _ lhs: Any, _ rhs: Any, node: Any, ordering: Any.Type? = nil, arithmeticOn: Any.Type? = nil,
        combine: (String, String) -> String
    ) throws -> SQLTerm {
        let left = try term(lhs)
        let right = try term(rhs)
        if case .constant = left, case .constant = right {
            return .constant(try Self.evaluateWithoutVariables(node))
        }
        if let arithmeticOn { try requireArithmeticInSQL(on: arithmeticOn, operands: [left, right], node: node) }
        var (leftSQL, _) = try value(of: left, from: lhs, codec: codec(of: right))
        var (rightSQL, _) = try value(of: right, from: rhs, codec: codec(of: left))
        if let ordering {
            let ordered = try orderable([leftSQL, rightSQL], as: ordering, node: node)
            (leftSQL, rightSQL) = (ordered[0], ordered[1])
        }
        return .value(SQLFragment(combine(leftSQL.sql, rightSQL.sql), leftSQL.arguments + rightSQL.arguments), codec: nil)
    }

    /// Values of `type` about to be ordered, as SQL must compare them for the type's `<` to hold
    /// (`StoredOrder`): as they are, or each as its case's rank; throws where SQL cannot order them.
    func orderable(_ values: [SQLFragment], as type: Any.Type, node: Any) throws -> [SQLFragment] {
        switch StoredOrder.of(type) {
        case .asStored: values
        case .ranked(let cases): values.map { StoredOrder.rankSQL($0, among: cases) }
        case .unordered(let reason): throw unsupported(node, detail: reason)
        }
    }

    /// Throws for arithmetic SQL cannot do on the stored form: a `Decimal` attribute is exact text in
    /// `SortableDecimal`'s form, which orders as its values do but which SQLite's `+` would read as a
    /// number prefix of that text (`$0.balance * 2 > 5` kept no row). Inside JSON (an element of a
    /// `[Decimal]`, a member) a decimal is a JSON number, on which SQL computes.
    func requireArithmeticInSQL(on type: Any.Type, operands: [SQLTerm], node: Any) throws {
        let readsAColumn = operands.contains { codec(of: $0).map { !$0.readsJSONMember } ?? false }
        if nonOptional(type) == Decimal.self, readsAColumn {
            throw unsupported(node, detail: "Decimal values are stored as exact text, on which SQL cannot compute; "
                + "compare the attribute itself with a value computed outside the predicate")
        }
    }

    // MARK: Key paths

    /// `root.keyPath`, where the root is a model, a to-many relationship or a stored value.
    func keyPath(_ keyPath: AnyKeyPath, on root: SQLTerm, node: Any) throws -> SQLTerm {
        switch root {
        case .entity(let reference):
            return try member(keyPath, of: reference, node: node)
        case .toMany(let reference):
            if keyPath == reference.mapping.countKeyPath {
                return reading(try countQuery(of: reference), isCondition: false, of: reference)
            }
            if keyPath == reference.mapping.isEmptyKeyPath {
                let exists = try existsQuery(of: reference, condition: nil)
                return reading(SQLFragment("NOT \(exists.sql)", exists.arguments), isCondition: true, of: reference)
            }
            throw unsupported(node, detail: "only count and isEmpty can be read from the to-many relationship \(reference.mapping.slot.name)")
        case .value(let fragment, let codec):
            return try valueMember(keyPath, of: fragment, codec: codec, node: node)
        case .constant(let constant):
            guard let result = constant[keyPath: keyPath] else { throw unsupported(node) }
            return .constant(result)
        default:
            throw unsupported(node)
        }
    }

    private func member(_ keyPath: AnyKeyPath, of reference: EntityReference, node: Any) throws -> SQLTerm {
        let layout = reference.layout
        if keyPath == layout.persistentModelIDKeyPath {
            return .identifier(reference.key, entity: layout.name)
        }
        guard let slot = layout.slot(for: keyPath) else {
            throw unsupported(node, detail: "\(keyPath) is not a stored property of \(layout.name) (computed and @Transient properties are not in the store)")
        }
        if slot.relationship != nil {
            let mapping = layout.mapping(for: slot)
            if slot.isForeignKey {
                return .entity(EntityReference(layout: mapping.destination, key: column(slot.name, of: reference)))
            }
            return .toMany(ToManyReference(mapping: mapping, ownerKey: reference.key, ownerIsRowInQuery: reference.alias != nil))
        }
        guard let codec = slot.codec else {
            throw unsupported(node, detail: "\(layout.name).\(slot.name) is not stored")
        }
        if slot.isExternalStorage {
            throw unsupported(node, detail: "\(layout.name).\(slot.name) uses external storage and cannot be filtered on")
        }
        if slot.isTransformed {
            throw unsupported(node, detail: "\(layout.name).\(slot.name) is stored through a value transformer, as opaque bytes, "
                + "and cannot be filtered on")
        }
        if slot.isOpaqueCodable {
            // As in SwiftData: the column is the value's JSON text, and an operator on it (an order,
            // a substring, a member) would read the text, not the value.
            throw unsupported(node, detail: "\(layout.name).\(slot.name) is stored with @Attribute(.codable), as an opaque value, "
                + "and cannot be filtered on; without .codable it can be")
        }
        return .value(column(slot.name, of: reference), codec: codec)
    }

    /// A column of a model: read directly when its row is in the query, else by key.
    private func column(_ name: String, of reference: EntityReference) -> SQLFragment {
        if let alias = reference.alias {
            return SQLFragment("\(alias.quotedIdentifier).\(name.quotedIdentifier)")
        }
        let alias = newAlias().quotedIdentifier
        return SQLFragment(
            "(SELECT \(alias).\(name.quotedIdentifier) FROM \(reference.layout.name.quotedIdentifier) AS \(alias) WHERE \(alias).\"_pk\" = \(reference.key.sql))",
            reference.key.arguments)
    }

    private func valueMember(_ keyPath: AnyKeyPath, of fragment: SQLFragment, codec: AttributeCodec?, node: Any) throws -> SQLTerm {
        let rootType = type(of: keyPath).rootType
        if keyPath == \String.count {
            // Characters, as Swift counts them: SQLite's length() counts code points, so "e" and a
            // combining accent, a flag or a skin-toned emoji were two.
            return .value(SQLFragment("\(StringFunctions.characterCount)(\(fragment.sql))", fragment.arguments), codec: nil)
        }
        if keyPath == \String.isEmpty {
            return .condition(SQLFragment("(\(fragment.sql) = '')", fragment.arguments))
        }
        // Data is a BLOB, whose length() is its bytes.
        if keyPath == \Data.count {
            return .value(SQLFragment("length(\(fragment.sql))", fragment.arguments), codec: nil)
        }
        if keyPath == \Data.isEmpty {
            return .condition(SQLFragment("(length(\(fragment.sql)) = 0)", fragment.arguments))
        }
        if let collection = rootType as? any _StoredAsJSONCollection.Type {
            let count = collection._jsonCount(of: fragment.sql)
            if keyPath == collection._countKeyPath {
                return .value(SQLFragment(count, fragment.arguments), codec: nil)
            }
            if keyPath == collection._isEmptyKeyPath {
                return .condition(SQLFragment("(\(count) = 0)", fragment.arguments))
            }
        }
        if let array = rootType as? any _StoredAsOrderedJSONArray.Type, keyPath == array._firstKeyPath || keyPath == array._lastKeyPath {
            // The element at an end, as a member is read; NULL (nil) for an empty array.
            let path = keyPath == array._firstKeyPath ? "$[0]" : "$[#-1]"
            return .value(SQLFragment("json_extract(\(fragment.sql), '\(path)')", fragment.arguments), codec: .jsonMember)
        }
        if rootType == String.self || rootType == Substring.self {
            // Text is no JSON: any other member of it would be read as one by `json_extract`, which
            // fails on text that is not JSON, or reads nothing.
            throw unsupported(node, detail: "\(keyPath) cannot be read in SQL: of text, count and isEmpty can")
        }
        if let raw = rootType as? any RawRepresentable.Type, type(of: keyPath).valueType == raw._rawValueType,
           let codec, codec.columnType != "TEXT" || raw._rawValueType == String.self {
            // Enums with a raw value are stored as that raw value: `.rawValue` is the column itself.
            return .value(fragment, codec: AttributeCodec.make(for: type(of: keyPath).valueType))
        }
        // A member of a Codable value stored as JSON: its name is the last component of the key path.
        let description = String(describing: keyPath)
        guard !description.contains("<"), let dot = description.lastIndex(of: "."),
              codec?.columnType == "TEXT" || codec?.readsJSONMember == true || codec == nil else {
            throw unsupported(node, detail: "\(keyPath) cannot be read in SQL")
        }
        let name = String(description[description.index(after: dot)...])
        if let reason = store.reasonMemberIsUnreadable(name, of: rootType) {
            throw unsupported(node, detail: "\(keyPath) cannot be read in SQL: \(reason)")
        }
        return .value(
            SQLFragment("json_extract(\(fragment.sql), ?)", fragment.arguments + ["$.\(name)".databaseValue]),
            codec: .jsonMember)
    }

    // MARK: To-many relationships

    /// `FROM … WHERE` of the related rows of a to-many relationship, with the element under `alias`.
    private func relatedRows(of reference: ToManyReference, alias: String) throws -> SQLFragment {
        let destination = reference.mapping.destination.name.quotedIdentifier
        let quoted = alias.quotedIdentifier
        var fragment: SQLFragment
        switch reference.mapping.storage {
        case .inverseForeignKey(let column):
            fragment = SQLFragment(
                "FROM \(destination) AS \(quoted) WHERE \(quoted).\(column.quotedIdentifier) = \(reference.ownerKey.sql)",
                reference.ownerKey.arguments)
        case .joinTable(let table):
            let join = newAlias().quotedIdentifier
            fragment = SQLFragment(
                "FROM \(table.name.quotedIdentifier) AS \(join) JOIN \(destination) AS \(quoted) "
                    + "ON \(quoted).\"_pk\" = \(join).\(table.otherColumn.quotedIdentifier) "
                    + "WHERE \(join).\(table.ownColumn.quotedIdentifier) = \(reference.ownerKey.sql)",
                reference.ownerKey.arguments)
        case .foreignKey:
            throw SwiftDataError(.unsupportedPredicate, "\(reference.mapping.slot.name) is not a to-many relationship")
        }
        let element = EntityReference(root: reference.mapping.destination, alias: alias)
        for filter in reference.filters {
            bind(filter.variable, to: .entity(element))
            let test = try condition(filter.expression)
            fragment = SQLFragment(fragment.sql + " AND \(test.sql)", fragment.arguments + test.arguments)
        }
        return fragment
    }

    func existsQuery(of reference: ToManyReference, condition test: (PredicateExpressions.VariableID, Any)?) throws -> SQLFragment {
        let alias = newAlias()
        guard let (variable, expression) = test else {
            let rows = try relatedRows(of: reference, alias: alias)
            return SQLFragment("EXISTS (SELECT 1 \(rows.sql))", rows.arguments)
        }
        let destination = reference.mapping.destination
        bind(variable, to: .entity(EntityReference(root: destination, alias: alias)))
        let condition = try condition(expression)
        if case .joinTable(let table) = reference.mapping.storage, reference.filters.isEmpty,
           Self.picksListedRows(condition, alias: alias, of: destination) {
            let join = newAlias().quotedIdentifier
            let quoted = alias.quotedIdentifier
            let related = "SELECT \(quoted).\"_pk\" FROM \(destination.name.quotedIdentifier) AS \(quoted) WHERE \(condition.sql)"
            let own = "\(join).\(table.ownColumn.quotedIdentifier)"
            let other = "\(join).\(table.otherColumn.quotedIdentifier)"
            if use == .collectingMatches, reference.ownerIsRowInQuery {
                // `tags.contains { $0.uuid == id }` in a count: the tag's owners, read once from the
                // join table's (destination, source) index, as a set the count is driven by or
                // probes. A lookup per snippet walked all 100,000 snippets for a tag on 5,800 of
                // them: 43 ms against 5 ms, and 73 ms against 7 ms for two tags that must both match.
                let owners = "SELECT \(own) FROM \(table.name.quotedIdentifier) AS \(join) WHERE \(other) IN (\(related))"
                var test = SQLFragment("(\(reference.ownerKey.sql) IN (\(owners)))", reference.ownerKey.arguments + condition.arguments)
                // The owners are the queried rows themselves: their set needs no look-up of each in
                // their own table (a tag's 4,700 snippets: 2 ms from the join table, 7-12 ms with it),
                // since a save that deletes a row deletes its join rows in the same transaction.
                if reference.ownerKey.sql == EntityReference(root: rootLayout).key.sql {
                    test.ownerKeys = SQLFragment.KeyListing(sql: owners, arguments: condition.arguments)
                }
                return test
            }
            // `tags.contains { $0.uuid == id }` in a fetch: the related row is found once for the
            // statement, and each owner needs one lookup in the join table's key, so that a walk of
            // the newest snippets stops after the page (1 ms, where the set above takes 25 ms to
            // collect and sort). Joining looked the tag up again for every snippet a filtered list
            // walked: two lookups a row, twice for two tags.
            return SQLFragment(
                "EXISTS (SELECT 1 FROM \(table.name.quotedIdentifier) AS \(join) "
                    + "WHERE \(own) = \(reference.ownerKey.sql) AND \(other) IN (\(related)))",
                reference.ownerKey.arguments + condition.arguments)
        }
        let rows = try relatedRows(of: reference, alias: alias)
        return SQLFragment("EXISTS (SELECT 1 \(rows.sql) AND \(condition.sql))", rows.arguments + condition.arguments)
    }

    /// Whether a condition on `alias` compares a unique attribute or the key with one captured value,
    /// or a list of them, as `equality` and `contains` write it, so that at most that many rows of
    /// `layout` pass and no other alias is read. (Only then are the rows worth finding once: a broad
    /// condition on a large table would make a long list for every statement.)
    static func picksListedRows(_ condition: SQLFragment, alias: String, of layout: EntityLayout) -> Bool {
        guard !condition.arguments.isEmpty, condition.sql.hasPrefix("("), condition.sql.hasSuffix(")") else { return false }
        let inner = condition.sql.dropFirst().dropLast()
        let prefix = "\(alias.quotedIdentifier)."
        func isUniqueColumn(_ column: Substring) -> Bool {
            guard column.hasPrefix(prefix) else { return false }
            let name = String(column.dropFirst(prefix.count))
            return name == "\"_pk\"" || layout.uniquenessConstraints.contains {
                $0.slots.count == 1 && $0.slots[0].name.quotedIdentifier == name
            }
        }
        // `column IN (?, ?, …)`, one placeholder per argument.
        if let range = inner.range(of: " IN ("), inner.hasSuffix(")") {
            let placeholders = inner[range.upperBound...].dropLast()
            return isUniqueColumn(inner[..<range.lowerBound])
                && placeholders == Array(repeating: "?", count: condition.arguments.count).joined(separator: ", ")
        }
        guard condition.arguments.count == 1 else { return false }
        for op in [" = ", " IS "] {
            let sides = inner.components(separatedBy: op)
            guard sides.count == 2 else { continue }
            guard let column = sides.first(where: { $0.hasPrefix(prefix) }), sides.contains("?") else { return false }
            return isUniqueColumn(Substring(column))
        }
        return false
    }

    /// What is read from a to-many relationship (`count`, `isEmpty`, `contains(where:)`,
    /// `allSatisfy`). Reached through a to-one that may be nil (`$0.team?.players.count`), it is nil
    /// where that is, as Swift's optional chain makes it: the subqueries alone, finding no rows for a
    /// NULL key, read 0 and true there, so `$0.team?.players.count == 0` held for a coach without a team.
    func reading(_ fragment: SQLFragment, isCondition: Bool, of reference: ToManyReference) -> SQLTerm {
        if reference.ownerIsRowInQuery { return isCondition ? .condition(fragment) : .value(fragment, codec: nil) }
        return .value(SQLFragment(
            "(CASE WHEN \(reference.ownerKey.sql) IS NULL THEN NULL ELSE \(fragment.sql) END)",
            reference.ownerKey.arguments + fragment.arguments), codec: nil)
    }

    func countQuery(of reference: ToManyReference) throws -> SQLFragment {
        let rows = try relatedRows(of: reference, alias: newAlias())
        return SQLFragment("(SELECT COUNT(*) \(rows.sql))", rows.arguments)
    }
}

// MARK: Key paths built for a type known only at run time

extension RelationshipMapping {
    /// `\[Destination].count` and `\[Destination].isEmpty` (or their optional-array forms' inner key paths).
    var countKeyPath: AnyKeyPath? { arrayType?._countKeyPath }
    var isEmptyKeyPath: AnyKeyPath? { arrayType?._isEmptyKeyPath }

    private var arrayType: (any _ModelArray.Type)? {
        var type = slot.valueType
        if let optional = type as? any _OptionalValue.Type { type = optional.wrappedType }
        return type as? any _ModelArray.Type
    }
}

extension RawRepresentable {
    /// A key path from a raw-representable type to a value of its raw type can only be `rawValue`
    /// among stored properties (a `\T.rawValue` built generically names the protocol requirement and
    /// does not compare equal to the concrete one).
    static var _rawValueType: Any.Type { RawValue.self }
}
