import Foundation
import GRDB

/// A `PredicateExpressions` node that ObjectGraph can translate to SQL: each node type translates
/// itself, as in swift-foundation's own predicate conversions.
protocol SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm
}

extension PredicateExpressions.Variable: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.lookup(key)
    }
}

extension PredicateExpressions.Value: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm { .constant(value) }
}

extension PredicateExpressions.NilLiteral: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm { .constant(Optional<Wrapped>.none as Any) }
}

extension PredicateExpressions.KeyPath: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.keyPath(keyPath, on: translation.term(root), node: self)
    }
}

extension PredicateExpressions.Equal: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.equality(lhs, rhs, negated: false, node: self)
    }
}

extension PredicateExpressions.NotEqual: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.equality(lhs, rhs, negated: true, node: self)
    }
}

extension PredicateExpressions.Comparison: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let symbol = switch op {
        case .lessThan: "<"
        case .lessThanOrEqual: "<="
        case .greaterThan: ">"
        case .greaterThanOrEqual: ">="
        }
        let result = try translation.binary(lhs, rhs, node: self, ordering: LHS.Output.self) { "(\($0) \(symbol) \($1))" }
        if case .value(let fragment, _) = result { return .condition(fragment) }
        return result
    }
}

// A side known from captured values decides or vanishes, so that filters switched on and off by
// captured flags (`!onlyFavorites || $0.isFavorite`) leave plain conditions that can use indexes.

extension PredicateExpressions.Conjunction: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let left = try translation.term(lhs)
        if case .constant(let value) = left, let flag = value as? Bool {
            return flag ? try translation.term(rhs) : .constant(false)
        }
        let right = try translation.term(rhs)
        if case .constant(let value) = right, let flag = value as? Bool {
            return flag ? left : .constant(false)
        }
        let leftSQL = try translation.condition(of: left, from: lhs)
        let rightSQL = try translation.condition(of: right, from: rhs)
        return .condition(SQLFragment("(\(leftSQL.sql) AND \(rightSQL.sql))", leftSQL.arguments + rightSQL.arguments))
    }
}

extension PredicateExpressions.Disjunction: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let left = try translation.term(lhs)
        if case .constant(let value) = left, let flag = value as? Bool {
            return flag ? .constant(true) : try translation.term(rhs)
        }
        let right = try translation.term(rhs)
        if case .constant(let value) = right, let flag = value as? Bool {
            return flag ? .constant(true) : left
        }
        let leftSQL = try translation.condition(of: left, from: lhs)
        let rightSQL = try translation.condition(of: right, from: rhs)
        return .condition(SQLFragment("(\(leftSQL.sql) OR \(rightSQL.sql))", leftSQL.arguments + rightSQL.arguments))
    }
}

extension PredicateExpressions.Negation: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let term = try translation.term(wrapped)
        if case .constant(let value) = term, let flag = value as? Bool { return .constant(!flag) }
        let inner = try translation.condition(of: term, from: wrapped)
        // A condition on a missing value is NULL in SQL; negated, it must still exclude the row.
        return .condition(SQLFragment("(NOT COALESCE(\(inner.sql), 0))", inner.arguments))
    }
}

extension PredicateExpressions.Arithmetic: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let symbol = switch op {
        case .add: "+"
        case .subtract: "-"
        case .multiply: "*"
        }
        return try translation.binary(lhs, rhs, node: self, arithmeticOn: LHS.Output.self) { "(\($0) \(symbol) \($1))" }
    }
}

extension PredicateExpressions.IntDivision: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.binary(lhs, rhs, node: self) { "(\($0) / \($1))" }
    }
}

extension PredicateExpressions.IntRemainder: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.binary(lhs, rhs, node: self) { "(\($0) % \($1))" }
    }
}

extension PredicateExpressions.FloatDivision: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        // As Swift divides: by zero, ±infinity (SQLite's `/` gives NULL, which no comparison matched).
        try translation.binary(lhs, rhs, node: self) { "\(NumberFunctions.divide)(\($0), \($1))" }
    }
}

extension PredicateExpressions.UnaryMinus: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let inner = try translation.term(wrapped)
        if case .constant = inner { return .constant(try PredicateTranslation.evaluateWithoutVariables(self)) }
        try translation.requireArithmeticInSQL(on: Wrapped.Output.self, operands: [inner], node: self)
        let (fragment, _) = try translation.value(of: inner, from: wrapped)
        return .value(SQLFragment("(-\(fragment.sql))", fragment.arguments), codec: nil)
    }
}

extension PredicateExpressions.NilCoalesce: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let left = try translation.term(lhs)
        let right = try translation.term(rhs)
        if case .constant = left, case .constant = right {
            return .constant(try PredicateTranslation.evaluateWithoutVariables(self))
        }
        let (leftSQL, leftCodec) = try translation.value(of: left, from: lhs, codec: translation.codec(of: right))
        let (rightSQL, _) = try translation.value(of: right, from: rhs, codec: leftCodec)
        return .value(SQLFragment("COALESCE(\(leftSQL.sql), \(rightSQL.sql))", leftSQL.arguments + rightSQL.arguments),
                      codec: leftCodec)
    }
}

