import Foundation

/// Holds back the removal of external files that a save dropped while a read transaction that may
/// still see them is open.
///
/// A read transaction (`withReadTransaction`) sees the rows as they were when it began, so a row it
/// reads may name a file that a later save replaced or deleted. Removed at once, that file would make
/// the row unreadable for the rest of the transaction: a page rendered while another request saved a
/// new image failed. So a dropped file waits until every transaction that began before its save has
/// ended; transactions that began after it do not hold it back, so files do not pile up under a
/// steady stream of overlapping pages. Files still waiting when the process stops are orphans, which
/// the sweep at the next open removes.
final class ExternalFileRetirement: Sendable {
    private struct State {
        /// How many saves that dropped files have committed: the clock transactions are dated by.
        var droppedSaves: UInt64 = 0
        /// The open transactions, by the clock when each began, with how many began then.
        var openTransactions: [UInt64: Int] = [:]
        /// Files waiting, with the clock their save set: a transaction dated before it may see them.
        var waiting: [(save: UInt64, names: [String])] = []
    }

    private let state = LockedValue(State())
    private let remove: @Sendable (String) -> Void

    init(remove: @escaping @Sendable (String) -> Void) {
        self.remove = remove
    }

    /// Called before a read transaction reads anything; returns what `transactionEnded` takes.
    func transactionBegins() -> UInt64 {
        state.withLock { state in
            state.openTransactions[state.droppedSaves, default: 0] += 1
            return state.droppedSaves
        }
    }

    /// Removes the files that only this transaction was holding back.
    func transactionEnded(_ began: UInt64) {
        let removable: [String] = state.withLock { state in
            if let count = state.openTransactions[began], count > 1 {
                state.openTransactions[began] = count - 1
            } else {
                state.openTransactions[began] = nil
            }
            return Self.takeRemovable(from: &state)
        }
        removable.forEach(remove)
    }

    /// Called after the save that dropped `names` has committed: removes them now unless a
    /// transaction that began before the commit is open.
    func saveCommitted(dropping names: [String]) {
        guard !names.isEmpty else { return }
        let removable: [String] = state.withLock { state in
            // A transaction dated before this tick may have begun before the commit and see the
            // files; one dated at or after it began once the commit was visible.
            state.droppedSaves += 1
            guard Self.oldestOpen(in: state).map({ $0 < state.droppedSaves }) ?? false else { return names }
            state.waiting.append((state.droppedSaves, names))
            return []
        }
        removable.forEach(remove)
    }

    /// How many files are waiting (for tests).
    var waitingCount: Int { state.withLock { $0.waiting.reduce(0) { $0 + $1.names.count } } }

    private static func oldestOpen(in state: State) -> UInt64? {
        state.openTransactions.keys.min()
    }

    private static func takeRemovable(from state: inout State) -> [String] {
        guard !state.waiting.isEmpty else { return [] }
        let oldest = oldestOpen(in: state)
        // Saves are appended in clock order, so the removable ones are a prefix.
        let count = state.waiting.prefix { entry in oldest.map { $0 >= entry.save } ?? true }.count
        let removable = state.waiting.prefix(count).flatMap(\.names)
        state.waiting.removeFirst(count)
        return removable
    }
}
