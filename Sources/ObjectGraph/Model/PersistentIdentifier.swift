import Foundation

/// Identifies one model across contexts: its entity, its store and its key there.
///
/// A model inserted but not yet saved has a temporary identifier; saving gives it a permanent one.
/// Identifiers are `Sendable`, so they are what to pass between tasks instead of models.
public struct PersistentIdentifier: Hashable, Comparable, Codable, Identifiable, Sendable, CustomStringConvertible {
    /// The key part of an identifier: a row's primary key once saved, a UUID before that.
    public struct ID: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
        let primaryKey: Int64?
        let temporaryKey: UUID?

        public static func < (lhs: ID, rhs: ID) -> Bool {
            switch (lhs.primaryKey, rhs.primaryKey) {
            case let (left?, right?): left < right
            case (.some, nil): true
            case (nil, .some): false
            case (nil, nil): (lhs.temporaryKey?.uuidString ?? "") < (rhs.temporaryKey?.uuidString ?? "")
            }
        }

        public var description: String {
            if let primaryKey { return "p\(primaryKey)" }
            return "t\(temporaryKey?.uuidString ?? "")"
        }
    }

    public let id: ID
    public let entityName: String
    public let storeIdentifier: String?

    init(entityName: String, storeIdentifier: String?, primaryKey: Int64) {
        self.id = ID(primaryKey: primaryKey, temporaryKey: nil)
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
    }

    init(entityName: String, temporaryKey: UUID) {
        self.id = ID(primaryKey: nil, temporaryKey: temporaryKey)
        self.entityName = entityName
        self.storeIdentifier = nil
    }

    /// Makes the identifier of a saved model from its store, entity and integer primary key.
    public static func identifier<T: Codable & Hashable>(
        for storeIdentifier: String, entityName: String, primaryKey: T
    ) throws -> PersistentIdentifier {
        guard let key = (primaryKey as? any BinaryInteger).flatMap({ Int64(exactly: $0) }) else {
            throw SwiftDataError(.unsupportedKeyPath, "ObjectGraph primary keys are integers; \(primaryKey) is not")
        }
        return PersistentIdentifier(entityName: entityName, storeIdentifier: storeIdentifier, primaryKey: key)
    }

    /// True once the model has been saved.
    public var isTemporary: Bool { id.primaryKey == nil }
    var primaryKey: Int64? { id.primaryKey }

    /// The key alone: a context looks up every fetched row by its identifier, and hashing the entity's
    /// and the store's names as well (two strings, one a UUID) cost more than the rest of the lookup.
    /// Identifiers of other entities with the same key share a hash and differ by `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
    }

    public static func < (lhs: PersistentIdentifier, rhs: PersistentIdentifier) -> Bool {
        (lhs.entityName, lhs.id) < (rhs.entityName, rhs.id)
    }

    public var description: String { "\(entityName)/\(id)" }
}
