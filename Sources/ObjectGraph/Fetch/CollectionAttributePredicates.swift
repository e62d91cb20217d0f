import Foundation
import GRDB

// Predicates over array, set and dictionary attributes (`var ratings: [Int]`, `var moods: Set<String>`,
// `var plays: [String: Int]`), and over such members of a `Codable` attribute. They are stored as the
// JSON text `JSONEncoder` writes, which SQLite's JSON functions read: `json_each` lists an array's
// elements (or an object's values), `json_extract` reads one. An element a closure tests is
// `json_each`'s `value`: a number, a text, 0 or 1 for a Boolean, or the JSON text of a `Codable`
// element, whose members `json_extract` reads; captured values are compared with it as `JSONEncoder`
// writes them (`AttributeCodec.jsonMember`), so that a date or an enum case matches its element.

/// A collection stored as JSON, with its own `count` and `isEmpty`, which a predicate reads as SQL.
/// (An array's key paths are the ones `_ModelArray` already gives it.)
protocol _StoredAsJSONCollection {
    static var _countKeyPath: AnyKeyPath { get }
    static var _isEmptyKeyPath: AnyKeyPath { get }
    /// The SQL that counts the elements of `json`, which holds such a collection.
    static func _jsonCount(of json: String) -> String
}

/// Arrays and sets, which `JSONEncoder` writes as JSON arrays.
protocol _StoredAsJSONArray: _StoredAsJSONCollection {}

extension _StoredAsJSONArray {
    static func _jsonCount(of json: String) -> String { "json_array_length(\(json))" }
}

extension Array: _StoredAsJSONArray {}

/// Arrays, whose order the JSON keeps: `first` and `last` read its ends (a set's are arbitrary).
protocol _StoredAsOrderedJSONArray: _StoredAsJSONArray {
    static var _firstKeyPath: AnyKeyPath { get }
    static var _lastKeyPath: AnyKeyPath { get }
}

extension Array: _StoredAsOrderedJSONArray {
    static var _firstKeyPath: AnyKeyPath { \Self.first }
    static var _lastKeyPath: AnyKeyPath { \Self.last }
}

extension Set: _StoredAsJSONArray {
    static var _countKeyPath: AnyKeyPath { \Self.count }
    static var _isEmptyKeyPath: AnyKeyPath { \Self.isEmpty }
}

/// Dictionaries with `String` keys, which `JSONEncoder` writes as JSON objects (with other keys it
/// writes an array of keys and values, which no path reads by key).
protocol _StoredAsJSONObject: _StoredAsJSONCollection {}

extension Dictionary: _StoredAsJSONCollection, _StoredAsJSONObject where Key == String {
    static var _countKeyPath: AnyKeyPath { \Self.count }
    static var _isEmptyKeyPath: AnyKeyPath { \Self.isEmpty }
    // `json_array_length` is 0 for an object: its members are counted.
    static func _jsonCount(of json: String) -> String { "(SELECT COUNT(*) FROM json_each(\(json)))" }
}

extension PredicateTranslation {
    /// The JSON text of the array or set `term` stands for, or nil when it stands for something else:
    /// a to-many relationship, a captured value, or text (`String` is a sequence of characters too).
    func storedJSONArray(_ term: SQLTerm, of type: Any.Type) -> SQLFragment? {
        guard type is any _StoredAsJSONArray.Type, case .value(let fragment, _) = term else { return nil }
        return fragment
    }

    /// A new alias for `json_each` over an array, with `variable` standing for its element: the
    /// element's `value`, compared with captured values as JSON members are.
    private func elementAlias(for variable: PredicateExpressions.VariableID) -> String {
        let alias = newAlias().quotedIdentifier
        bind(variable, to: .value(SQLFragment("\(alias).value"), codec: .jsonMember))
        return alias
    }

    /// Whether some element of `array` passes `test`, with `variable` standing for the element.
    func anyElement(of array: SQLFragment, variable: PredicateExpressions.VariableID, passes test: Any) throws -> SQLFragment {
        let alias = elementAlias(for: variable)
        let condition = try condition(test)
        return SQLFragment(
            "EXISTS (SELECT 1 FROM json_each(\(array.sql)) AS \(alias) WHERE \(condition.sql))",
            array.arguments + condition.arguments)
    }

    /// The elements of `array` that pass `test`, as a JSON array of their own, on which `count`,
    /// `contains` and the rest work as on the attribute. `json_each` lists the elements in order and
    /// the aggregate takes them as listed, though SQLite promises no order to an aggregate (the
    /// `ORDER BY` inside one is SQLite 3.44's, newer than Debian 12's): only a position in the filtered
    /// elements (`filter { … }[0]`) depends on it. An object or array element is put back as JSON
    /// (`json_each` gives its text, which `json_group_array` would otherwise quote as a string).
    func elements(of array: SQLFragment, variable: PredicateExpressions.VariableID, passing test: Any) throws -> SQLFragment {
        let alias = elementAlias(for: variable)
        let condition = try condition(test)
        let element = "CASE WHEN \(alias).type IN ('object', 'array') THEN json(\(alias).value) ELSE \(alias).value END"
        return SQLFragment(
            "(SELECT json_group_array(\(element)) FROM json_each(\(array.sql)) AS \(alias) WHERE \(condition.sql))",
            array.arguments + condition.arguments)
    }

