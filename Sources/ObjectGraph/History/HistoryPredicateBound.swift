import Foundation

// A reader of the history keeps the token of the last transaction it saw and asks for those after it,
// `#Predicate { $0.token > token }`, often. The predicate is tested in memory, but where it plainly
// says where the transactions it can select start, the store reads only those: a comparison of the
// token or the transaction identifier with a value, alone or as a part of `&&`. Anything else
// (`||`, `!`, a comparison with another transaction's token) says nothing, and every transaction is
// read, as before. The predicate is still tested on each, so a bound can only save reading.

/// A predicate expression that may say the least transaction number it can be true for.
protocol HistoryLowerBoundExpression {
    /// The least transaction number of `store` for which the expression, with `transaction` as the
    /// predicate's argument, can be true; nil if it does not say.
    func leastTransaction(of transaction: PredicateExpressions.VariableID, in store: String) -> Int64?
}

extension PredicateExpressions.Conjunction: HistoryLowerBoundExpression {
    func leastTransaction(of transaction: PredicateExpressions.VariableID, in store: String) -> Int64? {
        // Both parts must hold: the later start of the two.
        let left = (lhs as? any HistoryLowerBoundExpression)?.leastTransaction(of: transaction, in: store)
        let right = (rhs as? any HistoryLowerBoundExpression)?.leastTransaction(of: transaction, in: store)
        guard let left else { return right }
        guard let right else { return left }
        return max(left, right)
    }
}

extension PredicateExpressions.Comparison: HistoryLowerBoundExpression {
    func leastTransaction(of transaction: PredicateExpressions.VariableID, in store: String) -> Int64? {
        // `$0.token > value`, `$0.token >= value`, or the same written the other way round.
        if HistoryPredicateBound.isTransactionNumber(lhs, of: transaction), let value = HistoryPredicateBound.number(rhs, in: store) {
            switch op {
            case .greaterThan: return value.addingReportingOverflow(1).overflow ? nil : value + 1
            case .greaterThanOrEqual: return value
            case .lessThan, .lessThanOrEqual: return nil
            }
        }
        if HistoryPredicateBound.isTransactionNumber(rhs, of: transaction), let value = HistoryPredicateBound.number(lhs, in: store) {
            switch op {
            case .lessThan: return value.addingReportingOverflow(1).overflow ? nil : value + 1
            case .lessThanOrEqual: return value
            case .greaterThan, .greaterThanOrEqual: return nil
            }
        }
        return nil
    }
}

enum HistoryPredicateBound {
    typealias Argument = PredicateExpressions.Variable<DefaultHistoryTransaction>

    /// The least transaction a history predicate can select; 0 (all) when it does not say.
    static func leastTransaction<T>(_ predicate: Predicate<T>?, in store: String) -> Int64 {
        guard let predicate, let argument = predicate.variable as? PredicateExpressions.Variable<T>,
              let expression = predicate.expression as? any HistoryLowerBoundExpression else { return 0 }
        return max(0, expression.leastTransaction(of: argument.key, in: store) ?? 0)
    }

    /// Whether `expression` is the argument's token or transaction identifier.
    static func isTransactionNumber(_ expression: Any, of argument: PredicateExpressions.VariableID) -> Bool {
        if let token = expression as? PredicateExpressions.KeyPath<Argument, DefaultHistoryToken> {
            return token.root.key == argument && token.keyPath == \DefaultHistoryTransaction.token
        }
        if let identifier = expression as? PredicateExpressions.KeyPath<Argument, Int64> {
            return identifier.root.key == argument && identifier.keyPath == \DefaultHistoryTransaction.transactionIdentifier
        }
        return false
    }

    /// The transaction number a value stands for: a token of `store` (tokens of another store order
    /// by the store's identifier first, so they say nothing of this one's numbers), or a number.
    static func number(_ expression: Any, in store: String) -> Int64? {
        if let token = expression as? PredicateExpressions.Value<DefaultHistoryToken> {
            return token.value.storeIdentifier == store ? token.value.tokenValue ?? 0 : nil
        }
        return (expression as? PredicateExpressions.Value<Int64>)?.value
    }
}
