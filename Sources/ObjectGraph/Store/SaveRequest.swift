import Foundation
import GRDB

/// Everything one `save()` writes, in the order the store applies it: deletes, updates, inserts.
struct SaveRequest {
    struct Insert {
        let storage: ModelStorage
        /// Column values by slot, external-storage values still inline.
        let row: [DatabaseValue]
        /// To-one relationships to models saved in the same transaction, whose keys are not known yet.
        let pendingReferences: SlotMap<ModelStorage>

        func externalFiles(in result: SaveResult) -> [Int: String] {
            result.externalFileNames[ObjectIdentifier(storage)] ?? [:]
        }
    }

    struct Update {
        let storage: ModelStorage
        let row: [DatabaseValue]
        let changedSlots: [Int]
        let pendingReferences: SlotMap<ModelStorage>
    }

    /// Writes one model's rows in a join table.
    struct JoinWrite {
        enum Change {
            /// The relationship as it now is, in the order of its array.
            case replace(with: [ModelStorage])
            /// Models that joined (appended in this order) and left a relationship that was never loaded.
            case adjust(added: [ModelStorage], removed: [ModelStorage])
        }

        let table: RelationshipMapping.JoinTable
        let owner: ModelStorage
        let slotIndex: Int
        let change: Change
    }

    /// What a saved model's save writes, for the history: its changed columns and relationships,
    /// including a to-many whose rows are the other side's (a folder whose snippets moved).
    struct WrittenProperties {
        let storage: ModelStorage
        /// Slot indexes, in declaration order.
        let slots: [Int]
    }

    /// The saving context's `author`, recorded with the transaction.
    var author: String?
    var inserts: [Insert] = []
    var updates: [Update] = []
    var writtenProperties: [WrittenProperties] = []
    var deletes: [ModelStorage] = []
    var batchDeletes: [BatchDelete] = []
    var joinWrites: [JoinWrite] = []
}

/// `delete(model:where:)`, run by the next save.
struct BatchDelete {
    let layout: EntityLayout
    let condition: SQLFragment?
    /// Rows the condition may match in the store that stay: the context has changed their models, and
    /// its view of its own models wins.
    var keptKeys: Set<Int64> = []
}

/// What the store did, for the context to apply to its models once the transaction has committed.
struct SaveResult {
    enum InsertOutcome {
        case inserted(Int64)
        /// A unique attribute matched a saved row: the insert updated that row instead (an upsert).
        case tookOverRow(Int64)
    }

    var insertOutcomes: [InsertOutcome] = []
    /// The external files now referenced by each written row, by storage and slot.
    var externalFileNames: [ObjectIdentifier: [Int: String]] = [:]
    var batchDeletedKeys: [String: Set<Int64>] = [:]
    /// Foreign keys filled in during the transaction, by storage, as (slot, key) in the order they
    /// were written (a later one for a slot wins). A list, not a dictionary by slot: a new snippet
    /// has one or two, and a dictionary made for each row cost 1% of inserting snippets.
    var foreignKeys: [ObjectIdentifier: [(slot: Int, key: DatabaseValue)]] = [:]
    /// The related keys written to join tables, by storage, as (slot, keys in order), as `foreignKeys`.
    var joinedKeys: [ObjectIdentifier: [(slot: Int, keys: [Int64])]] = [:]
    /// The rows' versions after the save, for updated rows and rows an insert took over.
    var versions: [ObjectIdentifier: Int64] = [:]
}

/// A piece of SQL with its bound arguments. Values are only ever bound, never spliced into the text.
struct SQLFragment {
    var sql: String
    var arguments: [DatabaseValue]
    /// When the whole condition is "the queried row's key is among these" and these are listed by
    /// another table alone (a to-many test's owners, from its join table), the statement that lists
    /// them: a set of the matching keys is read from it without looking up each key in the queried
    /// table. Any fragment built from this one drops it.
    var ownerKeys: KeyListing?

    /// A SELECT of one column of keys, and its arguments (a type of its own: a fragment cannot hold
    /// a fragment).
    struct KeyListing {
        let sql: String
        let arguments: [DatabaseValue]
    }

    init(_ sql: String, _ arguments: [DatabaseValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }
}

extension StatementArguments {
    /// Arguments from column values. GRDB's initializer for a sequence of concrete values maps each one
    /// through a key path, thousands of instructions a value (a save binds every column of every row);
    /// its initializer for optional existentials reads each value directly.
    init(columnValues: [DatabaseValue]) {
        self.init(columnValues.map { $0 as (any DatabaseValueConvertible)? })
    }
}
