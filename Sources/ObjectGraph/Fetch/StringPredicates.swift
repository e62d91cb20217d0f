import Foundation
import GRDB

// Foundation on Linux has no `localizedStandardContains`, `caseInsensitiveCompare` or `localizedCompare`
// inside `#Predicate`: the macro calls `PredicateExpressions.build_…` functions that only exist on Apple
// platforms. ObjectGraph supplies them, so that SwiftData search code compiles unchanged, with node
// types that evaluate in memory like Foundation's and translate to SQL functions registered on every
// connection.

extension PredicateExpressions {
    /// `a.localizedStandardContains(b)`: contains, ignoring case and diacritics.
    public struct ObjectGraphLocalizedStandardContains<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        public typealias Output = Bool
        public let root: Root
        public let other: Other

        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        public func evaluate(_ bindings: PredicateBindings) throws -> Bool {
            let haystack = StringFunctions.folded(String(try root.evaluate(bindings)))
            let needle = StringFunctions.folded(String(try other.evaluate(bindings)))
            return needle.isEmpty || haystack.contains(needle)
        }
    }

    /// `a.caseInsensitiveCompare(b)`.
    public struct ObjectGraphStringCaseInsensitiveCompare<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        public typealias Output = ComparisonResult
        public let root: Root
        public let other: Other

        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        public func evaluate(_ bindings: PredicateBindings) throws -> ComparisonResult {
            StringFunctions.caseInsensitiveOrder(String(try root.evaluate(bindings)), String(try other.evaluate(bindings)))
        }
    }

    /// `a.localizedCompare(b)`.
    public struct ObjectGraphStringLocalizedCompare<Root: PredicateExpression, Other: PredicateExpression>: PredicateExpression
    where Root.Output: StringProtocol, Other.Output: StringProtocol {
        public typealias Output = ComparisonResult
        public let root: Root
        public let other: Other

        public init(root: Root, other: Other) {
            self.root = root
            self.other = other
        }

        public func evaluate(_ bindings: PredicateBindings) throws -> ComparisonResult {
            StringFunctions.localizedOrder(String(try root.evaluate(bindings)), String(try other.evaluate(bindings)))
        }
    }

    public static func build_localizedStandardContains<Root, Other>(_ root: Root, _ other: Other)
        -> ObjectGraphLocalizedStandardContains<Root, Other> {
        ObjectGraphLocalizedStandardContains(root: root, other: other)
    }

    public static func build_caseInsensitiveCompare<Root, Other>(_ root: Root, _ other: Other)
        -> ObjectGraphStringCaseInsensitiveCompare<Root, Other> {
        ObjectGraphStringCaseInsensitiveCompare(root: root, other: other)
    }

    public static func build_localizedCompare<Root, Other>(_ root: Root, _ other: Other)
        -> ObjectGraphStringLocalizedCompare<Root, Other> {
        ObjectGraphStringLocalizedCompare(root: root, other: other)
    }
}

extension PredicateExpressions.ObjectGraphLocalizedStandardContains: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}
extension PredicateExpressions.ObjectGraphLocalizedStandardContains: Codable where Root: Codable, Other: Codable {}
extension PredicateExpressions.ObjectGraphLocalizedStandardContains: Sendable where Root: Sendable, Other: Sendable {}

extension PredicateExpressions.ObjectGraphStringCaseInsensitiveCompare: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}
extension PredicateExpressions.ObjectGraphStringCaseInsensitiveCompare: Codable where Root: Codable, Other: Codable {}
extension PredicateExpressions.ObjectGraphStringCaseInsensitiveCompare: Sendable where Root: Sendable, Other: Sendable {}

extension PredicateExpressions.ObjectGraphStringLocalizedCompare: StandardPredicateExpression
where Root: StandardPredicateExpression, Other: StandardPredicateExpression {}
extension PredicateExpressions.ObjectGraphStringLocalizedCompare: Codable where Root: Codable, Other: Codable {}
extension PredicateExpressions.ObjectGraphStringLocalizedCompare: Sendable where Root: Sendable, Other: Sendable {}

/// The string comparisons shared by in-memory evaluation and the SQL functions, so both agree.
enum StringFunctions {
    static let fold = "objectgraph_fold"
    static let caseInsensitiveCompare = "objectgraph_compare_nocase"
    static let localizedCompare = "objectgraph_compare_localized"
    static let characterCount = "objectgraph_character_count"

    static func folded(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
    }

    static func caseInsensitiveOrder(_ lhs: String, _ rhs: String) -> ComparisonResult {
        order(lhs.lowercased(), rhs.lowercased())
    }

    static func localizedOrder(_ lhs: String, _ rhs: String) -> ComparisonResult {
        let left = folded(lhs), right = folded(rhs)
        let byLetters = order(left, right)
        return byLetters == .orderedSame ? order(lhs, rhs) : byLetters
    }

    private static func order(_ lhs: String, _ rhs: String) -> ComparisonResult {
        lhs < rhs ? .orderedAscending : (lhs == rhs ? .orderedSame : .orderedDescending)
    }

    /// Registers the functions on a connection.
    static func register(in db: Database) {
        db.add(function: DatabaseFunction(fold, argumentCount: 1, pure: true) { values in
            String.fromDatabaseValue(values[0]).map(folded)
        })
        db.add(function: DatabaseFunction(characterCount, argumentCount: 1, pure: true) { values in
            String.fromDatabaseValue(values[0])?.count
        })
        db.add(function: DatabaseFunction(caseInsensitiveCompare, argumentCount: 2, pure: true) { values in
            guard let lhs = String.fromDatabaseValue(values[0]), let rhs = String.fromDatabaseValue(values[1]) else { return nil }
            return caseInsensitiveOrder(lhs, rhs).rawValue
        })
        db.add(function: DatabaseFunction(localizedCompare, argumentCount: 2, pure: true) { values in
            guard let lhs = String.fromDatabaseValue(values[0]), let rhs = String.fromDatabaseValue(values[1]) else { return nil }
            return localizedOrder(lhs, rhs).rawValue
        })
    }
}

/// SQL functions for arithmetic that SQLite does otherwise than Swift.
enum NumberFunctions {
    static let divide = "objectgraph_divide"

    /// Registers the functions on a connection.
    static func register(in db: Database) {
        // A NaN (0 / 0) is returned as NULL, SQLite's only way to hold it: no comparison matches it,
        // as none does in Swift, and `!=` (written `IS NOT`) holds, as in Swift.
        db.add(function: DatabaseFunction(divide, argumentCount: 2, pure: true) { values in
            guard let dividend = Double.fromDatabaseValue(values[0]), let divisor = Double.fromDatabaseValue(values[1]) else {
                return nil
            }
            let quotient = dividend / divisor
            return quotient.isNaN ? nil : quotient
        })
    }
}
