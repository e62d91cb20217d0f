import FluentKit
import FluentSQLiteDriver
import Foundation
import NIOCore
import NIOPosix
import SQLKit

// Fluent models for the same tables (integer keys made by the database, so that the rows are the
// same as the other contenders').

final class FFolder: Model, @unchecked Sendable {
    static let schema = "folders"
    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "name") var name: String
    @Children(for: \.$folder) var snippets: [FSnippet]
    init() {}
    init(name: String) { self.name = name }
}

final class FTag: Model, @unchecked Sendable {
    static let schema = "tags"
    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "name") var name: String
    init() {}
    init(name: String) { self.name = name }
}

final class FSnippetTag: Model, @unchecked Sendable {
    static let schema = "snippet_tags"
    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Parent(key: "snippet_id") var snippet: FSnippet
    @Parent(key: "tag_id") var tag: FTag
    init() {}
}

final class FSnippet: Model, @unchecked Sendable {
    static let schema = "snippets"
    @ID(custom: "id", generatedBy: .database) var id: Int?
    @Field(key: "uuid") var uuid: UUID
    @Field(key: "title") var title: String
    @Field(key: "code") var code: String
    @Field(key: "notes") var notes: String
    @Field(key: "language") var language: String
    @Field(key: "isFavorite") var isFavorite: Bool
    @Field(key: "createdAt") var createdAt: Date
    @Field(key: "updatedAt") var updatedAt: Date
    @OptionalParent(key: "folder_id") var folder: FFolder?
    @Siblings(through: FSnippetTag.self, from: \.$snippet, to: \.$tag) var tags: [FTag]
    init() {}
    init(_ row: Dataset.Row, folderID: Int) {
        uuid = row.uuid
        title = row.title
        code = row.code
        notes = row.notes
        language = row.language
        isFavorite = row.isFavorite
        createdAt = Date(timeIntervalSince1970: row.createdAt)
        updatedAt = Date(timeIntervalSince1970: row.updatedAt)
        $folder.id = folderID
    }
}

/// Fluent 4 with fluent-sqlite-driver (its own bundled SQLite, through SQLiteNIO): one connection,
/// the query builder, `create`/`attach` per row in one transaction, `.with(\.$tags)` eager loading.
final class FluentContender: Contender {
    static let name = "Fluent"
    private static let eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private static let threadPool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        return pool
    }()
    private let databases: Databases
    private let db: any Database

    init(path: String, fullText: Bool) async throws {
        databases = Databases(threadPool: Self.threadPool, on: Self.eventLoopGroup)
        databases.use(.sqlite(.file(path), maxConnectionsPerEventLoop: 1, sqlLogLevel: nil), as: .sqlite)
        guard let database = databases.database(.sqlite, logger: Logger(label: "fluent"), on: Self.eventLoopGroup.any()) else {
            throw BenchmarkError("no Fluent database")
        }
        db = database
        let sql = db as! any SQLDatabase
        try await sql.raw("PRAGMA journal_mode = WAL").run()
        try await sql.raw("PRAGMA synchronous = NORMAL").run()
        for statement in SQLSchema.statements(fluentPivot: true, fullText: false) {
            try await sql.raw(SQLQueryString(statement)).run()
        }
    }

    /// The SQLite library version Fluent runs on (SQLiteNIO bundles its own).
    func sqliteVersion() async throws -> String {
        let rows = try await (db as! any SQLDatabase).raw("SELECT sqlite_version() AS v").all()
        return try rows.first?.decode(column: "v", as: String.self) ?? "?"
    }

    func insert(_ data: Dataset) async throws {
        try await db.transaction { tx in
            var folderIDs: [Int] = []
            for name in Dataset.allFolderNames {
                let folder = FFolder(name: name)
                try await folder.create(on: tx)
                folderIDs.append(folder.id!)
            }
            var tags: [FTag] = []
            for name in Dataset.tagNames {
                let tag = FTag(name: name)
                try await tag.create(on: tx)
                tags.append(tag)
            }
            for row in data.rows {
                let snippet = FSnippet(row, folderID: folderIDs[row.folder])
                try await snippet.create(on: tx)
                try await snippet.$tags.attach([tags[row.tags.0], tags[row.tags.1]], on: tx)
            }
        }
    }

    func fetchAll() async throws -> Int {
        var sum = 0
        for snippet in try await FSnippet.query(on: db).all() {
            sum &+= snippet.uuid.hashValue & 1
            sum &+= snippet.title.utf8.count + snippet.code.utf8.count + snippet.notes.utf8.count
            sum &+= snippet.language.utf8.count + (snippet.isFavorite ? 1 : 0)
            sum &+= Int(snippet.createdAt.timeIntervalSince1970) & 1 + Int(snippet.updatedAt.timeIntervalSince1970) & 1
        }
        return sum
    }

    func fetchPageWithTags() async throws -> Int {
        let page = try await FSnippet.query(on: db).sort(\.$updatedAt, .descending).limit(50).with(\.$tags).all()
        var count = 0
        for snippet in page {
            count += snippet.title.utf8.count > 0 ? 1 : 0
            for tag in snippet.tags { count += tag.name.isEmpty ? 0 : 1 }
        }
        return count
    }

    func filtered(folder: String, tag: String, language: String) async throws -> Int {
        let snippets = try await FSnippet.query(on: db)
            .join(parent: \.$folder)
            .filter(FFolder.self, \.$name == folder)
            .join(siblings: \.$tags)
            .filter(FTag.self, \.$name == tag)
            .filter(\.$language == language)
            .filter(\.$isFavorite == true)
            .sort(\.$updatedAt, .descending)
            .limit(50)
            .all()
        return snippets.reduce(0) { $0 + $1.title.utf8.count }
    }

    func update10k() async throws -> Int {
        try await db.transaction { tx in
            let snippets = try await FSnippet.query(on: tx).sort(\.$createdAt).limit(10_000).all()
            let now = Date()
            for snippet in snippets {
                snippet.title += " (edited)"
                snippet.updatedAt = now
                try await snippet.update(on: tx)
            }
            return snippets.count
        }
    }

    func deleteFolderCascade() async throws -> Int {
        try await db.transaction { tx in
            guard let folder = try await FFolder.query(on: tx).filter(\.$name == Dataset.cascadeFolder).first(), let id = folder.id else {
                throw BenchmarkError("no folder")
            }
            let snippetIDs = try await FSnippet.query(on: tx).filter(\.$folder.$id == id).all(\.$id)
            try await FSnippetTag.query(on: tx).filter(\.$snippet.$id ~~ snippetIDs).delete()
            try await FSnippet.query(on: tx).filter(\.$folder.$id == id).delete()
            try await folder.delete(on: tx)
            return try await FSnippet.query(on: tx).count()
        }
    }

    /// Fluent has no full-text search API.
    func search(_ word: String) async throws -> Int? { nil }

    func close() async throws {
        await databases.shutdownAsync()
    }
}
