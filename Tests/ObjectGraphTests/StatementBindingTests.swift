import Foundation
import GRDB
import XCTest
@testable import ObjectGraph

/// `Statement.runOnce(binding:in:)`, which a save uses for its row and join-row INSERTs: values go
/// in as GRDB binds them, a failing step throws SQLite's error and leaves the statement reset, and
/// a call with the wrong number of values runs nothing.
final class StatementBindingTests: XCTestCase {
    private func makeQueue() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (a INTEGER NOT NULL UNIQUE, b TEXT, c REAL, d BLOB)")
        }
        return queue
    }

    func testEveryKindOfValueGoesInAsGRDBBindsIt() throws {
        let queue = try makeQueue()
        let long = String(repeating: "naïve café ☕️ ", count: 400)
        try queue.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO t (a, b, c, d) VALUES (?, ?, ?, ?)")
            try statement.runOnce(binding: [1.databaseValue, "short".databaseValue, 2.5.databaseValue, Data([0, 1, 2]).databaseValue], in: db)
            try statement.runOnce(binding: [2.databaseValue, long.databaseValue, .null, .null], in: db)
            try statement.runOnce(binding: [3.databaseValue, "".databaseValue, (-0.0).databaseValue, Data().databaseValue], in: db)
        }
        let rows = try queue.read { db in try Row.fetchAll(db, sql: "SELECT a, b, c, d FROM t ORDER BY a") }
        XCTAssertEqual(rows.count, 3)
        XCTAssertEqual(rows[0]["b"] as String?, "short")
        XCTAssertEqual(rows[0]["c"] as Double?, 2.5)
        XCTAssertEqual(rows[0]["d"] as Data?, Data([0, 1, 2]))
        XCTAssertEqual(rows[1]["b"] as String?, long)
        XCTAssertTrue(rows[1]["c"] == nil && rows[1]["d"] == nil)
        XCTAssertEqual(rows[2]["b"] as String?, "")
    }

    func testAFailingStepThrowsSQLitesErrorAndLeavesTheStatementReset() throws {
        let queue = try makeQueue()
        try queue.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO t (a, b) VALUES (?, ?)")
            try statement.runOnce(binding: [1.databaseValue, "one".databaseValue], in: db)
            XCTAssertThrowsError(try statement.runOnce(binding: [DatabaseValue.null, "no a".databaseValue], in: db)) { error in
                let databaseError = error as? DatabaseError
                XCTAssertEqual(databaseError?.extendedResultCode, .SQLITE_CONSTRAINT_NOTNULL, "\(error)")
                XCTAssertEqual(databaseError?.sql, "INSERT INTO t (a, b) VALUES (?, ?)")
            }
            XCTAssertThrowsError(try statement.runOnce(binding: [1.databaseValue, "again".databaseValue], in: db)) { error in
                XCTAssertEqual((error as? DatabaseError)?.extendedResultCode, .SQLITE_CONSTRAINT_UNIQUE, "\(error)")
            }
            // The same statement runs again after its failures, and GRDB's own use of it still works.
            try statement.runOnce(binding: [2.databaseValue, "two".databaseValue], in: db)
            try statement.execute(arguments: [3, "three"])
        }
        // The transaction that held the failures committed, and no statement stayed in progress: VACUUM
        // refuses to run beside one.
        try queue.writeWithoutTransaction { db in
            // A statement that answers rows is run once, its rows ignored, and reset: VACUUM would
            // otherwise find it stopped at its first row.
            try db.cachedStatement(sql: "INSERT INTO t (a, b) VALUES (?, ?) RETURNING a").runOnce(binding: [4.databaseValue, "four".databaseValue], in: db)
            try db.execute(sql: "VACUUM")
        }
        let values = try queue.read { db in try String.fetchAll(db, sql: "SELECT b FROM t ORDER BY a") }
        XCTAssertEqual(values, ["one", "two", "three", "four"])
    }

    func testTheWrongNumberOfValuesRunsNothing() throws {
        let queue = try makeQueue()
        try queue.write { db in
            let statement = try db.cachedStatement(sql: "INSERT INTO t (a, b) VALUES (?, ?)")
            try statement.runOnce(binding: [1.databaseValue, "one".databaseValue], in: db)
            // With one value, the second parameter would keep the last row's "one".
            XCTAssertThrowsError(try statement.runOnce(binding: [2.databaseValue], in: db)) { error in
                XCTAssertEqual((error as? DatabaseError)?.resultCode, .SQLITE_RANGE, "\(error)")
            }
            XCTAssertThrowsError(try statement.runOnce(binding: [2.databaseValue, "x".databaseValue, "y".databaseValue], in: db))
        }
        let count = try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        XCTAssertEqual(count, 1)
    }
}
