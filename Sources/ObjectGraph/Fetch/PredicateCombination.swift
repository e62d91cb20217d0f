import Foundation

/// Combines predicates built separately into one, for filters assembled at run time:
///
/// ```swift
/// var parts: [Predicate<Snippet>] = []
/// if onlyFavorites { parts.append(#Predicate { $0.isFavorite }) }
/// if let language { parts.append(#Predicate { $0.language == language }) }
/// let descriptor = FetchDescriptor(predicate: Predicates.all(parts))
/// ```
///
/// Foundation offers `Predicate(all:)` only on Apple platforms, and `#Predicate` on Linux rejects
/// `other.evaluate($0)`; these predicates evaluate in memory and translate to SQL alike.
public enum Predicates {
    /// Holds when every predicate holds (and for an empty list).
    public static func all<T>(_ predicates: [Predicate<T>]) -> Predicate<T> {
        // One predicate is itself: the same SQL as when used alone, so the store's count cache matches it.
        if predicates.count == 1 { return predicates[0] }
        return Predicate<T> { input in PredicateExpressions.ObjectGraphCombination(predicates: predicates, input: input, requiresAll: true) }
    }

    /// The predicates that must all hold for `predicate` to hold: those of ``all(_:)``, or the
    /// predicate itself.
    static func conjuncts<T>(of predicate: Predicate<T>) -> [Predicate<T>] {
        if let combination = predicate.expression as? PredicateExpressions.ObjectGraphCombination<T>,
           combination.requiresAll, !combination.predicates.isEmpty {
            return combination.predicates
        }
        return [predicate]
    }

    /// Holds when at least one predicate holds (never, for an empty list).
    public static func any<T>(_ predicates: [Predicate<T>]) -> Predicate<T> {
        if predicates.count == 1 { return predicates[0] }
        return Predicate<T> { input in PredicateExpressions.ObjectGraphCombination(predicates: predicates, input: input, requiresAll: false) }
    }
}

extension PredicateExpressions {
    /// The node of ``Predicates/all(_:)`` and ``Predicates/any(_:)``: each predicate evaluated with this
    /// node's input.
    public struct ObjectGraphCombination<T>: StandardPredicateExpression {
        public typealias Output = Bool
        public let predicates: [Predicate<T>]
        public let input: PredicateExpressions.Variable<T>
        public let requiresAll: Bool

        public init(predicates: [Predicate<T>], input: PredicateExpressions.Variable<T>, requiresAll: Bool) {
            self.predicates = predicates
            self.input = input
            self.requiresAll = requiresAll
        }

        public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
            guard let value = bindings[input] else {
                throw SwiftDataError(.unsupportedPredicate, "a combined predicate was evaluated without its input")
            }
            for predicate in predicates {
                if try predicate.evaluate(value) != requiresAll { return !requiresAll }
            }
            return requiresAll
        }

        /// Predicates are not Codable on Linux, so neither is their combination; the conformance is
        /// only there because `#Predicate` requires it of every node.
        public init(from decoder: any Decoder) throws {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "combined predicates cannot be decoded"))
        }

        public func encode(to encoder: any Encoder) throws {
            throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath,
                                                         debugDescription: "combined predicates cannot be encoded"))
        }
    }
}

extension PredicateExpressions.ObjectGraphCombination: @unchecked Sendable {}

extension PredicateExpressions.ObjectGraphCombination: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        let target = try translation.lookup(input.key)
        var parts: [SQLFragment] = []
        for predicate in predicates {
            translation.bind(predicate.variable.key, to: target)
            let term = try translation.term(predicate.expression)
            if case .constant(let value) = term, let flag = value as? Bool {
                if flag == requiresAll { continue }
                return .constant(flag)
            }
            parts.append(try translation.condition(of: term, from: predicate.expression))
        }
        guard !parts.isEmpty else { return .constant(requiresAll) }
        let joiner = requiresAll ? " AND " : " OR "
        return .condition(SQLFragment("(" + parts.map(\.sql).joined(separator: joiner) + ")", parts.flatMap(\.arguments)))
    }
}
