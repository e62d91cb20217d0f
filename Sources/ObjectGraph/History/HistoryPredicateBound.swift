import Foundation

// A reader of the history keeps the token of the last transaction it saw and asks for those after it,
// `#Predicate { $0.token > token }`, often. The predicate is tested in memory, but where it plainly
// says where the transactions it can select start, the store reads only those: a comparison of the
// token or the transaction identifier with a value, alone or as a part of `&&`. Anything else
// (`||`, `!`, a comparison with another transaction's token) says nothing, and every transaction is
// read, as before. The predicate is still tested on each, so a bound can only save reading.

/// Where the transactions a predicate can select start: the least number, and whether a token said
/// so (a reader's token, whose transactions after it must all still be there: `historyTokenExpired`).
struct HistoryStart: Equatable {
    var transaction: Int64
    var isFromToken: Bool

    static let everything = HistoryStart(transaction: 0, isFromToken: false)
}

/// A predicate expression that may say the least transaction number it can be true for.
protocol HistoryLowerBoundExpression {
    /// The least transaction number of `store` for which the expression, with `transaction` as the
    /// predicate's argument, can be true; nil if it does not say.
    func start(of transaction: PredicateExpressions.VariableID, in store: String) -> HistoryStart?
}

extension PredicateExpressions.Conjunction: HistoryLowerBoundExpression {
    func start(of transaction: PredicateExpressions.VariableID, in store: String) -> HistoryStart? {
        // Both parts must hold: the later start of the two.
        let left = (lhs as? any HistoryLowerBoundExpression)?.start(of: transaction, in: store)
        let right = (rhs as? any HistoryLowerBoundExpression)?.start(of: transaction, in: store)
        guard let left else { return right }
        guard let right else { return left }
        if left.transaction == right.transaction {
            return HistoryStart(transaction: left.transaction, isFromToken: left.isFromToken || right.isFromToken)
        }
        return left.transaction > right.transaction ? left : right
    }
}

extension PredicateExpressions.Comparison: HistoryLowerBoundExpression {
    func start(of transaction: PredicateExpressions.VariableID, in store: String) -> HistoryStart? {
        // `$0.token > value`, `$0.token >= value`, or the same written the other way round.
        let after: Bool
        let value: (number: Int64, isToken: Bool)
        if HistoryPredicateBound.isTransactionNumber(lhs, of: transaction), let number = HistoryPredicateBound.number(rhs, in: store) {
            guard op == .greaterThan || op == .greaterThanOrEqual else { return nil }
            (after, value) = (op == .greaterThan, number)
        } else if HistoryPredicateBound.isTransactionNumber(rhs, of: transaction), let number = HistoryPredicateBound.number(lhs, in: store) {
            guard op == .lessThan || op == .lessThanOrEqual else { return nil }
            (after, value) = (op == .lessThan, number)
        } else {
            return nil
        }
        guard after else { return HistoryStart(transaction: value.number, isFromToken: value.isToken) }
        let (next, overflow) = value.number.addingReportingOverflow(1)
        return overflow ? nil : HistoryStart(transaction: next, isFromToken: value.isToken)
    }
}

enum HistoryPredicateBound {
    typealias Argument = PredicateExpressions.Variable<DefaultHistoryTransaction>

    /// Where the transactions a history predicate can select start; all of them when it does not say.
    static func start<T>(_ predicate: Predicate<T>?, in store: String) -> HistoryStart {
        guard let predicate, let argument = predicate.variable as? PredicateExpressions.Variable<T>,
              let expression = predicate.expression as? any HistoryLowerBoundExpression,
              let start = expression.start(of: argument.key, in: store), start.transaction > 0 else { return .everything }
        return start
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

    /// The transaction number a value stands for, and whether it is a token: a token of `store`
    /// (tokens of another store order by the store's identifier first, so they say nothing of this
    /// one's numbers), or a number.
    static func number(_ expression: Any, in store: String) -> (number: Int64, isToken: Bool)? {
        if let token = expression as? PredicateExpressions.Value<DefaultHistoryToken> {
            return token.value.storeIdentifier == store ? (token.value.tokenValue ?? 0, true) : nil
        }
        return (expression as? PredicateExpressions.Value<Int64>).map { ($0.value, false) }
    }
}
