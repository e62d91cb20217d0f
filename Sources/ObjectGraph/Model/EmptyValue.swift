import Foundation

/// What a property reads when its model's row is gone and nothing in memory gives it a value: the
/// model of `ModelContext.model(for:)` for an identifier whose row was deleted, the model a
/// non-optional to-one refers to when its row was deleted behind ObjectGraph, or a column a partial
/// fetch left out when the row was deleted before it was read. A getter cannot throw, and stopping
/// the process there lost whatever the program had not saved; the model says `isDeleted` instead.
///
/// Types with no empty value (a `Codable` struct, an enum that is not `CaseIterable`) still stop,
/// with a message that says why.
enum EmptyValue {
    /// The empty value of `type`: zero for a number, an empty string, array, set, dictionary or
    /// `Data`, false, the reference date (2001-01-01), an all-zero `UUID` (which no `UUID()` gives),
    /// or a `CaseIterable` enum's first case; nil for any other type.
    static func of<Value>(_ type: Value.Type) -> Value? {
        let empty: Any? = switch type {
        case let number as any AdditiveArithmetic.Type: zero(of: number)
        case let collection as any RangeReplaceableCollection.Type: emptyCollection(of: collection)
        case let set as any SetAlgebra.Type: emptySet(of: set)
        case let dictionary as any ExpressibleByDictionaryLiteral.Type: emptyDictionary(of: dictionary)
        case is Bool.Type: false
        case is Date.Type: Date(timeIntervalSinceReferenceDate: 0)
        case is UUID.Type: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        case let cases as any CaseIterable.Type: firstCase(of: cases)
        default: nil
        }
        return empty as? Value
    }

    private static func zero<Number: AdditiveArithmetic>(of type: Number.Type) -> Any { Number.zero }
    private static func emptyCollection<Elements: RangeReplaceableCollection>(of type: Elements.Type) -> Any { Elements() }
    private static func emptySet<Members: SetAlgebra>(of type: Members.Type) -> Any { Members() }
    /// `init(dictionaryLiteral:)` with no elements.
    private static func emptyDictionary<Entries: ExpressibleByDictionaryLiteral>(of type: Entries.Type) -> Any { Entries() }
    private static func firstCase<Cases: CaseIterable>(of type: Cases.Type) -> Any? { Cases.allCases.first }
}