    /// `max()` or `min()` (`function`) of the elements of the array `elements` reads: `SELECT
    /// function(value)` over them, NULL when there are none, as the methods give nil for an empty
    /// sequence. `elementsType` is the sequence's type.
    fileprivate func elementAggregate(
        _ function: String, of elements: Any, elementsType: Any.Type, elementType: Any.Type, node: Any
    ) throws -> SQLTerm {
        let term = try term(elements)
        if case .constant = term { return .constant(try Self.evaluateWithoutVariables(node)) }
        guard let array = storedJSONArray(term, of: elementsType) else {
            throw unsupported(node, detail: "max() and min() are translated on array and set attributes")
        }
        // SQL's MAX and MIN take the stored elements' order, which must be the type's `<`.
        switch StoredOrder.of(elementType) {
        case .asStored: break
        case .ranked: throw unsupported(node, detail: "\(elementType) orders by its `<`, not by its stored values: max() and min() of it are not translated")
        case .unordered(let reason): throw unsupported(node, detail: reason)
        }
        let alias = newAlias().quotedIdentifier
        return .value(
            SQLFragment("(SELECT \(function)(\(alias).value) FROM json_each(\(array.sql)) AS \(alias))", array.arguments),
            codec: .jsonMember)
    }
}

extension PredicateExpressions.SequenceMaximum: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.elementAggregate("MAX", of: elements, elementsType: Elements.Output.self, elementType: Elements.Output.Element.self, node: self)
    }
}

extension PredicateExpressions.SequenceMinimum: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.elementAggregate("MIN", of: elements, elementsType: Elements.Output.self, elementType: Elements.Output.Element.self, node: self)
    }
}

extension PredicateExpressions.CollectionIndexSubscript: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let collection = try translation.term(wrapped)
        let position = try translation.term(index)
        if case .constant = collection, case .constant = position {
            return .constant(try PredicateTranslation.evaluateWithoutVariables(self))
        }
        guard Index.Output.self == Int.self, let array = translation.storedJSONArray(collection, of: Wrapped.Output.self) else {
            throw translation.unsupported(self, detail: "a subscript is translated on array attributes, by an Int")
        }
        // A position past the end, or before the start, reads NULL, which no comparison passes (where
        // Foundation's `evaluate` throws); a negative one is kept out of the path, where SQLite would
        // fail on it.
        let (positionSQL, _) = try translation.value(of: position, from: index)
        return .value(
            SQLFragment(
                "(CASE WHEN \(positionSQL.sql) >= 0 THEN json_extract(\(array.sql), '$[' || \(positionSQL.sql) || ']') END)",
                positionSQL.arguments + array.arguments + positionSQL.arguments),
            codec: .jsonMember)
    }
}

extension PredicateExpressions.DictionaryKeySubscript: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.dictionaryValue(self, of: wrapped, dictionaryType: Wrapped.Output.self, key: key)
    }
}

extension PredicateExpressions.DictionaryKeyDefaultValueSubscript: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let stored = try translation.dictionaryValue(self, of: wrapped, dictionaryType: Wrapped.Output.self, key: key)
        if case .constant = stored { return stored }
        let (valueSQL, codec) = try translation.value(of: stored, from: self)
        let (fallbackSQL, _) = try translation.value(self.default, codec: codec)
        return .value(SQLFragment("COALESCE(\(valueSQL.sql), \(fallbackSQL.sql))", valueSQL.arguments + fallbackSQL.arguments),
                      codec: codec)
    }
}

extension PredicateTranslation {
    /// The value a dictionary attribute holds for a key: `json_extract` by the key's path, NULL when
    /// the key is absent (nil, as the subscript gives).
    fileprivate func dictionaryValue(_ node: Any, of wrapped: Any, dictionaryType: Any.Type, key: Any) throws -> SQLTerm {
        let dictionary = try term(wrapped)
        let keyTerm = try term(key)
        if case .constant = dictionary, case .constant = keyTerm {
            return .constant(try Self.evaluateWithoutVariables(node))
        }
        guard dictionaryType is any _StoredAsJSONObject.Type, case .value(let object, _) = dictionary else {
            throw unsupported(node, detail: "a key subscript is translated on dictionary attributes with String keys")
        }
        // A JSON path's quoted key is compared with the key as the stored text writes it, escapes and
        // all, and `JSONEncoder` escapes a quote, a backslash, `/` and control characters: such a key
        // read by its path matched nothing. It is looked up among the object's members instead, whose
        // keys `json_each` reads unescaped, as is a key read from a column, which may hold anything.
        // Other keys keep the path (quoted, so that a dot or a bracket in one is part of the key),
        // which reads one value without walking the object.
        func member(matching key: SQLFragment) -> SQLTerm {
            .value(SQLFragment("(SELECT \"value\" FROM json_each(\(object.sql)) WHERE \"key\" = \(key.sql))",
                               object.arguments + key.arguments), codec: .jsonMember)
        }
        guard case .constant(let constant) = keyTerm else { return member(matching: try value(of: keyTerm, from: key).0) }
        guard let text = constant as? String else {
            throw unsupported(node, detail: "a key subscript is translated on dictionary attributes with String keys")
        }
        if text.unicodeScalars.contains(where: Self.isEscapedInJSONKeys) { return member(matching: SQLFragment("?", [text.databaseValue])) }
        let path = SQLFragment("?", ["$.\"\(text)\"".databaseValue])
        return .value(SQLFragment("json_extract(\(object.sql), \(path.sql))", object.arguments + path.arguments), codec: .jsonMember)
    }

    /// Whether `JSONEncoder` writes this character of a key escaped: a quote, a backslash, a slash
    /// (unless told `.withoutEscapingSlashes`, which the codecs are not) or a control character.
    private static func isEscapedInJSONKeys(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\"" || scalar == "\\" || scalar == "/" || scalar.value < 0x20
    }
}
