import Foundation
import ObjectGraph

// The benchmark's own models: the workloads' schema (no app models), once without and once with
// `@Attribute(.spotlight)`, so that only workload 5 pays for the full-text index.

enum Lang: String, Codable, CaseIterable {
    case plaintext, swift, python, javascript, typescript, java, kotlin, c, cpp, csharp, go, rust, ruby, php
    case html, css, sql, shell, json, yaml, markdown, xml, objectivec, scala, dart, lua, perl, r, haskell, dockerfile
}

@Model final class OGFolder {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \OGSnippet.folder) var snippets: [OGSnippet] = []
    init(name: String) { self.name = name }
}

@Model final class OGTag {
    @Attribute(.unique) var name: String
    var snippets: [OGSnippet] = []
    init(name: String) { self.name = name }
}

@Model final class OGSnippet {
    #Index<OGSnippet>([\.folder, \.language, \.isFavorite, \.updatedAt])
    // No initial value, as in SnippetBox's models: Swift evaluates initial values in
    // `init(backingData:)` too, and `UUID()` reads /dev/urandom (3 µs) for every fetched model.
    @Attribute(.unique) var uuid: UUID
    var title: String = ""
    var code: String = ""
    var notes: String = ""
    var language: Lang = Lang.plaintext
    var isFavorite: Bool = false
    var createdAt: Date = Date.now
    var updatedAt: Date = Date.now
    var folder: OGFolder?
    @Relationship(inverse: \OGTag.snippets) var tags: [OGTag] = []
    init(uuid: UUID, title: String, code: String, notes: String, language: Lang, isFavorite: Bool,
         createdAt: Date, updatedAt: Date) {
        self.uuid = uuid
        self.title = title
        self.code = code
        self.notes = notes
        self.language = language
        self.isFavorite = isFavorite
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

@Model final class OGTextFolder {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \OGTextSnippet.folder) var snippets: [OGTextSnippet] = []
    init(name: String) { self.name = name }
}

@Model final class OGTextTag {
    @Attribute(.unique) var name: String
    var snippets: [OGTextSnippet] = []
    init(name: String) { self.name = name }
}

@Model final class OGTextSnippet {
    #Index<OGTextSnippet>([\.folder, \.language, \.isFavorite, \.updatedAt])
    @Attribute(.unique) var uuid: UUID
    @Attribute(.spotlight) var title: String = ""
    @Attribute(.spotlight) var code: String = ""
    @Attribute(.spotlight) var notes: String = ""
    var language: Lang = Lang.plaintext
    var isFavorite: Bool = false
    var createdAt: Date = Date.now
    var updatedAt: Date = Date.now
    var folder: OGTextFolder?
    @Relationship(inverse: \OGTextTag.snippets) var tags: [OGTextTag] = []
    init(uuid: UUID, title: String, code: String, notes: String, language: Lang, isFavorite: Bool,
         createdAt: Date, updatedAt: Date) {
        self.uuid = uuid
        self.title = title
        self.code = code
        self.notes = notes
        self.language = language
        self.isFavorite = isFavorite
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}

/// ObjectGraph as an app uses it: a `ModelContext` per unit of work, `#Predicate` queries, one `save()`.
final class ObjectGraphContender: Contender {
    static let name = "ObjectGraph"
    let container: ModelContainer
    let fullText: Bool

    convenience init(path: String, fullText: Bool) async throws {
        try self.init(syncPath: path, fullText: fullText)
    }

    init(syncPath path: String, fullText: Bool) throws {
        self.fullText = fullText
        var configuration = ModelConfiguration(url: URL(fileURLWithPath: path))
        // Every query reads the store, as raw SQLite's does: kept rows would answer the repeated
        // page and filtered queries from memory, which compares nothing.
        configuration.fetchedRowCacheBytes = 0
        container = fullText
            ? try ModelContainer(for: OGTextSnippet.self, OGTextFolder.self, OGTextTag.self, configurations: configuration)
            : try ModelContainer(for: OGSnippet.self, OGFolder.self, OGTag.self, configurations: configuration)
    }

    func insert(_ data: Dataset) async throws { try insertNow(data) }

