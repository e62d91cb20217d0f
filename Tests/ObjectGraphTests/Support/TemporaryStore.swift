import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// A folder of its own for each test, removed afterwards, holding real SQLite store files.
class StoreTestCase: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("objectgraph-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    var storeURL: URL { folder.appendingPathComponent("test.store") }

    func makeContainer(_ types: any PersistentModel.Type..., allowsSave: Bool = true) throws -> ModelContainer {
        try ModelContainer(
            for: Schema(types),
            configurations: ModelConfiguration(url: storeURL, allowsSave: allowsSave))
    }

    /// Reads the store file directly, bypassing ObjectGraph, to check what was really written.
    func rawRows(_ sql: String) throws -> [Row] {
        let queue = try DatabaseQueue(path: storeURL.path)
        return try queue.read { try Row.fetchAll($0, sql: sql) }
    }

    /// The queries of model data the store's SQL log shows while `body` runs (reads of `sqlite_master`
    /// are left out: GRDB's own check when it opens a reader connection, and the read that takes a
    /// read transaction's snapshot; so are reads of the history, which say what another process wrote).
    func selects(in container: ModelContainer, _ body: () throws -> Void) rethrows -> [String] {
        try container.store.sqlLog.statements(during: body).filter {
            $0.hasPrefix("SELECT") && !$0.contains("sqlite_master") && !$0.contains(HistoryLog.table)
        }
    }

    /// SQLite's plan for a statement, its steps one per line, made by `reader`'s connection.
    func queryPlan(of sql: String, arguments: [DatabaseValue], in reader: any DatabaseReader) throws -> String {
        try reader.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: StatementArguments(arguments))
                .map { $0["detail"] as String }.joined(separator: "\n")
        }
    }

    /// Runs `body` on another thread and waits for it: a read transaction open on this thread
    /// stays open meanwhile, and a save there is not inside it.
    func onAnotherThread(_ body: @escaping @Sendable () throws -> Void) throws {
        let done = DispatchSemaphore(value: 0)
        let failure = LockedValue<(any Error)?>(nil)
        DispatchQueue.global().async {
            do { try body() } catch { failure.withLock { $0 = error } }
            done.signal()
        }
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    var externalFiles: [String] {
        let directory = folder.appendingPathComponent("test.store.external")
        // The folder's lock file (`.in-use.lock`) holds no value.
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { !$0.hasPrefix(".") }
    }
}

extension StoreTestCase {
    /// Runs a random test's sequence for each of `seeds`, of `steps` steps, or for the one seed and
    /// the number of steps the environment names (`<prefix>_SEED`, `<prefix>_STEPS`), to hunt with others.
    func forEachRandomRun(environmentPrefix prefix: String, seeds: [UInt64], steps: Int, _ run: (UInt64, Int) throws -> Void) rethrows {
        let environment = ProcessInfo.processInfo.environment
        let chosen: UInt64? = environment["\(prefix)_SEED"].flatMap { UInt64($0) }
        let count = environment["\(prefix)_STEPS"].flatMap { Int($0) } ?? steps
        for seed in chosen.map({ [$0] }) ?? seeds {
            try run(seed, count)
        }
    }
}

extension SeededGenerator {
    /// True `percent` times in a hundred.
    mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &self) < percent }

    /// One of `values`, nil when there are none. Drawn from their sorted order: a set's or a
    /// dictionary's own order changes from run to run, and a seed must draw the same value each time.
    mutating func pick<T: Comparable>(_ values: some Collection<T>) -> T? {
        values.isEmpty ? nil : values.sorted()[Int.random(in: 0..<values.count, using: &self)]
    }
}

/// Thrown by a random test at its first difference from its plain model: what follows says nothing new.
struct RandomRunDiverged: Error {
    /// Fails the test with `message`, the seed that reproduces it and the run's last steps, and
    /// returns the error that ends the run.
    static func reported(_ message: String, seed: UInt64, log: [String]) -> RandomRunDiverged {
        XCTFail("seed \(seed): \(message)\nlast steps:\n\(log.suffix(30).joined(separator: "\n"))")
        return RandomRunDiverged()
    }
}
