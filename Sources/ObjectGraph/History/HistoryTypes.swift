import Foundation

// SwiftData's history (iOS 18): every save that writes records a transaction, which lists the
// models it inserted, updated and deleted. `ModelContext.fetchHistory(_:)` reads them back, for a
// process to catch up with what another process or context saved since a token it kept.

/// A bookmark in a store's history: the transactions after it are the ones a reader has not seen.
public protocol HistoryToken: Comparable, Codable, Hashable, Identifiable, Sendable {
    associatedtype TokenType: Codable, Hashable, Sendable
    /// The store whose history the token marks.
    var storeIdentifier: String { get }
    var tokenValue: TokenType? { get }
}

/// The token of ObjectGraph's store: the number of a transaction, which only grows, even across
/// `deleteHistory(_:)`.
public struct DefaultHistoryToken: HistoryToken {
    public let storeIdentifier: String
    public let tokenValue: Int64?

    init(storeIdentifier: String, transaction: Int64) {
        self.storeIdentifier = storeIdentifier
        self.tokenValue = transaction
    }

    public var id: String { "\(storeIdentifier)/\(tokenValue ?? 0)" }

    /// Tokens of one store compare by transaction; tokens of different stores by store first, so
    /// that an array of them still sorts.
    public static func < (lhs: DefaultHistoryToken, rhs: DefaultHistoryToken) -> Bool {
        if lhs.storeIdentifier != rhs.storeIdentifier { return lhs.storeIdentifier < rhs.storeIdentifier }
        return (lhs.tokenValue ?? 0) < (rhs.tokenValue ?? 0)
    }
}

/// The changes one save made, as `fetchHistory(_:)` returns them.
public protocol HistoryTransaction: Hashable, Identifiable, Sendable {
    associatedtype TokenType: HistoryToken
    associatedtype TransactionIdentifier: Comparable, Hashable, Sendable
    /// The saving context's `author`.
    var author: String? { get }
    /// Deletes, then updates, then inserts, in the order the save wrote them.
    var changes: [HistoryChange] { get }
    var storeIdentifier: String { get }
    var timestamp: Date { get }
    var token: TokenType { get }
    var transactionIdentifier: TransactionIdentifier { get }
}

public struct DefaultHistoryTransaction: HistoryTransaction {
    public let author: String?
    /// Deletes, then updates, then inserts, in the order the save wrote them. Read from the store's
    /// record the first time they are asked for (`fetchHistory(_:)` does so for each transaction it
    /// returns, so that a record that cannot be read is its error): a predicate on the token, the time
    /// or the author passes over transactions without reading what they changed.
    public var changes: [HistoryChange] { recordedChanges.changes }
    /// The changes, read once.
    let recordedChanges: RecordedHistoryChanges
    public let storeIdentifier: String
    public let timestamp: Date
    public let token: DefaultHistoryToken
    public let transactionIdentifier: Int64
    /// `Bundle.main.bundleIdentifier` of the saving process, empty when it has none (a command-line
    /// program on Linux).
    public let bundleIdentifier: String
    public let processIdentifier: String

    public var id: Int64 { transactionIdentifier }

    /// One transaction is one save of one store: its identifier says which.
    public static func == (lhs: DefaultHistoryTransaction, rhs: DefaultHistoryTransaction) -> Bool {
        lhs.transactionIdentifier == rhs.transactionIdentifier && lhs.storeIdentifier == rhs.storeIdentifier
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(transactionIdentifier)
        hasher.combine(storeIdentifier)
    }
}

/// A transaction's changes, decoded from the store's record the first time they are read, then kept.
final class RecordedHistoryChanges: @unchecked Sendable {
    // Unchecked: `outcome` is only read and written under `lock`, and `decode` is immutable.
    private let lock = NSLock()
    private let decode: @Sendable () throws -> [HistoryChange]
    private var outcome: Result<[HistoryChange], any Error>?

    init(decode: @escaping @Sendable () throws -> [HistoryChange]) {
        self.decode = decode
    }

    /// The changes, decoded now if they were not yet; the error if the record cannot be read.
    func decoded() throws -> [HistoryChange] {
        try lock.withLock {
            if let outcome { return try outcome.get() }
            let result = Result { try decode() }
            outcome = result
            return try result.get()
        }
    }

    /// Whether decoding was tried and failed (a predicate read them and saw none).
    var failed: Bool {
        lock.withLock {
            guard case .failure = outcome else { return false }
            return true
        }
    }

    /// The changes, or none if the record cannot be read: `fetchHistory` decoded every transaction
    /// it returned and threw if one could not be, so a transaction in hand always has them.
    var changes: [HistoryChange] { (try? decoded()) ?? [] }
}

/// One model a transaction inserted, updated or deleted.
public enum HistoryChange: Sendable {
    case insert(any HistoryInsert)
    case update(any HistoryUpdate)
    case delete(any HistoryDelete)

    public var changedPersistentIdentifier: PersistentIdentifier {
        switch self {
        case .insert(let change): change.changedPersistentIdentifier
        case .update(let change): change.changedPersistentIdentifier
        case .delete(let change): change.changedPersistentIdentifier
        }
    }
}

