import CSQLite
import Foundation

private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// The SQLite C API as a careful hand would use it: prepared statements made once and reused,
/// one transaction per write, columns read by index.
final class RawSQLiteContender: Contender {
    static let name = "raw SQLite"
    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]
    private let fullText: Bool

    /// A snippet as read back: every attribute.
    struct SnippetRow {
        var id: Int64, uuid: UUID, title: String, code: String, notes: String, language: String
        var isFavorite: Bool, createdAt: Double, updatedAt: Double, folderID: Int64?
    }

    convenience init(path: String, fullText: Bool) async throws {
        try self.init(syncPath: path, fullText: fullText)
    }

    /// Nothing here awaits: the synchronous form is for `--profile-raw` (see Profile.swift).
    init(syncPath path: String, fullText: Bool) throws {
        self.fullText = fullText
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK else {
            throw BenchmarkError("cannot open \(path)")
        }
        try exec("PRAGMA journal_mode = WAL")
        try exec("PRAGMA synchronous = NORMAL")
        for sql in SQLSchema.statements(fluentPivot: false, fullText: fullText) { try exec(sql) }
    }

    // MARK: Helpers

    private func exec(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "?"
            sqlite3_free(message)
            throw BenchmarkError("\(text) in \(sql)")
        }
    }

    /// A prepared statement, made once per connection, reset and cleared for reuse.
    private func statement(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            return statement
        }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw BenchmarkError(String(cString: sqlite3_errmsg(db)) + " in \(sql)")
        }
        statements[sql] = statement
        return statement
    }

    private func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            _ = sqlite3_bind_text(statement, index, UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self),
                                  Int32(buffer.count), transient)
        }
    }

    private func bind(_ statement: OpaquePointer, _ index: Int32, _ uuid: UUID) {
        var bytes = uuid.uuid
        _ = withUnsafeBytes(of: &bytes) { sqlite3_bind_blob(statement, index, $0.baseAddress, 16, transient) }
    }

    private func step(_ statement: OpaquePointer) throws {
        let code = sqlite3_step(statement)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw BenchmarkError(String(cString: sqlite3_errmsg(db))) }
    }

    private func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    private func uuid(_ statement: OpaquePointer, _ column: Int32) -> UUID {
        guard let blob = sqlite3_column_blob(statement, column), sqlite3_column_bytes(statement, column) == 16 else { return UUID() }
        let b = blob.assumingMemoryBound(to: UInt8.self)
        return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }

    /// Reads a snippet from columns `offset...offset + 9` (SQLSchema.snippetColumns).
    private func snippet(_ statement: OpaquePointer, at offset: Int32 = 0) -> SnippetRow {
        SnippetRow(
            id: sqlite3_column_int64(statement, offset), uuid: uuid(statement, offset + 1),
            title: text(statement, offset + 2), code: text(statement, offset + 3), notes: text(statement, offset + 4),
            language: text(statement, offset + 5), isFavorite: sqlite3_column_int(statement, offset + 6) != 0,
            createdAt: sqlite3_column_double(statement, offset + 7), updatedAt: sqlite3_column_double(statement, offset + 8),
            folderID: sqlite3_column_type(statement, offset + 9) == SQLITE_NULL ? nil : sqlite3_column_int64(statement, offset + 9))
    }

    private func snippets(_ statement: OpaquePointer) throws -> [SnippetRow] {
        var rows: [SnippetRow] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw BenchmarkError(String(cString: sqlite3_errmsg(db))) }
            rows.append(snippet(statement))
        }
        return rows
    }

    private func transaction<T>(_ body: () throws -> T) throws -> T {
        try exec("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try exec("COMMIT")
            return result
        } catch {
            try? exec("ROLLBACK")
            throw error
        }
    }

    // MARK: Workloads

    func insert(_ data: Dataset) async throws { try insertNow(data) }

    /// Never inlined: callgrind's `--toggle-collect` names it, as it names ObjectGraph's.
    @inline(never)
    func insertNow(_ data: Dataset) throws {
        try transaction {
            var folderIDs: [Int64] = []
            let insertFolder = try statement("INSERT INTO folders (name) VALUES (?)")
            for name in Dataset.allFolderNames {
                sqlite3_reset(insertFolder)
                bind(insertFolder, 1, name)
                try step(insertFolder)
                folderIDs.append(sqlite3_last_insert_rowid(db))
            }
            var tagIDs: [Int64] = []
            let insertTag = try statement("INSERT INTO tags (name) VALUES (?)")
            for name in Dataset.tagNames {
                sqlite3_reset(insertTag)
                bind(insertTag, 1, name)
                try step(insertTag)
                tagIDs.append(sqlite3_last_insert_rowid(db))
            }
            let insertSnippet = try statement("""
                INSERT INTO snippets (uuid, title, code, notes, language, isFavorite, createdAt, updatedAt, folder_id)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            let insertLink = try statement("INSERT INTO snippet_tags (snippet_id, tag_id) VALUES (?, ?)")
            for row in data.rows {
                sqlite3_reset(insertSnippet)
                bind(insertSnippet, 1, row.uuid)
                bind(insertSnippet, 2, row.title)
                bind(insertSnippet, 3, row.code)
                bind(insertSnippet, 4, row.notes)
                bind(insertSnippet, 5, row.language)
                sqlite3_bind_int(insertSnippet, 6, row.isFavorite ? 1 : 0)
                sqlite3_bind_double(insertSnippet, 7, row.createdAt)
                sqlite3_bind_double(insertSnippet, 8, row.updatedAt)
                sqlite3_bind_int64(insertSnippet, 9, folderIDs[row.folder])
                try step(insertSnippet)
                let id = sqlite3_last_insert_rowid(db)
                for tag in [row.tags.0, row.tags.1] {
                    sqlite3_reset(insertLink)
                    sqlite3_bind_int64(insertLink, 1, id)
                    sqlite3_bind_int64(insertLink, 2, tagIDs[tag])
                    try step(insertLink)
                }
            }
            if fullText { try exec(SQLSchema.rebuildFTS) }
        }
    }

    func fetchAll() async throws -> Int { try fetchAllNow() }

    @inline(never)
    func fetchAllNow() throws -> Int {
        let rows = try snippets(try statement("SELECT \(SQLSchema.snippetColumns) FROM snippets s"))
        var sum = 0
        for row in rows {
            sum &+= row.uuid.hashValue & 1
            sum &+= row.title.utf8.count + row.code.utf8.count + row.notes.utf8.count
            sum &+= row.language.utf8.count + (row.isFavorite ? 1 : 0)
            sum &+= Int(row.createdAt) & 1 + Int(row.updatedAt) & 1
        }
        return sum
    }

    func fetchPageWithTags() async throws -> Int {
        let page = try snippets(try statement(SQLSchema.pageSQL))
        let tagQuery = try statement(SQLSchema.pageTagsSQL(count: page.count))
        for (index, row) in page.enumerated() { sqlite3_bind_int64(tagQuery, Int32(index + 1), row.id) }
        var tagsBySnippet: [Int64: [(id: Int64, name: String)]] = [:]
        while sqlite3_step(tagQuery) == SQLITE_ROW {
            tagsBySnippet[sqlite3_column_int64(tagQuery, 0), default: []].append((sqlite3_column_int64(tagQuery, 1), text(tagQuery, 2)))
        }
        var count = 0
        for row in page {
            count += row.title.utf8.count > 0 ? 1 : 0
            for tag in tagsBySnippet[row.id] ?? [] { count += tag.name.isEmpty ? 0 : 1 }
        }
        return count
    }

    func filtered(folder: String, tag: String, language: String) async throws -> Int {
        let query = try statement(SQLSchema.filteredSQL)
        bind(query, 1, folder)
        bind(query, 2, tag)
        bind(query, 3, language)
        return try snippets(query).reduce(0) { $0 + $1.title.utf8.count }
    }

    func update10k() async throws -> Int {
        try transaction {
            let oldest = try statement(SQLSchema.oldestSQL)
            var rows: [(Int64, String)] = []
            while sqlite3_step(oldest) == SQLITE_ROW { rows.append((sqlite3_column_int64(oldest, 0), text(oldest, 1))) }
            let update = try statement(SQLSchema.updateSQL)
            let now = Date().timeIntervalSince1970
            for (id, title) in rows {
                sqlite3_reset(update)
                bind(update, 1, title + " (edited)")
                sqlite3_bind_double(update, 2, now)
                sqlite3_bind_int64(update, 3, id)
                try step(update)
            }
            return rows.count
        }
    }

    func deleteFolderCascade() async throws -> Int {
        try transaction {
            let find = try statement("SELECT id FROM folders WHERE name = ?")
            bind(find, 1, Dataset.cascadeFolder)
            guard sqlite3_step(find) == SQLITE_ROW else { throw BenchmarkError("no folder") }
            let id = sqlite3_column_int64(find, 0)
            for sql in SQLSchema.cascadeSQL {
                let delete = try statement(sql)
                sqlite3_bind_int64(delete, 1, id)
                try step(delete)
            }
        }
        let count = try statement("SELECT COUNT(*) FROM snippets")
        _ = sqlite3_step(count)
        return Int(sqlite3_column_int64(count, 0))
    }

    func search(_ word: String) async throws -> Int? {
        let countQuery = try statement(SQLSchema.searchCountSQL)
        bind(countQuery, 1, SQLSchema.match(word))
        _ = sqlite3_step(countQuery)
        let total = Int(sqlite3_column_int64(countQuery, 0))
        let query = try statement(SQLSchema.searchSQL)
        bind(query, 1, SQLSchema.match(word))
        var sum = total
        while sqlite3_step(query) == SQLITE_ROW {
            let score = sqlite3_column_double(query, 0)
            let excerpts = (1...3).map { text(query, Int32($0)) }.filter { $0.unicodeScalars.contains("\u{E000}") }
            let row = snippet(query, at: 4)
            sum += row.title.utf8.count + excerpts.count + (score < 0 ? 0 : 1)
        }
        return sum
    }

    func close() async throws {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        sqlite3_close_v2(db)
        db = nil
    }
}
