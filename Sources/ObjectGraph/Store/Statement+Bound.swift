import Foundation
import GRDB
import GRDBSQLite

/// SQLite's `SQLITE_TRANSIENT` (a C macro Swift does not import): SQLite copies the value it is given.
let sqliteTransient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

extension Statement {
    /// Runs this statement to completion with `values` bound to its parameters in order, each as GRDB
    /// binds a value (`StatementBinding`, SQLite copying text and blobs).
    ///
    /// For the statements a save runs once per row (a row's INSERT, UPDATE or DELETE, a join row's):
    /// `execute(arguments:)` first copies the values into `StatementArguments`, checks them against the
    /// statement, and binds them through a closure per value. Inserting 10,000 snippets (callgrind)
    /// spent 526 M instructions in the rows' INSERTs through it, 365 M this way.
    func runOnce(binding values: some Collection<DatabaseValue>, in db: Database) throws {
        let handle = sqliteStatement
        // Bindings outlive a reset: a value missing here would run with the last row's.
        guard values.count == Int(sqlite3_bind_parameter_count(handle)) else {
            throw DatabaseError(
                resultCode: .SQLITE_RANGE,
                message: "\(values.count) values for \(sqlite3_bind_parameter_count(handle)) parameters", sql: sql)
        }
        // Reset before, in case GRDB left the statement mid-way, and after, so that no read or
        // write stays open behind a finished or failed step.
        sqlite3_reset(handle)
        defer { sqlite3_reset(handle) }
        var index: CInt = 1
        for value in values {
            let code = Self.bind(value, to: handle, at: index)
            guard code == SQLITE_OK else {
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: db.lastErrorMessage, sql: sql)
            }
            index += 1
        }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            // The extended code, as GRDB reports a failed statement: the save tells a NOT NULL from a
            // UNIQUE failure by it (`StoreErrorMapper`).
            throw DatabaseError(
                resultCode: ResultCode(rawValue: sqlite3_extended_errcode(db.sqliteConnection)), message: db.lastErrorMessage,
                sql: sql, arguments: StatementArguments(Array(values)))
        }
    }

    /// Binds a value as GRDB's `bind(to:at:)` does, text included (up to its first NUL, which SQLite
    /// copies), but from the string's own UTF-8: GRDB hands SQLite the string through `utf8CString`,
    /// an array allocated and freed for every bound text (1% of inserting snippets).
    private static func bind(_ value: DatabaseValue, to handle: SQLiteStatement, at index: CInt) -> CInt {
        guard case .string(let text) = value.storage else { return value.bind(to: handle, at: index) }
        return text.withCString { sqlite3_bind_text(handle, index, $0, -1, sqliteTransient) }
    }
}
