import Foundation
import GRDB

// GRDB records with hand-written row decoding and encoding (GRDB's fast path, not Codable), read by
// column position from an explicit selection.

struct GFolder: FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "folders"
    var id: Int64?
    var name: String
    init(name: String) { self.name = name }
    init(row: Row) throws {
        id = row[0]
        name = row[1]
    }
    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["name"] = name
    }
    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

struct GTag: FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "tags"
    static let databaseSelection: [any SQLSelectable] = [Column("id"), Column("name")]
    var id: Int64?
    var name: String
    init(name: String) { self.name = name }
    init(row: Row) throws {
        id = row[0]
        name = row[1]
    }
    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["name"] = name
    }
    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

struct GSnippetTag: FetchableRecord, PersistableRecord {
    static let databaseTableName = "snippet_tags"
    static let tag = belongsTo(GTag.self, using: ForeignKey(["tag_id"]))
    var snippetID: Int64
    var tagID: Int64
    init(snippetID: Int64, tagID: Int64) {
        self.snippetID = snippetID
        self.tagID = tagID
    }
    init(row: Row) throws {
        snippetID = row[0]
        tagID = row[1]
    }
    func encode(to container: inout PersistenceContainer) throws {
        container["snippet_id"] = snippetID
        container["tag_id"] = tagID
    }
}

enum GLanguage: String, DatabaseValueConvertible {
    case plaintext, swift, python, javascript, typescript, java, kotlin, c, cpp, csharp, go, rust, ruby, php
    case html, css, sql, shell, json, yaml, markdown, xml, objectivec, scala, dart, lua, perl, r, haskell, dockerfile
}

struct GSnippet: FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "snippets"
    static let databaseSelection: [any SQLSelectable] = [
        Column("id"), Column("uuid"), Column("title"), Column("code"), Column("notes"), Column("language"),
        Column("isFavorite"), Column("createdAt"), Column("updatedAt"), Column("folder_id"),
    ]
    static let snippetTags = hasMany(GSnippetTag.self, using: ForeignKey(["snippet_id"]))
    static let tags = hasMany(GTag.self, through: snippetTags, using: GSnippetTag.tag)

    var id: Int64?
    var uuid: UUID
    var title: String
    var code: String
    var notes: String
    var language: GLanguage
    var isFavorite: Bool
    var createdAt: Date
    var updatedAt: Date
    var folderID: Int64?

    init(_ row: Dataset.Row, folderID: Int64) {
        uuid = row.uuid
        title = row.title
        code = row.code
        notes = row.notes
        language = GLanguage(rawValue: row.language)!
        isFavorite = row.isFavorite
        createdAt = Date(timeIntervalSince1970: row.createdAt)
        updatedAt = Date(timeIntervalSince1970: row.updatedAt)
        self.folderID = folderID
    }

    init(row: Row) throws {
        id = row[0]
        uuid = row[1]
        title = row[2]
        code = row[3]
        notes = row[4]
        language = row[5]
        isFavorite = row[6]
        createdAt = Date(timeIntervalSince1970: row[7])
        updatedAt = Date(timeIntervalSince1970: row[8])
        folderID = row[9]
    }

    func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["uuid"] = uuid
        container["title"] = title
        container["code"] = code
        container["notes"] = notes
        container["language"] = language
        container["isFavorite"] = isFavorite
        container["createdAt"] = createdAt.timeIntervalSince1970
        container["updatedAt"] = updatedAt.timeIntervalSince1970
        container["folder_id"] = folderID
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// A snippet with its tags, from one `including(all:)` request (GRDB prefetches in a second query).
struct GSnippetWithTags: FetchableRecord {
    var snippet: GSnippet
    var tags: [GTag]
    init(row: Row) throws {
        snippet = try GSnippet(row: row)
        tags = row["tags"]
    }
}

/// GRDB as its documentation recommends: a `DatabasePool` (WAL), records, the query interface, and
/// SQL where the query interface would only spell the same SQL.
final class GRDBContender: Contender {
    static let name = "GRDB"
    private let pool: DatabasePool
    private let fullText: Bool

    init(path: String, fullText: Bool) async throws {
        self.fullText = fullText
        pool = try DatabasePool(path: path)
        try write { db in
            for sql in SQLSchema.statements(fluentPivot: false, fullText: fullText) { try db.execute(sql: sql) }
        }
    }

