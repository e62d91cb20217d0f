import Foundation

/// A predicate that requires a to-many relationship *not* to hold a match (`!$0.tags.contains { … }`),
/// alone or as one part of ``Predicates/all(_:)``, split so that it can be counted by complement:
/// the models that meet the other parts, less those that also hold a match.
///
/// Counted directly, SQLite tests every model that meets the other parts against the set of owners
/// of a match: 29–37 ms for each of the list page's counts (total, per folder, per language) with a
/// tag excluded at 100,000 snippets, where the models with that tag are found from the join table's
/// index in 4 ms, and those meeting the other parts (the library) are usually counted already.
/// `NOT COALESCE(test, 0)` holds where the test is false or NULL, and the test itself where it is
/// true, so the two counts add up to the count of the other parts exactly.
struct NegatedRelationshipTest<T: PersistentModel> {
    /// The other parts (nil: none, every model).
    let others: Predicate<T>?
    /// The other parts and the relationship test, not negated.
    let othersAndTest: Predicate<T>

    /// The split of `predicate`, or nil when no part of it is a negated to-many test.
    init?(_ predicate: Predicate<T>) {
        let parts = Predicates.conjuncts(of: predicate)
        guard let position = parts.firstIndex(where: { Self.isNegatedRelationshipTest($0) }) else { return nil }
        var others = parts
        let negated = others.remove(at: position)
        guard let test = Self.operand(of: negated) else { return nil }
        self.others = others.isEmpty ? nil : Predicates.all(others)
        // The test after the other parts, in their order: they translate with the same aliases
        // (t1, t2, …) as in the others' own SQL, and the test takes the next ones.
        self.othersAndTest = Predicates.all(others + [test])
    }

    /// The test a negated to-many test negates (`$0.tags.contains { … }` for `!$0.tags.contains { … }`),
    /// or nil for any other predicate.
    static func operand(of predicate: Predicate<T>) -> Predicate<T>? {
        guard isNegatedRelationshipTest(predicate) else { return nil }
        return Predicate<T> { input in PredicateExpressions.ObjectGraphNegationOperand(negated: predicate, input: input) }
    }

    private static func isNegatedRelationshipTest(_ predicate: Predicate<T>) -> Bool {
        guard let negation = predicate.expression as? any NegationNode else { return false }
        return negation.operand is any ToManyMembershipNode
    }
}

/// `PredicateExpressions.Negation` of any operand type, seen through its operand.
protocol NegationNode {
    var operand: Any { get }
}

extension PredicateExpressions.Negation: NegationNode {
    var operand: Any { wrapped }
}

/// `contains(where:)`, which the translator accepts only on a to-many relationship.
protocol ToManyMembershipNode {}

extension PredicateExpressions.SequenceContainsWhere: ToManyMembershipNode {}

extension PredicateExpressions {
    /// The operand of a negated predicate (`!test`), evaluated with this node's input: `test`.
    struct ObjectGraphNegationOperand<T>: StandardPredicateExpression {
        typealias Output = Bool
        let negated: Predicate<T>
        let input: PredicateExpressions.Variable<T>

        init(negated: Predicate<T>, input: PredicateExpressions.Variable<T>) {
            self.negated = negated
            self.input = input
        }

        func evaluate(_ bindings: PredicateBindings) throws -> Bool {
            guard let value = bindings[input] else {
                throw SwiftDataError(.unsupportedPredicate, "a split predicate was evaluated without its input")
            }
            return try !negated.evaluate(value)
        }

        /// Made only while counting, never stored: Codable only because every node must be.
        init(from decoder: any Decoder) throws {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "a split predicate cannot be decoded"))
        }

        func encode(to encoder: any Encoder) throws {
            throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath,
                                                         debugDescription: "a split predicate cannot be encoded"))
        }
    }
}

extension PredicateExpressions.ObjectGraphNegationOperand: @unchecked Sendable {}

extension PredicateExpressions.ObjectGraphNegationOperand: SQLTranslatableExpression {
    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        guard let negation = negated.expression as? any NegationNode else {
            throw translation.unsupported(self, detail: "the split part is not a negation")
        }
        translation.bind(negated.variable.key, to: try translation.lookup(input.key))
        return try translation.term(negation.operand)
    }
}
