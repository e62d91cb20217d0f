import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// Counts are kept until the store changes what they read: asked again they run no query. A save of
/// this container drops only the counts that read a table or column it wrote; a write by another
/// container or connection to the file drops them all.
final class CountCacheTests: StoreTestCase {
    private func saveSnippets(_ titles: [String], folder name: String?, in container: ModelContainer) throws {
        let context = ModelContext(container)
        let folder = name.map { SnippetFolder(name: $0) }
        for title in titles {
            let snippet = SnippetItem(title: title)
            snippet.folder = folder
            context.insert(snippet)
        }
        try context.save()
    }

    func testARepeatedCountRunsNoQuery() throws {
        let container = try makeContainer(SnippetFolder.self)
        try saveSnippets(["a", "b"], folder: "Work", in: container)
        let context = ModelContext(container)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 2)
        XCTAssertEqual(try context.counts(of: \SnippetItem.folder).count, 1)
        let again = try selects(in: container) {
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 2)
            XCTAssertEqual(try ModelContext(container).counts(of: \SnippetItem.folder).values.first, 2)
        }
        XCTAssertEqual(again, [])
    }

    func testCountsFollowSavesOfAnyContext() throws {
        let container = try makeContainer(SnippetFolder.self)
        try saveSnippets(["a"], folder: "Work", in: container)
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.folder == nil })), 0)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[nil], nil)

        try saveSnippets(["b", "c"], folder: nil, in: container)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.folder == nil })), 2)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[nil], 2)

        let writer = ModelContext(container)
        for snippet in try writer.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.folder == nil })) {
            writer.delete(snippet)
        }
        try writer.save()
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[nil], nil)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetItem>()), 1)
    }

    func testCountsFollowWritesFromOutsideTheContainer() throws {
        let container = try makeContainer(SnippetFolder.self)
        try saveSnippets(["a", "b"], folder: nil, in: container)
        let context = ModelContext(container)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 2)
        XCTAssertEqual(try context.counts(of: \SnippetItem.title), ["a": 1, "b": 1])

        // Another connection, as another process (a command-line tool) would write.
        let outside = try DatabaseQueue(path: storeURL.path)
        try outside.write { db in
            try db.execute(sql: "INSERT INTO \"SnippetItem\" (\"title\") VALUES ('c')")
        }
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<SnippetItem>()), 3)
        XCTAssertEqual(try context.counts(of: \SnippetItem.title), ["a": 1, "b": 1, "c": 1])
    }

    /// Another process's ObjectGraph save records what it wrote in the store's history: only the
    /// counts that read it are dropped. (A second container on the file stands in for the process.)
    func testAnotherProcesssSaveDropsOnlyTheCountsThatReadWhatItWrote() throws {
        try saveSnippets(["a", "b"], folder: "Work", in: try makeContainer(SnippetFolder.self))
        let container = try makeContainer(SnippetFolder.self)
        let reader = ModelContext(container)
        func keptCounts() throws {
            XCTAssertEqual(try reader.counts(of: \SnippetItem.folder).values.first, 2)
        }
        try keptCounts()
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title), ["a": 1, "b": 1])

        let otherProcess = try makeContainer(SnippetFolder.self)
        let writer = ModelContext(otherProcess)
        let first = try XCTUnwrap(try writer.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == "a" })).first)
        first.title = "z"
        try writer.save()

        let untouched = try selects(in: container) { try keptCounts() }
        XCTAssertEqual(untouched, [], "a rename reads no folder: the count by folder is kept")
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title), ["z": 1, "b": 1], "the count by title is read again")

        // New rows change every count of their table, and their join rows the counts per tag.
        let tag = SnippetTag(name: "swift")
        let added = SnippetItem(title: "c")
        added.tags = [tag]
        writer.insert(added)
        try writer.save()
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[nil], 1)
        XCTAssertEqual(try reader.counts(ofEach: \SnippetItem.tags).values.first, 1)
        writer.delete(added)
        try writer.save()
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[nil], nil)
        XCTAssertEqual(try reader.counts(ofEach: \SnippetItem.tags).values.first ?? 0, 0)
        try keptCounts()

        // History deleted before this store read it leaves a gap, which says as little as no history.
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title), ["z": 1, "b": 1])
        let kept = try XCTUnwrap(try writer.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == "b" })).first)
        kept.title = "x"
        try writer.save()
        try writer.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        let folder = try XCTUnwrap(try writer.fetch(FetchDescriptor<SnippetFolder>()).first)
        folder.name = "Home"
        try writer.save()
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title), ["z": 1, "x": 1], "the rename the deleted history held")

        // A write from outside ObjectGraph records no history: everything kept is dropped.
        try DatabaseQueue(path: storeURL.path).write { db in
            try db.execute(sql: "UPDATE \"SnippetItem\" SET \"title\" = 'y' WHERE \"title\" = 'z'")
        }
        let recounted = try selects(in: container) { try keptCounts() }
        XCTAssertFalse(recounted.isEmpty, "a write the history does not record drops the count by folder too")
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title), ["y": 1, "x": 1])
    }

    /// A save of this store that follows a write from outside ObjectGraph, with no look between them,
    /// must not let its own transaction in the history stand for the interval: the outside write
    /// recorded nothing, and everything kept is dropped.
    func testAnOutsideWriteBeforeAnOwnSaveDropsEverythingKept() throws {
        try saveSnippets(["a", "b"], folder: "Work", in: try makeContainer(SnippetFolder.self))
        let container = try makeContainer(SnippetFolder.self)
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title), ["a": 1, "b": 1])
        let writer = ModelContext(container)
        let folder = try XCTUnwrap(try writer.fetch(FetchDescriptor<SnippetFolder>()).first)

        try DatabaseQueue(path: storeURL.path).write { db in
            try db.execute(sql: "UPDATE \"SnippetItem\" SET \"title\" = 'y' WHERE \"title\" = 'a'")
        }
        // A rename of the folder reads no title: its transaction alone would keep the count by title.
        folder.name = "Home"
        try writer.save()
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title), ["y": 1, "b": 1])
    }

    /// A save catches up with another process's commit before it brings kept counts up to date, so
    /// what it keeps follows both: the count the stranger's rename did not read, and the save moved on,
    /// is not counted again. (Brought up to date from a value behind the stranger's commit, it had to
    /// be dropped at the next look.)
    func testASaveAfterAnotherProcesssCommitKeepsTheCountsItBroughtUpToDate() throws {
        try saveSnippets(["a", "b"], folder: "Work", in: try makeContainer(SnippetFolder.self))
        let container = try makeContainer(SnippetFolder.self)
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder).values.first, 2)
        let writer = ModelContext(container)
        let work = try XCTUnwrap(try writer.fetch(FetchDescriptor<SnippetFolder>()).first)

        let otherProcess = ModelContext(try makeContainer(SnippetFolder.self))
        let renamed = try XCTUnwrap(try otherProcess.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == "a" })).first)
        renamed.title = "z"
        try otherProcess.save()

        let added = SnippetItem(title: "c")
        added.folder = work
        writer.insert(added)
        try writer.save()
        let queries = try selects(in: container) {
            XCTAssertEqual(try reader.counts(of: \SnippetItem.folder).values.first, 3)
        }
        XCTAssertEqual(queries.filter { $0.contains("COUNT(") }, [], "the count the save brought up to date is kept")
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title), ["z": 1, "b": 1, "c": 1])

        // The other way round: the store's own transaction is not read back with the stranger's, which
        // would drop what it wrote once more.
        let another = SnippetItem(title: "d")
        another.folder = work
        writer.insert(another)
        try writer.save()
        renamed.title = "y"
        try otherProcess.save()
        let afterOwnSave = try selects(in: container) {
            XCTAssertEqual(try reader.counts(of: \SnippetItem.folder).values.first, 4)
        }
        XCTAssertEqual(afterOwnSave.filter { $0.contains("COUNT(") }, [], "the count the own save brought up to date is kept")
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title), ["y": 1, "b": 1, "c": 1, "d": 1])
    }

    func testASaveKeepsTheCountsThatDoNotReadWhatItWrote() throws {
        let container = try makeContainer(SnippetFolder.self)
        try saveSnippets(["a", "b"], folder: "Work", in: container)
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder).values.first, 2)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetItem>()), 2)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title), ["a": 1, "b": 1])

        let writer = ModelContext(container)
        let first = try XCTUnwrap(try writer.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == "a" })).first)
        first.title = "z"
        try writer.save()

        // The save moved the store's files; it must not count as another process's write.
        let untouched = try selects(in: container) {
            XCTAssertEqual(try reader.counts(of: \SnippetItem.folder).values.first, 2)
            XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetItem>()), 2)
        }
        XCTAssertEqual(untouched, [])
        // The count that did read the title was brought up to date by the save itself.
        let updated = try selects(in: container) {
            XCTAssertEqual(try reader.counts(of: \SnippetItem.title), ["z": 1, "b": 1])
        }
        XCTAssertEqual(updated, [])
    }

    func testEveryKindOfWriteDropsTheCountsThatReadIt() throws {
        let container = try makeContainer(SnippetFolder.self)
        let writer = ModelContext(container)
        let work = SnippetFolder(name: "Work")
        let swift = SnippetTag(name: "swift"), sql = SnippetTag(name: "sql")
        let a = SnippetItem(title: "a"), b = SnippetItem(title: "b")
        a.folder = work
        a.tags = [swift]
        b.tags = [swift, sql]
        writer.insert(a)
        writer.insert(b)
        try writer.save()

        let reader = ModelContext(container)
        func tagCounts() throws -> [String: Int] {
            let names = Dictionary(uniqueKeysWithValues: try reader.fetch(FetchDescriptor<SnippetTag>()).map { ($0.persistentModelID, $0.name) })
            return Dictionary(uniqueKeysWithValues: try reader.counts(ofEach: \SnippetItem.tags).map { (names[$0.key] ?? "?", $0.value) })
        }
        func inWork() throws -> Int {
            try reader.counts(of: \SnippetItem.title, where: #Predicate { $0.folder?.name == "Work" }).values.reduce(0, +)
        }
        XCTAssertEqual(try tagCounts(), ["swift": 2, "sql": 1])
        XCTAssertEqual(try inWork(), 1)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[nil], 1)

        // A join row added: the counts per tag read the join table.
        a.tags.append(sql)
        try writer.save()
        XCTAssertEqual(try tagCounts(), ["swift": 2, "sql": 2])

        // Another entity's column, read through the predicate's subquery.
        work.name = "Home"
        try writer.save()
        XCTAssertEqual(try inWork(), 0)

        // A foreign key updated in place.
        b.folder = work
        try writer.save()
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[nil], nil)

        // A deleted tag takes its join rows with it.
        writer.delete(sql)
        try writer.save()
        XCTAssertEqual(try tagCounts(), ["swift": 2])

        // A deleted snippet, and an inserted one.
        writer.delete(a)
        writer.insert(SnippetItem(title: "c"))
        try writer.save()
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder), [work.persistentModelID: 1, nil: 1])
        XCTAssertEqual(try tagCounts(), ["swift": 1])
    }

    /// One save that writes several entities, several columns of different rows of one entity, and a
    /// join table: the store notes each entity, table and column once, and every count that reads
    /// any of them follows, whichever row wrote it.
    func testOneSaveOfManyRowsAndEntitiesDropsEveryCountThatReadsWhatAnyRowWrote() throws {
        let container = try makeContainer(SnippetFolder.self)
        let writer = ModelContext(container)
        let work = SnippetFolder(name: "Work"), home = SnippetFolder(name: "Home")
        let swift = SnippetTag(name: "swift")
        let snippets = (0..<6).map { SnippetItem(title: "s\($0)") }
        for snippet in snippets {
            snippet.folder = work
            writer.insert(snippet)
        }
        writer.insert(home)
        snippets[0].tags = [swift]
        try writer.save()

        let reader = ModelContext(container)
        func inFolder(_ name: String) throws -> Int {
            try reader.fetchCount(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.folder?.name == name }))
        }
        func tagged() throws -> Int {
            try reader.counts(ofEach: \SnippetItem.tags).values.reduce(0, +)
        }
        XCTAssertEqual(try inFolder("Work"), 6)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title)["s5"], 1)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[home.persistentModelID], nil)
        XCTAssertEqual(try tagged(), 1)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetTag>()), 1)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetFolder>()), 2)

        // Rows of one entity change different columns (a title in the first, a folder in the last),
        // another entity's column changes, rows of two entities and join rows come in: one save.
        snippets[1].title = "renamed"
        snippets[5].folder = home
        work.name = "Office"
        let sql = SnippetTag(name: "sql")
        snippets[2].tags = [swift, sql]
        writer.insert(SnippetFolder(name: "Attic"))
        try writer.save()

        XCTAssertEqual(try inFolder("Work"), 0)
        XCTAssertEqual(try inFolder("Office"), 5)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title)["renamed"], 1)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[home.persistentModelID], 1)
        XCTAssertEqual(try tagged(), 3)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetTag>()), 2)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetFolder>()), 3)
    }

    func testSearchesFollowTheSearchableTextAndKeepTheirRanksOtherwise() throws {
        let container = try makeContainer(Article.self)
        let writer = ModelContext(container)
        let article = Article(title: "Apples", body: "Crisp apples in autumn")
        writer.insert(article)
        try writer.save()
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.search(Article.self, for: "apples").totalCount, 1)

        article.rating = 5
        try writer.save()
        let kept = try selects(in: container) {
            XCTAssertEqual(try reader.search(Article.self, for: "apples").totalCount, 1)
        }
        // The hit's row is read again; the count, the ranking and the excerpts are kept.
        XCTAssertEqual(kept.filter { $0.contains("COUNT(*)") || $0.contains("bm25(") || $0.contains(FullTextExcerpt.functionName) }, [])
        XCTAssertEqual(kept.filter { $0.contains("FROM \"Article\"") }.count, 1)

        article.body = "Pears in winter"
        article.title = "Pears"
        try writer.save()
        XCTAssertEqual(try reader.search(Article.self, for: "apples").totalCount, 0)
        XCTAssertEqual(try reader.search(Article.self, for: "pears").hits.map(\.model.title), ["Pears"])
    }

    func testAWriteThroughAnotherContainerDropsEveryCount() throws {
        let container = try makeContainer(SnippetFolder.self)
        try saveSnippets(["a", "b"], folder: "Work", in: container)
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder).values.first, 2)

        // Another container on the same file, as a second process would have: its save cannot tell
        // this container's cache what it wrote.
        let other = try makeContainer(SnippetFolder.self)
        let writer = ModelContext(other)
        for snippet in try writer.fetch(FetchDescriptor<SnippetItem>()) where snippet.title == "a" {
            snippet.folder = nil
        }
        try writer.save()
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder)[nil], 1)
    }

    func testIdentifiersAreReadFromQuotedNames() {
        XCTAssertEqual(
            AggregateCache.identifiers(in: #"SELECT "t0"."folder", COUNT(*) FROM "Snip""pet" AS "t0" WHERE "t0"."name" = ? GROUP BY 1"#),
            ["t0", "folder", "Snip\"pet", "name"])
        XCTAssertEqual(AggregateCache.identifiers(in: #"SELECT "Café", "日本", "" FROM "open"#), ["Café", "日本", ""])
    }

    /// The byte scans agree with reading the statement by characters (the way they were first
    /// written) on random statements of quotes, letters, spaces and non-ASCII names.
    func testTheByteScansOfAStatementAgreeWithReadingItByCharacters() {
        func identifiersByCharacters(_ sql: String) -> Set<String> {
            var names: Set<String> = []
            var characters = Array(sql)[...]
            while let start = characters.firstIndex(of: "\"") {
                characters = characters[(start + 1)...]
                var name = ""
                var closed = false
                while let character = characters.popFirst() {
                    guard character == "\"" else {
                        name.append(character)
                        continue
                    }
                    if characters.first == "\"" {
                        characters.removeFirst()
                        name.append("\"")
                    } else {
                        closed = true
                        break
                    }
                }
                if closed { names.insert(name) }
            }
            return names
        }
        let pieces = ["\"", "\"", "a", "b", " ", "é", "日", "\"\"", "t0", ".", "\"Snippet\""]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            let count = Int.random(in: 0..<24, using: &generator)
            let sql = (0..<count).map { _ in pieces.randomElement(using: &generator) ?? "" }.joined()
            XCTAssertEqual(AggregateCache.identifiers(in: sql), identifiersByCharacters(sql), sql)
            for name in ["\"Snippet\"", "\"a\"", "\"日\""] {
                XCTAssertEqual(
                    AggregateCache.names(name, atMostOnceIn: sql), sql.components(separatedBy: name).count <= 2, "\(name) in \(sql)")
            }
        }
    }

    /// A ring of kept results keeps the last few it was told of: one more drops the oldest from the
    /// cache, and noting a kept one again makes it the newest.
    func testARingOfKeptResultsDropsTheOldest() throws {
        let cache = AggregateCache(store: StoreIdentity(), storePath: nil)
        let ring = KeptResultRing(capacity: 3)
        func keep(_ number: Int) throws {
            _ = try cache.value(sql: "SELECT \(number)", arguments: []) { number }
            ring.note(AggregateCacheKey(sql: "SELECT \(number)", arguments: []), in: cache)
        }
        func kept() -> [Int] { (0..<6).filter { (cache.keptValue(sql: "SELECT \($0)", arguments: []) as Int?) != nil } }
        for number in 0..<3 { try keep(number) }
        XCTAssertEqual(kept(), [0, 1, 2])
        ring.note(AggregateCacheKey(sql: "SELECT 0", arguments: []), in: cache)
        try keep(3)
        XCTAssertEqual(kept(), [0, 2, 3], "1 was the oldest")
        try keep(4)
        try keep(5)
        XCTAssertEqual(kept(), [3, 4, 5])
    }

    /// A result whose type is optional is computed when it is missing: `nil as? Int?` succeeds, and
    /// the cache took a missing entry for a kept nil, returning it without computing.
    func testAnOptionalResultIsComputedWhenMissing() throws {
        let cache = AggregateCache(store: StoreIdentity(), storePath: nil)
        var computed = 0
        let first: Int? = try cache.value(sql: "SELECT 1", arguments: []) {
            computed += 1
            return 5
        }
        let second: Int? = try cache.value(sql: "SELECT 1", arguments: []) {
            computed += 1
            return 6
        }
        XCTAssertEqual(first, 5)
        XCTAssertEqual(second, 5, "kept")
        XCTAssertEqual(computed, 1)
        let missing: Int? = cache.keptValue(sql: "SELECT 2", arguments: [])
        XCTAssertNil(missing)
    }
}