    func insert(_ data: Dataset) async throws {
        try write { db in
            var folderIDs: [Int64] = []
            for name in Dataset.allFolderNames {
                var folder = GFolder(name: name)
                try folder.insert(db)
                folderIDs.append(folder.id!)
            }
            var tagIDs: [Int64] = []
            for name in Dataset.tagNames {
                var tag = GTag(name: name)
                try tag.insert(db)
                tagIDs.append(tag.id!)
            }
            for row in data.rows {
                var snippet = GSnippet(row, folderID: folderIDs[row.folder])
                try snippet.insert(db)
                try GSnippetTag(snippetID: snippet.id!, tagID: tagIDs[row.tags.0]).insert(db)
                try GSnippetTag(snippetID: snippet.id!, tagID: tagIDs[row.tags.1]).insert(db)
            }
            if fullText { try db.execute(sql: SQLSchema.rebuildFTS) }
        }
    }

    func fetchAll() async throws -> Int {
        let snippets = try read { db in try GSnippet.fetchAll(db) }
        var sum = 0
        for snippet in snippets {
            sum &+= snippet.uuid.hashValue & 1
            sum &+= snippet.title.utf8.count + snippet.code.utf8.count + snippet.notes.utf8.count
            sum &+= snippet.language.rawValue.utf8.count + (snippet.isFavorite ? 1 : 0)
            sum &+= Int(snippet.createdAt.timeIntervalSince1970) & 1 + Int(snippet.updatedAt.timeIntervalSince1970) & 1
        }
        return sum
    }

    func fetchPageWithTags() async throws -> Int {
        let page = try read { db in
            try GSnippet.including(all: GSnippet.tags).order(Column("updatedAt").desc).limit(50)
                .asRequest(of: GSnippetWithTags.self).fetchAll(db)
        }
        var count = 0
        for item in page {
            count += item.snippet.title.utf8.count > 0 ? 1 : 0
            for tag in item.tags { count += tag.name.isEmpty ? 0 : 1 }
        }
        return count
    }

    func filtered(folder: String, tag: String, language: String) async throws -> Int {
        let snippets = try read { db in
            try GSnippet.fetchAll(db.cachedStatement(sql: SQLSchema.filteredSQL), arguments: [folder, tag, language])
        }
        return snippets.reduce(0) { $0 + $1.title.utf8.count }
    }

    func update10k() async throws -> Int {
        try write { db in
            let snippets = try GSnippet.order(Column("createdAt")).limit(10_000).fetchAll(db)
            let now = Date()
            for var snippet in snippets {
                snippet.title += " (edited)"
                snippet.updatedAt = now
                try snippet.update(db, columns: ["title", "updatedAt"])
            }
            return snippets.count
        }
    }

    func deleteFolderCascade() async throws -> Int {
        try write { db in
            guard let folder = try GFolder.filter(Column("name") == Dataset.cascadeFolder).fetchOne(db), let id = folder.id else {
                throw BenchmarkError("no folder")
            }
            try GSnippetTag.filter(sql: "snippet_id IN (SELECT id FROM snippets WHERE folder_id = ?)", arguments: [id]).deleteAll(db)
            try GSnippet.filter(Column("folder_id") == id).deleteAll(db)
            _ = try folder.delete(db)
            return try GSnippet.fetchCount(db)
        }
    }

    private static let searchSQL = """
        SELECT \(SQLSchema.snippetColumns), bm25(snippets_fts, 10, 1, 2),
          snippet(snippets_fts, 0, char(57344), char(57345), '…', 24),
          snippet(snippets_fts, 1, char(57344), char(57345), '…', 24),
          snippet(snippets_fts, 2, char(57344), char(57345), '…', 24)
        FROM snippets_fts JOIN snippets s ON s.id = snippets_fts.rowid WHERE snippets_fts MATCH ?
        ORDER BY 11, s.id LIMIT 20
        """

    func search(_ word: String) async throws -> Int? {
        try read { db in
            let pattern = try FTS5Pattern(rawPattern: SQLSchema.match(word))
            let total = try Int.fetchOne(db.cachedStatement(sql: SQLSchema.searchCountSQL), arguments: [pattern]) ?? 0
            var sum = total
            for row in try Row.fetchAll(db.cachedStatement(sql: Self.searchSQL), arguments: [pattern]) {
                let snippet = try GSnippet(row: row)
                let score: Double = row[10]
                let excerpts = (11...13).compactMap { row[$0] as String? }.filter { $0.unicodeScalars.contains("\u{E000}") }
                sum += snippet.title.utf8.count + excerpts.count + (score < 0 ? 0 : 1)
            }
            return sum
        }
    }

    // Synchronous access, as the other contenders have (in an async function `pool.read` would pick
    // GRDB's async variant and add a hop to another thread).
    private func read<T>(_ body: (Database) throws -> T) throws -> T { try pool.read(body) }
    private func write<T>(_ body: (Database) throws -> T) throws -> T { try pool.write(body) }

    func close() async throws { try pool.close() }
}
