import Foundation
import GRDB

/// Whether SQL can order values of a `Comparable` type by their stored form, as their `<` orders them.
///
/// A predicate's `<` or a sort descriptor means the type's own `<`, which `Predicate.evaluate` and a
/// fetch of unsaved models use. Numbers, dates, text (by code points), `Decimal` (``SortableDecimal``)
/// and UUIDs (their bytes) are stored in forms SQLite orders the same way. An enum stored as its raw
/// value is not: its `<` is whatever its author wrote (`CodingLanguage` orders by display name), so
/// comparing raw values gave answers that changed when the models were saved. Nor is a struct stored
/// as JSON text.
enum StoredOrder {
    /// SQLite's order of the stored values is the type's.
    case asStored
    /// A `CaseIterable` type: the stored form of each case, in the order of its `<`. SQL compares
    /// the cases' places in this list (`rankSQL`).
    case ranked([DatabaseValue])
    /// SQL cannot order these values as the type does; the reason names the type and what to do.
    case unordered(reason: String)

    /// The order of values of `type` (or of the type an optional wraps).
    static func of(_ type: Any.Type) -> StoredOrder {
        let key = ObjectIdentifier(type)
        if let known = known.withLock({ $0[key] }) { return known }
        let order = make(for: nonOptional(type))
        // Bounded by the types a program compares: nothing to evict.
        known.withLock { $0[key] = order }
        return order
    }

    private static let known = LockedValue<[ObjectIdentifier: StoredOrder]>([:])

    private static func make(for type: Any.Type) -> StoredOrder {
        // A type that cannot be stored is not read from a column: nothing to reorder.
        guard let codec = AttributeCodec.make(for: type) else { return .asStored }
        if let enumerable = type as? any (CaseIterable & Comparable).Type, let cases = try? storedCases(enumerable, codec: codec) {
            return .ranked(cases)
        }
        if codec.storesJSON {
            return .unordered(reason: "\(type) is stored as JSON text, which does not order as its values do; "
                + "compare or sort by one of its members, or make it CaseIterable")
        }
        if !(type is any StorableScalar.Type), type is any RawRepresentable.Type {
            return .unordered(reason: "\(type) is stored as its raw value, whose order need not be its `<`; "
                + "make it CaseIterable (its cases are then ranked by `<`), or compare and sort by its rawValue")
        }
        return .asStored
    }

    private static func storedCases<T: CaseIterable & Comparable>(_ type: T.Type, codec: AttributeCodec) throws -> [DatabaseValue] {
        try T.allCases.sorted().map { try codec.encode($0) }
    }

    /// A value's place among `cases` (NULL for a value that is none of them, which no comparison keeps).
    static func rankSQL(_ value: SQLFragment, among cases: [DatabaseValue]) -> SQLFragment {
        let places = cases.indices.map { "WHEN ? THEN \($0)" }.joined(separator: " ")
        return SQLFragment("(CASE \(value.sql) \(places) END)", value.arguments + cases)
    }

    /// The same for an ORDER BY term, which has no arguments: the cases are written as literals.
    static func rankSQL(_ value: String, among cases: [DatabaseValue]) -> String {
        let places = cases.enumerated().map { "WHEN \(literal($0.element)) THEN \($0.offset)" }.joined(separator: " ")
        return "(CASE \(value) \(places) END)"
    }

    private static func literal(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: "NULL"
        case .int64(let number): String(number)
        // Swift prints the shortest text that reads back as the same double.
        case .double(let number): number.isFinite ? "\(number)" : "NULL"
        case .string(let text): "'\(text.replacingOccurrences(of: "'", with: "''"))'"
        case .blob(let bytes): "X'\(bytes.map { String(format: "%02X", $0) }.joined())'"
        }
    }
}
