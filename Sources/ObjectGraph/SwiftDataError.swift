import Foundation

/// An error thrown by ObjectGraph, with a message that names the model and property involved.
///
/// As with SwiftData's `SwiftDataError`, match errors by kind:
/// ```swift
/// do { try context.save() } catch let error as SwiftDataError where error.code == .uniqueConstraintViolation { … }
/// ```
public struct SwiftDataError: Error, Equatable, CustomStringConvertible, LocalizedError, Sendable {
    /// The kind of failure, stable across releases.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let unsupportedAttributeType = Code(rawValue: "unsupportedAttributeType")
        public static let unsupportedPredicate = Code(rawValue: "unsupportedPredicate")
        public static let unsupportedSortDescriptor = Code(rawValue: "unsupportedSortDescriptor")
        public static let unsupportedKeyPath = Code(rawValue: "unsupportedKeyPath")
        public static let uniqueConstraintViolation = Code(rawValue: "uniqueConstraintViolation")
        public static let saveNotAllowed = Code(rawValue: "saveNotAllowed")
        public static let loadIssueModelContainer = Code(rawValue: "loadIssueModelContainer")
        public static let duplicateConfiguration = Code(rawValue: "duplicateConfiguration")
        public static let modelValidationFailure = Code(rawValue: "modelValidationFailure")
        public static let missingModelContext = Code(rawValue: "missingModelContext")
        public static let unreadableValue = Code(rawValue: "unreadableValue")
        public static let externalStorageFailure = Code(rawValue: "externalStorageFailure")
        public static let unknownEntity = Code(rawValue: "unknownEntity")
        public static let escapingMutation = Code(rawValue: "escapingMutation")
        public static let incompatibleSchema = Code(rawValue: "incompatibleSchema")
        public static let storeFailure = Code(rawValue: "storeFailure")
        /// Another context saved the same model since this context read it.
        public static let saveConflict = Code(rawValue: "saveConflict")
        public static let backwardMigration = Code(rawValue: "backwardMigration")
        public static let unknownSchema = Code(rawValue: "unknownSchema")
        public static let migrationFailure = Code(rawValue: "migrationFailure")
        /// `fetchHistory(_:)` or `deleteHistory(_:)` asked for a kind of transaction the store does not record.
        public static let invalidTransactionFetchRequest = Code(rawValue: "invalidTransactionFetchRequest")
        /// `fetchHistory(_:)` was asked for the transactions after a token, and some of them were deleted.
        public static let historyTokenExpired = Code(rawValue: "historyTokenExpired")
        /// A backup of the store could not be written.
        public static let backupFailure = Code(rawValue: "backupFailure")
    }

    public let code: Code
    public let message: String
    /// The entity and property the error is about, when there is one.
    public let entityName: String?
    public let propertyName: String?

    public init(_ code: Code, _ message: String, entity: String? = nil, property: String? = nil) {
        self.code = code
        self.message = message
        self.entityName = entity
        self.propertyName = property
    }

    public var description: String { message }
    public var errorDescription: String? { message }

    public static func == (lhs: SwiftDataError, rhs: SwiftDataError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }
}

extension SwiftDataError.Code {
    /// Matches an error by its kind in a `catch` pattern: `catch SwiftDataError.Code.saveNotAllowed`.
    public static func ~= (pattern: SwiftDataError.Code, error: any Error) -> Bool {
        (error as? SwiftDataError)?.code == pattern
    }
}

extension SwiftDataError {
    static func unsupportedAttributeType(entity: String, property: String, type: Any.Type) -> SwiftDataError {
        SwiftDataError(
            .unsupportedAttributeType,
            "\(entity).\(property) has type \(type), which ObjectGraph cannot store: use a number, Bool, String, "
                + "Data, Date, Decimal, URL, UUID, an enum with a raw value, a Codable type, or a model",
            entity: entity, property: property)
    }

    static func valueTypeMismatch(expected: Any.Type, found: Any) -> SwiftDataError {
        SwiftDataError(.unreadableValue, "expected a value of type \(expected), found \(type(of: found))")
    }

    static func unreadableValue(_ stored: String, as type: Any.Type) -> SwiftDataError {
        let shown = stored.count > 80 ? String(stored.prefix(80)) + "…" : stored
        return SwiftDataError(.unreadableValue, "the stored value \(shown) cannot be read as \(type)")
    }

    /// Adds the entity and property to an error raised while reading or writing one of its values.
    func located(entity: String, property: String) -> SwiftDataError {
        SwiftDataError(code, "\(entity).\(property): \(message)", entity: entity, property: property)
    }
}