/// Where a change sits in the history: its transaction, then its place there.
public struct HistoryChangeIdentifier: Comparable, Hashable, Codable, Sendable {
    public let transaction: Int64
    public let position: Int

    public static func < (lhs: HistoryChangeIdentifier, rhs: HistoryChangeIdentifier) -> Bool {
        (lhs.transaction, lhs.position) < (rhs.transaction, rhs.position)
    }
}

public protocol HistoryInsert<Model>: Hashable, Identifiable, Sendable {
    associatedtype Model: PersistentModel
    /// The model's identifier after the save.
    var changedPersistentIdentifier: PersistentIdentifier { get }
    var changeIdentifier: HistoryChangeIdentifier { get }
    var transactionIdentifier: Int64 { get }
}

public protocol HistoryUpdate<Model>: Hashable, Identifiable, Sendable {
    associatedtype Model: PersistentModel
    var changedPersistentIdentifier: PersistentIdentifier { get }
    var changeIdentifier: HistoryChangeIdentifier { get }
    var transactionIdentifier: Int64 { get }
    /// The attributes and relationships the save wrote, in the model's declaration order.
    var updatedAttributes: [any PartialKeyPath<Model> & Sendable] { get }
}

public protocol HistoryDelete<Model>: Hashable, Identifiable, Sendable {
    associatedtype Model: PersistentModel
    var changedPersistentIdentifier: PersistentIdentifier { get }
    var changeIdentifier: HistoryChangeIdentifier { get }
    var transactionIdentifier: Int64 { get }
    /// The values of the model's `@Attribute(.preserveValueOnDeletion)` attributes when it was deleted.
    var tombstone: HistoryTombstone<Model> { get }
}

/// What the three kinds of change share: which model, and where in the history.
public struct HistoryChangeRecord: Hashable, Sendable {
    let identifier: PersistentIdentifier
    let position: HistoryChangeIdentifier
}

public struct DefaultHistoryInsert<Model: PersistentModel>: HistoryInsert {
    let record: HistoryChangeRecord
    public var changedPersistentIdentifier: PersistentIdentifier { record.identifier }
    public var changeIdentifier: HistoryChangeIdentifier { record.position }
    public var transactionIdentifier: Int64 { record.position.transaction }
    public var id: HistoryChangeIdentifier { record.position }
}

public struct DefaultHistoryUpdate<Model: PersistentModel>: HistoryUpdate {
    let record: HistoryChangeRecord
    public let updatedAttributes: [any PartialKeyPath<Model> & Sendable]
    public var changedPersistentIdentifier: PersistentIdentifier { record.identifier }
    public var changeIdentifier: HistoryChangeIdentifier { record.position }
    public var transactionIdentifier: Int64 { record.position.transaction }
    public var id: HistoryChangeIdentifier { record.position }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.record == rhs.record }
    public func hash(into hasher: inout Hasher) { hasher.combine(record) }
}

public struct DefaultHistoryDelete<Model: PersistentModel>: HistoryDelete {
    let record: HistoryChangeRecord
    public let tombstone: HistoryTombstone<Model>
    public var changedPersistentIdentifier: PersistentIdentifier { record.identifier }
    public var changeIdentifier: HistoryChangeIdentifier { record.position }
    public var transactionIdentifier: Int64 { record.position.transaction }
    public var id: HistoryChangeIdentifier { record.position }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.record == rhs.record }
    public func hash(into hasher: inout Hasher) { hasher.combine(record) }
}

/// The preserved values of a deleted model, by key path: `delete.tombstone[\.name] as? String`.
public struct HistoryTombstone<Model: PersistentModel>: Sequence, Sendable {
    public typealias Element = (keyPath: any PartialKeyPath<Model> & Sendable, value: any Sendable)
    let values: [Element]

    /// The attribute's value when the model was deleted; nil when it was nil, or is not preserved.
    public subscript(keyPath: PartialKeyPath<Model>) -> (any Sendable)? {
        values.first { $0.keyPath == keyPath }?.value
    }

    public func makeIterator() -> IndexingIterator<[Element]> { values.makeIterator() }
}

/// Which transactions `fetchHistory(_:)` returns, in which order, and how many.
public struct HistoryDescriptor<TransactionType: HistoryTransaction>: @unchecked Sendable {
    public var predicate: Predicate<TransactionType>?
    /// The order of the transactions; none (the default) is the order they were saved in.
    public var sortBy: [SortDescriptor<TransactionType>]
    public var fetchLimit: Int?

    public init(predicate: Predicate<TransactionType>? = nil) {
        self.predicate = predicate
        self.sortBy = []
    }

    public init(predicate: Predicate<TransactionType>? = nil, sortBy: [SortDescriptor<TransactionType>]) {
        self.predicate = predicate
        self.sortBy = sortBy
    }
}

/// Who edits through a context, as SwiftData's `ModelContext.editingState` gives it: one per context
/// (`id`), with the author its saves are recorded under in the history.
public struct EditingState: Sendable, Identifiable, Hashable {
    public let id: UUID
    public var author: String?

    public init(id: UUID = UUID(), author: String? = nil) {
        self.id = id
        self.author = author
    }
}