    func insertNow(_ data: Dataset) throws {
        let context = ModelContext(container)
        if fullText {
            let folders = Dataset.allFolderNames.map { OGTextFolder(name: $0) }
            let tags = Dataset.tagNames.map { OGTextTag(name: $0) }
            for row in data.rows {
                let snippet = OGTextSnippet(
                    uuid: row.uuid, title: row.title, code: row.code, notes: row.notes, language: Lang(rawValue: row.language)!,
                    isFavorite: row.isFavorite, createdAt: Date(timeIntervalSince1970: row.createdAt),
                    updatedAt: Date(timeIntervalSince1970: row.updatedAt))
                snippet.folder = folders[row.folder]
                snippet.tags = [tags[row.tags.0], tags[row.tags.1]]
                context.insert(snippet)
            }
        } else {
            let folders = Dataset.allFolderNames.map { OGFolder(name: $0) }
            let tags = Dataset.tagNames.map { OGTag(name: $0) }
            for row in data.rows {
                let snippet = OGSnippet(
                    uuid: row.uuid, title: row.title, code: row.code, notes: row.notes, language: Lang(rawValue: row.language)!,
                    isFavorite: row.isFavorite, createdAt: Date(timeIntervalSince1970: row.createdAt),
                    updatedAt: Date(timeIntervalSince1970: row.updatedAt))
                snippet.folder = folders[row.folder]
                snippet.tags = [tags[row.tags.0], tags[row.tags.1]]
                context.insert(snippet)
            }
        }
        try context.save()
    }

    func fetchAll() async throws -> Int { try fetchAllNow() }

    func fetchAllNow() throws -> Int {
        let context = ModelContext(container)
        var sum = 0
        for snippet in try context.fetch(FetchDescriptor<OGSnippet>()) {
            sum &+= snippet.uuid.hashValue & 1
            sum &+= snippet.title.utf8.count + snippet.code.utf8.count + snippet.notes.utf8.count
            sum &+= snippet.language.rawValue.utf8.count + (snippet.isFavorite ? 1 : 0)
            sum &+= Int(snippet.createdAt.timeIntervalSince1970) & 1 + Int(snippet.updatedAt.timeIntervalSince1970) & 1
        }
        return sum
    }

    func fetchPageWithTags() async throws -> Int { try fetchPageWithTagsNow() }

    func fetchPageWithTagsNow() throws -> Int {
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<OGSnippet>(sortBy: [SortDescriptor(\.updatedAt, order: .reverse)])
        descriptor.fetchLimit = 50
        descriptor.relationshipKeyPathsForPrefetching = [\.tags]
        var count = 0
        for snippet in try context.fetch(descriptor) {
            count += snippet.title.utf8.count > 0 ? 1 : 0
            for tag in snippet.tags { count += tag.name.isEmpty ? 0 : 1 }
        }
        return count
    }

    func filtered(folder: String, tag: String, language: String) async throws -> Int {
        try filteredNow(folder: folder, tag: tag, language: language)
    }

    func filteredNow(folder: String, tag: String, language: String) throws -> Int {
        let context = ModelContext(container)
        let lang = Lang(rawValue: language)!
        var descriptor = FetchDescriptor<OGSnippet>(
            predicate: #Predicate {
                $0.folder?.name == folder && $0.tags.contains { $0.name == tag } && $0.language == lang && $0.isFavorite == true
            },
            sortBy: [SortDescriptor(\.updatedAt, order: .reverse)])
        descriptor.fetchLimit = 50
        return try context.fetch(descriptor).reduce(0) { $0 + $1.title.utf8.count }
    }

    func update10k() async throws -> Int { try update10kNow() }

    func update10kNow() throws -> Int {
        let context = ModelContext(container)
        var descriptor = FetchDescriptor<OGSnippet>(sortBy: [SortDescriptor(\.createdAt)])
        descriptor.fetchLimit = 10_000
        let snippets = try context.fetch(descriptor)
        let now = Date()
        for snippet in snippets {
            snippet.title = snippet.title + " (edited)"
            snippet.updatedAt = now
        }
        try context.save()
        return snippets.count
    }

    func deleteFolderCascade() async throws -> Int { try deleteFolderCascadeNow() }

    func deleteFolderCascadeNow() throws -> Int {
        let context = ModelContext(container)
        let name = Dataset.cascadeFolder
        guard let folder = try context.fetch(FetchDescriptor<OGFolder>(predicate: #Predicate { $0.name == name })).first else {
            throw BenchmarkError("no folder \(name)")
        }
        context.delete(folder)
        try context.save()
        return try context.fetchCount(FetchDescriptor<OGSnippet>())
    }

    func search(_ word: String) async throws -> Int? { try searchNow(word) }

    func searchNow(_ word: String) throws -> Int {
        let context = ModelContext(container)
        let results = try context.search(
            OGTextSnippet.self, for: word, weights: [\.title: 10, \.code: 1, \.notes: 2], limit: 20)
        return results.totalCount + results.hits.reduce(0) { $0 + $1.model.title.utf8.count + $1.excerpts.count }
    }

    func close() async throws {}
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
