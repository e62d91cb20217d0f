import Foundation
import GRDB

/// What another process's saves wrote, read from the store's history, so that the results a store
/// keeps (counts, ranks, fetched rows) are dropped only where those saves touched them.
struct RecordedWrites {
    /// The tables and columns written; nil when the history cannot say (an entity or property this
    /// schema does not know, a transaction deleted before it was read, or a history that cannot be read).
    let change: StoreChange?
    /// The newest transaction read.
    let newest: Int64
}

extension SQLiteStore {
    /// The writes of the transactions recorded after `transaction`, read through the writer
    /// connection, whose data version said another connection committed: it sees that commit.
    func recordedWrites(after transaction: Int64) -> RecordedWrites? {
        writer.writeWithoutTransaction { db in recordedWrites(after: transaction, in: db) }
    }

    /// The writes of the transactions recorded after `transaction`, read in `db` (a save's transaction
    /// catching up, or the look above).
    func recordedWrites(after transaction: Int64, in db: Database) -> RecordedWrites? {
        do {
            let (runs, newest, complete) = try HistoryLog.runs(after: transaction, in: db)
            return RecordedWrites(change: complete ? storeChange(recordedIn: runs) : nil, newest: newest)
        } catch {
            logger.warning("could not read the store's history; every kept result is dropped: \(error)")
            return nil
        }
    }

    /// The tables and columns the recorded changes wrote, as `change(made:)` describes a save of this
    /// process. Inserts and deletes change their entity's rows, its full-text entries and its join rows
    /// (a new snippet's tags, a deleted one's); an update, the columns it names and the row's version,
    /// and for a to-many the join rows of the entity.
    func storeChange(recordedIn runs: [HistoryLog.Run]) -> StoreChange? {
        var change = StoreChange()
        for run in runs {
            guard let layout = try? layout(named: run.entity) else { return nil }
            let fullTextTables = fullTextIndexes[layout.name]?.writtenTables ?? []
            let joinTables = (joinTableColumnsByEntity[layout.name] ?? []).map(\.table)
            switch run.kind {
            case .insert, .delete:
                change.rowsChanged(in: layout.name)
                (fullTextTables + joinTables).forEach { change.rowsChanged(in: $0) }
            case .update:
                var columns = ["_version"]
                for name in run.properties ?? [] {
                    guard let slot = layout.slots.first(where: { $0.name == name }) else { return nil }
                    if slot.isToMany {
                        joinTables.forEach { change.rowsChanged(in: $0) }
                    } else {
                        columns.append(slot.name)
                        if slot.attribute?.options.contains(.spotlight) == true { fullTextTables.forEach { change.rowsChanged(in: $0) } }
                    }
                }
                change.columnsUpdated(columns, in: layout.name)
            }
        }
        return change
    }
}
