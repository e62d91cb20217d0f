import Foundation

/// An error thrown by ObjectGraph, with a message that names the model and property involved.
///
/// Match errors by kind, as with SwiftData's `SwiftDataError`, whose names each kind also has here:
/// ```swift
/// do { try context.save() } catch SwiftDataError.uniqueConstraintViolation { … }
/// do { … } catch let error as SwiftDataError {
///     switch error { case .loadIssueModelContainer: …; default: … }
/// }
/// ```
/// Two errors are equal when they are of the same kind (`code`): the message explains the error and
/// is not compared, so `error == .duplicateConfiguration` holds for any such error.
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
        /// A `ModelConfiguration`'s name, which names its store file, holds a `/` or a NUL character.
        public static let configurationFileNameContainsInvalidCharacters = Code(rawValue: "configurationFileNameContainsInvalidCharacters")
        /// A `ModelConfiguration`'s name makes a store file name that leaves no room, within a file
        /// name's 255 bytes, for the files kept beside the store (over 215 bytes with `.store`).
        public static let configurationFileNameTooLong = Code(rawValue: "configurationFileNameTooLong")
        /// A `ModelConfiguration`'s schema has an entity that the container's schema lacks.
        public static let configurationSchemaNotFoundInContainerSchema = Code(rawValue: "configurationSchemaNotFoundInContainerSchema")
        /// SwiftData refuses a batched fetch that includes unsaved changes; ObjectGraph does that fetch
        /// (unsaved changes included) and never throws this. Here so that code matching it compiles.
        public static let includePendingChangesWithBatchSize = Code(rawValue: "includePendingChangesWithBatchSize")
        /// SwiftData refuses to sort unsaved changes in `fetchIdentifiers`; ObjectGraph sorts them
        /// where their save will put them and never throws this. Here so that code matching it compiles.
        public static let sortingPendingChangesWithIdentifiers = Code(rawValue: "sortingPendingChangesWithIdentifiers")
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
        lhs.code == rhs.code
    }

    /// Matches an error by its kind in a `catch` clause: `catch SwiftDataError.saveNotAllowed`.
    public static func ~= (pattern: SwiftDataError, error: any Error) -> Bool {
        (error as? SwiftDataError)?.code == pattern.code
    }

    /// An error of a kind, as SwiftData names them, for matching (`catch SwiftDataError.unknownSchema`).
    private init(kind: Code) {
        self.init(kind, kind.rawValue)
    }
}

// Each kind as an error, under SwiftData's names (and the kinds ObjectGraph adds), for `catch` clauses,
// `switch` cases and `==`. A thrown error carries its own message; these carry the kind's name.
extension SwiftDataError {
    public static var unsupportedAttributeType: SwiftDataError { SwiftDataError(kind: .unsupportedAttributeType) }
    public static var unsupportedPredicate: SwiftDataError { SwiftDataError(kind: .unsupportedPredicate) }
    public static var unsupportedSortDescriptor: SwiftDataError { SwiftDataError(kind: .unsupportedSortDescriptor) }
    public static var unsupportedKeyPath: SwiftDataError { SwiftDataError(kind: .unsupportedKeyPath) }
    public static var uniqueConstraintViolation: SwiftDataError { SwiftDataError(kind: .uniqueConstraintViolation) }
    public static var saveNotAllowed: SwiftDataError { SwiftDataError(kind: .saveNotAllowed) }
    public static var loadIssueModelContainer: SwiftDataError { SwiftDataError(kind: .loadIssueModelContainer) }
    public static var duplicateConfiguration: SwiftDataError { SwiftDataError(kind: .duplicateConfiguration) }
    public static var modelValidationFailure: SwiftDataError { SwiftDataError(kind: .modelValidationFailure) }
    public static var missingModelContext: SwiftDataError { SwiftDataError(kind: .missingModelContext) }
    public static var unreadableValue: SwiftDataError { SwiftDataError(kind: .unreadableValue) }
    public static var externalStorageFailure: SwiftDataError { SwiftDataError(kind: .externalStorageFailure) }
    public static var unknownEntity: SwiftDataError { SwiftDataError(kind: .unknownEntity) }
    public static var escapingMutation: SwiftDataError { SwiftDataError(kind: .escapingMutation) }
    public static var incompatibleSchema: SwiftDataError { SwiftDataError(kind: .incompatibleSchema) }
    public static var storeFailure: SwiftDataError { SwiftDataError(kind: .storeFailure) }
    public static var saveConflict: SwiftDataError { SwiftDataError(kind: .saveConflict) }
    public static var backwardMigration: SwiftDataError { SwiftDataError(kind: .backwardMigration) }
    public static var unknownSchema: SwiftDataError { SwiftDataError(kind: .unknownSchema) }
    public static var migrationFailure: SwiftDataError { SwiftDataError(kind: .migrationFailure) }
    public static var invalidTransactionFetchRequest: SwiftDataError { SwiftDataError(kind: .invalidTransactionFetchRequest) }
    public static var historyTokenExpired: SwiftDataError { SwiftDataError(kind: .historyTokenExpired) }
    public static var backupFailure: SwiftDataError { SwiftDataError(kind: .backupFailure) }
    public static var configurationFileNameContainsInvalidCharacters: SwiftDataError {
        SwiftDataError(kind: .configurationFileNameContainsInvalidCharacters)
    }
    public static var configurationFileNameTooLong: SwiftDataError { SwiftDataError(kind: .configurationFileNameTooLong) }
    public static var configurationSchemaNotFoundInContainerSchema: SwiftDataError {
        SwiftDataError(kind: .configurationSchemaNotFoundInContainerSchema)
    }
    public static var includePendingChangesWithBatchSize: SwiftDataError { SwiftDataError(kind: .includePendingChangesWithBatchSize) }
    public static var sortingPendingChangesWithIdentifiers: SwiftDataError { SwiftDataError(kind: .sortingPendingChangesWithIdentifiers) }
}

extension SwiftDataError {
    static func unsupportedAttributeType(entity: String, property: String, type: Any.Type) -> SwiftDataError {
        SwiftDataError(
            .unsupportedAttributeType,
            "\(entity).\(property) has type \(type), which ObjectGraph cannot store: use a number, Bool, String, "
                + "Data, Date, Decimal, URL, UUID, an enum with a raw value, a Codable type, or a model",
            entity: entity, property: property)
    }

    static func unregisteredValueTransformer(_ reference: Schema.Attribute.TransformerReference, entity: String, property: String) -> SwiftDataError {
        let named = switch reference {
        case .type(let type): "the value transformer \(type), which cannot be made"
        case .name(let name): "the value transformer “\(name)”, which is not registered: call "
            + "ValueTransformer.setValueTransformer(_:forName:) before making the container"
        }
        return SwiftDataError(.unsupportedAttributeType, "\(entity).\(property) is stored through \(named)", entity: entity, property: property)
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
