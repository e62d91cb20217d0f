import Foundation
import GRDB

/// What read transactions and the cache know a store by: its own object, made before them.
final class StoreIdentity: Sendable {}

/// The read transactions open on the current thread (`ModelContext.withReadTransaction`), innermost
/// last: a store's reads made inside one go through its connection, and see what it sees.
///
/// A task-local value, read without a lock, that stays with the thread that opened it: a task started
/// inside the body inherits the value but runs elsewhere, and there the transaction is not its own.
struct ReadTransactionScope: Sendable {
    @TaskLocal static var open: [ReadTransactionScope] = []

    /// The store whose connection holds the transaction.
    let store: ObjectIdentifier
    /// The store's generation (`AggregateCache`) before the transaction began.
    let generation: UInt64
    private let thread: ThreadIdentity

    init(store: ObjectIdentifier, generation: UInt64) {
        self.store = store
        self.generation = generation
        thread = ThreadIdentity()
    }

    /// The transaction of `store` open on this thread, if any.
    static func current(for store: ObjectIdentifier) -> ReadTransactionScope? {
        let scopes = open
        guard !scopes.isEmpty else { return nil }
        let here = ThreadIdentity()
        return scopes.last { $0.store == store && $0.thread == here }
    }
}

/// The current thread, comparable with the thread that made another identity.
private struct ThreadIdentity: Equatable, @unchecked Sendable {
    private let thread = pthread_self()

    static func == (lhs: ThreadIdentity, rhs: ThreadIdentity) -> Bool {
        pthread_equal(lhs.thread, rhs.thread) != 0
    }
}

extension SQLiteStore {
    /// Runs `body` in one read transaction: every read this store makes on this thread meanwhile
    /// goes through that transaction's connection (see `read`). Nested calls share the outer one.
    func withReadTransaction<R>(_ body: () throws -> R) throws -> R {
        if readTransactionOnThisThread != nil { return try body() }
        // Taken before the transaction reads anything, so that a change the store makes meanwhile
        // is known to the cache as newer than the transaction (see `AggregateCache.value`).
        let generation = aggregateCache.currentGeneration()
        // Dated before the transaction reads anything too: files a save drops from now on stay
        // until it ends, since its rows may still name them.
        let began = externalFileRetirement?.transactionBegins()
        defer { if let began { externalFileRetirement?.transactionEnded(began) } }
        return try writer.read { db in
            // SQLite takes a transaction's snapshot at its first read: take it now, then look for
            // other processes' writes once more. One that committed before the snapshot is found
            // here, and moves the generation past the transaction's, whose reads then compute
            // everything afresh; one that commits later is not in the snapshot. Either way the reads
            // inside need not look again (`AggregateCache.value`).
            _ = try Int.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM sqlite_master LIMIT 1"))
            aggregateCache.forgetForeignWrites()
            let scope = ReadTransactionScope(store: ObjectIdentifier(identity), generation: generation)
            return try ReadTransactionScope.$open.withValue(ReadTransactionScope.open + [scope]) {
                try body()
            }
        }
    }

    /// Reads from the store: inside `withReadTransaction` through its connection and transaction,
    /// otherwise in a read transaction of its own.
    func read<T>(_ body: (Database) throws -> T) throws -> T {
        if readTransactionOnThisThread != nil {
            // GRDB's `read` refuses to run on a connection that is already reading.
            return try writer.unsafeReentrantRead(body)
        }
        return try writer.read(body)
    }

    /// `read`, with its statements left out of the SQL log when `inBackground`: work done off a
    /// request's path, which the statements a call is seen to run must not include.
    func read<T>(inBackground: Bool, _ body: (Database) throws -> T) throws -> T {
        try read { db in inBackground ? try sqlLog.unrecorded(db) { try body(db) } : try body(db) }
    }

    /// The read transaction of this store open on this thread, if any.
    private var readTransactionOnThisThread: ReadTransactionScope? {
        ReadTransactionScope.current(for: ObjectIdentifier(identity))
    }

    /// Throws when this thread is inside a read transaction of this store: writing there would wait
    /// for that transaction to end (a backup's barrier), or fail on the connection it holds (a store
    /// in memory has one connection), and its reads would not see what was written.
    func requireNoReadTransaction(_ operation: String) throws {
        guard readTransactionOnThisThread == nil else {
            throw SwiftDataError(
                .saveNotAllowed,
                "\(operation) cannot run inside withReadTransaction, whose reads keep the store as it was when "
                    + "the transaction began: write after it ends. Nothing was written")
        }
    }
}