extension PredicateExpressions.ForcedUnwrap: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.term(inner)
    }
}

extension PredicateExpressions.OptionalFlatMap: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let wrappedTerm = try translation.term(wrapped)
        if case .constant = wrappedTerm { return .constant(try PredicateTranslation.evaluateWithoutVariables(self)) }
        // In SQL a missing value propagates by itself: NULL in, NULL out; a missing model has a NULL key,
        // and the subqueries that read its columns find no row.
        translation.bind(variable.key, to: wrappedTerm)
        return try translation.term(transform)
    }
}

extension PredicateExpressions.Conditional: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let condition = try translation.condition(test)
        let whenTrue = try translation.term(trueBranch)
        let whenFalse = try translation.term(falseBranch)
        let (trueSQL, trueCodec) = try translation.value(of: whenTrue, from: trueBranch, codec: translation.codec(of: whenFalse))
        let (falseSQL, falseCodec) = try translation.value(of: whenFalse, from: falseBranch, codec: trueCodec)
        return .value(SQLFragment(
            "(CASE WHEN \(condition.sql) THEN \(trueSQL.sql) ELSE \(falseSQL.sql) END)",
            condition.arguments + trueSQL.arguments + falseSQL.arguments), codec: trueCodec ?? falseCodec)
    }
}

extension PredicateExpressions.CollectionContainsCollection: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let result = try translation.binary(base, other, node: self) { "(instr(\($0), \($1)) > 0)" }
        if case .value(let fragment, _) = result { return .condition(fragment) }
        return result
    }
}

extension PredicateExpressions.SequenceStartsWith: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let baseTerm = try translation.term(base)
        let prefixTerm = try translation.term(prefix)
        if case .constant = baseTerm, case .constant = prefixTerm {
            return .constant(try PredicateTranslation.evaluateWithoutVariables(self))
        }
        let (baseSQL, _) = try translation.value(of: baseTerm, from: base)
        let (prefixSQL, _) = try translation.value(of: prefixTerm, from: prefix)
        return .condition(SQLFragment(
            "(substr(\(baseSQL.sql), 1, length(\(prefixSQL.sql))) = \(prefixSQL.sql))",
            baseSQL.arguments + prefixSQL.arguments + prefixSQL.arguments))
    }
}

extension PredicateExpressions.SequenceContains: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let sequenceTerm = try translation.term(sequence)
        let elementTerm = try translation.term(element)
        if case .constant(let values) = sequenceTerm {
            if case .constant = elementTerm { return .constant(try PredicateTranslation.evaluateWithoutVariables(self)) }
            // `array.contains($0.x)`: x IN (…), each value encoded like the column.
            let (elementSQL, codec) = try translation.value(of: elementTerm, from: element)
            guard let sequence = values as? any Sequence else { throw translation.unsupported(self) }
            let encoded = try sequence.map { try translation.encode($0, with: codec) }
            // A nil among the values finds the rows without one, as Swift's contains does; SQL's IN
            // never matches NULL.
            let values = encoded.filter { !$0.isNull }
            let nilTest = values.count < encoded.count ? "\(elementSQL.sql) IS NULL" : nil
            if values.isEmpty { return .condition(nilTest.map { SQLFragment("(\($0))", elementSQL.arguments) } ?? SQLFragment("0")) }
            let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
            let inList = "\(elementSQL.sql) IN (\(placeholders))"
            guard let nilTest else { return .condition(SQLFragment("(\(inList))", elementSQL.arguments + values)) }
            return .condition(SQLFragment("(\(inList) OR \(nilTest))", elementSQL.arguments + values + elementSQL.arguments))
        }
        if let column = translation.storedJSONArray(sequenceTerm, of: LHS.Output.self) {
            // A Codable array stored as JSON: look for the value among its elements.
            let (elementSQL, _) = try translation.value(of: elementTerm, from: element, codec: .jsonMember)
            return .condition(SQLFragment(
                "EXISTS (SELECT 1 FROM json_each(\(column.sql)) WHERE json_each.value = \(elementSQL.sql))",
                column.arguments + elementSQL.arguments))
        }
        if case .value = sequenceTerm {
            throw translation.unsupported(self, detail: "contains(_:) is translated on arrays, sets and to-many relationships")
        }
        throw translation.unsupported(self, detail: "contains(_:) on a relationship needs a model, which a predicate cannot capture: "
            + "use contains(where: { $0.persistentModelID == id })")
    }
}

extension PredicateExpressions.SequenceContainsWhere: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let sequenceTerm = try translation.term(sequence)
        if let array = translation.storedJSONArray(sequenceTerm, of: LHS.Output.self) {
            return .condition(try translation.anyElement(of: array, variable: variable.key, passes: test))
        }
        guard case .toMany(let reference) = sequenceTerm else {
            throw translation.unsupported(self, detail: "contains(where:) is translated on to-many relationships, arrays and sets")
        }
        return translation.reading(
            try translation.existsQuery(of: reference, condition: (variable.key, test)), isCondition: true, of: reference)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        // Every element passes when none fails: an element whose test is NULL (a member it lacks)
        // fails, as `NegatedTest` counts it.
        let negatedTest = NegatedTest(test: test)
        let sequenceTerm = try translation.term(sequence)
        if let array = translation.storedJSONArray(sequenceTerm, of: LHS.Output.self) {
            let exists = try translation.anyElement(of: array, variable: variable.key, passes: negatedTest)
            return .condition(SQLFragment("(NOT \(exists.sql))", exists.arguments))
        }
        guard case .toMany(let reference) = sequenceTerm else {
            throw translation.unsupported(self, detail: "allSatisfy is translated on to-many relationships, arrays and sets")
        }
        let exists = try translation.existsQuery(of: reference, condition: (variable.key, negatedTest))
        return translation.reading(SQLFragment("(NOT \(exists.sql))", exists.arguments), isCondition: true, of: reference)
    }
}

extension PredicateExpressions.ObjectGraphLocalizedStandardContains: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let result = try translation.binary(root, other, node: self) {
            "(instr(\(StringFunctions.fold)(\($0)), \(StringFunctions.fold)(\($1))) > 0)"
        }
        if case .value(let fragment, _) = result { return .condition(fragment) }
        return result
    }
}

extension PredicateExpressions.ObjectGraphStringCaseInsensitiveCompare: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.binary(root, other, node: self) { "\(StringFunctions.caseInsensitiveCompare)(\($0), \($1))" }
    }
}

extension PredicateExpressions.ObjectGraphStringLocalizedCompare: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        try translation.binary(root, other, node: self) { "\(StringFunctions.localizedCompare)(\($0), \($1))" }
    }
}

/// `NOT (test)` for `allSatisfy`, which holds when no element fails the test.
private struct NegatedTest: SQLTranslatableExpression {
    let test: Any
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let inner = try translation.condition(test)
        return .condition(SQLFragment("(NOT COALESCE(\(inner.sql), 0))", inner.arguments))
    }
}

extension PredicateExpressions.Filter: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let sequenceTerm = try translation.term(sequence)
        if let array = translation.storedJSONArray(sequenceTerm, of: LHS.Output.self) {
            return .value(try translation.elements(of: array, variable: variable.key, passing: filter), codec: nil)
        }
        guard case .toMany(var reference) = sequenceTerm else {
            throw translation.unsupported(self, detail: "filter is translated on to-many relationships, arrays and sets")
        }
        reference.filters.append((variable.key, filter))
        return .toMany(reference)
    }
}

extension PredicateExpressions.ClosedRange: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        .constant(try PredicateTranslation.evaluateWithoutVariables(self))
    }
}

extension PredicateExpressions.Range: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        .constant(try PredicateTranslation.evaluateWithoutVariables(self))
    }
}

extension PredicateExpressions.RangeExpressionContains: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let rangeTerm = try translation.term(range)
        let elementTerm = try translation.term(element)
        guard case .constant(let bounds) = rangeTerm else { throw translation.unsupported(self) }
        if case .constant = elementTerm { return .constant(try PredicateTranslation.evaluateWithoutVariables(self)) }
        let (element, codec) = try translation.value(of: elementTerm, from: element)
        guard let range = bounds as? any _RangeBounds else { throw translation.unsupported(self) }
        // Bounds compare as `Comparison` does: by rank for a `CaseIterable` type (`StoredOrder`).
        let ordered = try translation.orderable(
            [element, SQLFragment("?", [try translation.encode(range.lowerAny, with: codec)]),
             SQLFragment("?", [try translation.encode(range.upperAny, with: codec)])],
            as: Element.Output.self, node: self)
        let (elementSQL, lower, upper) = (ordered[0], ordered[1], ordered[2])
        let upperOperator = range.includesUpperBound ? "<=" : "<"
        return .condition(SQLFragment(
            "(\(elementSQL.sql) >= \(lower.sql) AND \(elementSQL.sql) \(upperOperator) \(upper.sql))",
            elementSQL.arguments + lower.arguments + elementSQL.arguments + upper.arguments))
    }
}

/// The bounds of `a..<b` and `a...b`, read without knowing their type.
protocol _RangeBounds {
    var lowerAny: Any { get }
    var upperAny: Any { get }
    var includesUpperBound: Bool { get }
}

extension Range: _RangeBounds {
    var lowerAny: Any { lowerBound }
    var upperAny: Any { upperBound }
    var includesUpperBound: Bool { false }
}

extension ClosedRange: _RangeBounds {
    var lowerAny: Any { lowerBound }
    var upperAny: Any { upperBound }
    var includesUpperBound: Bool { true }
}
