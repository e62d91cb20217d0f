import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// A save brings the cached counts that its rows change up to date (old, less what the rows counted
/// before, plus what they count after) instead of dropping them; counts it cannot account for row by
/// row (another side's rows deleted, a batch delete, a stranger's write) are counted afresh.
final class CountUpkeepTests: StoreTestCase {
    func testASaveBringsTheCountsOfItsRowsUpToDateWithoutCountingAgain() throws {
        let container = try makeContainer(SnippetFolder.self)
        let writer = ModelContext(container)
        let work = SnippetFolder(name: "Work"), home = SnippetFolder(name: "Home")
        let swift = SnippetTag(name: "swift"), sql = SnippetTag(name: "sql")
        let a = SnippetItem(title: "a"), b = SnippetItem(title: "b"), c = SnippetItem(title: "c")
        a.folder = work
        a.tags = [swift]
        b.folder = work
        b.tags = [swift, sql]
        c.tags = [sql]
        for snippet in [a, b, c] { writer.insert(snippet) }
        try writer.save()

        let reader = ModelContext(container)
        // Home gets its key in the second save.
        var names: [PersistentIdentifier: String] {
            Dictionary(uniqueKeysWithValues: [work, home].map { ($0.persistentModelID, $0.name) } + [swift, sql].map { ($0.persistentModelID, $0.name) })
        }
        func named<Key>(_ counts: [Key: Int], _ name: (Key) -> String?) -> [String: Int] {
            Dictionary(uniqueKeysWithValues: counts.map { (name($0.key) ?? "none", $0.value) })
        }
        let filed = #Predicate<SnippetItem> { $0.folder != nil }
        let taggedSQL = #Predicate<SnippetItem> { $0.tags.contains { $0.name == "sql" } }
        func counts() throws -> [String: [String: Int]] {
            [
                "per folder": named(try reader.counts(of: \SnippetItem.folder)) { $0.flatMap { names[$0] } },
                "per tag, filed": named(try reader.counts(ofEach: \SnippetItem.tags, where: filed)) { names[$0] },
                "tagged sql": ["count": try reader.fetchCount(FetchDescriptor(predicate: taggedSQL))],
                "titles tagged sql": try reader.counts(of: \SnippetItem.title, where: taggedSQL),
            ]
        }
        XCTAssertEqual(try counts(), [
            "per folder": ["Work": 2, "none": 1], "per tag, filed": ["swift": 2, "sql": 1],
            "tagged sql": ["count": 2], "titles tagged sql": ["b": 1, "c": 1],
        ])

        // One snippet moves to another folder and changes its tags; one is inserted; one is deleted.
        a.folder = home
        a.tags = [sql]
        let d = SnippetItem(title: "d")
        d.tags = [swift]
        d.folder = home
        writer.insert(d)
        writer.delete(c)
        try writer.save()

        let queries = try selects(in: container) {
            XCTAssertEqual(try counts(), [
                "per folder": ["Work": 1, "Home": 2], "per tag, filed": ["swift": 2, "sql": 2],
                "tagged sql": ["count": 2], "titles tagged sql": ["a": 1, "b": 1],
            ])
        }
        XCTAssertEqual(queries.filter { $0.contains("COUNT(") }, [])
    }

    /// A count of the snippets of one tag reads the tag's owners as a set, but a save brings it up to
    /// date by testing its few changed rows one by one: collecting the set again for each kept count,
    /// before and after the save, made every save at 100,000 snippets several milliseconds slower.
    func testASaveFollowsATagFilteredCountRowByRowNotThroughTheTagsSet() throws {
        let container = try makeContainer(SnippetFolder.self)
        let writer = ModelContext(container)
        let sql = SnippetTag(name: "sql")
        let a = SnippetItem(title: "a"), b = SnippetItem(title: "b")
        a.tags = [sql]
        writer.insert(a)
        writer.insert(b)
        try writer.save()

        let reader = ModelContext(container)
        let taggedSQL = #Predicate<SnippetItem> { $0.tags.contains { $0.name == "sql" } }
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor(predicate: taggedSQL)), 1)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title, where: taggedSQL), ["a": 1])

        b.tags = [sql]
        let saving = try container.store.sqlLog.statements { try writer.save() }
        let upkeep = saving.filter { $0.contains("changedRows") }
        XCTAssertEqual(upkeep.count, 4, "before and after, for each of the two counts: \(saving)")
        for statement in upkeep {
            XCTAssertTrue(statement.contains("EXISTS"), statement)
            XCTAssertFalse(statement.contains("\"_pk\" IN (SELECT"), statement)
        }
        let counting = try selects(in: container) {
            XCTAssertEqual(try reader.fetchCount(FetchDescriptor(predicate: taggedSQL)), 2)
            XCTAssertEqual(try reader.counts(of: \SnippetItem.title, where: taggedSQL), ["a": 1, "b": 1])
        }
        XCTAssertEqual(counting.filter { $0.contains("COUNT(") }, [])
    }

    /// Random saves of every kind, each followed by every cached count compared with the same count
    /// made by hand from the models.
    func testCountsStayRightThroughRandomSaves() throws {
        let container = try makeContainer(SnippetFolder.self)
        var random = SeededGenerator(seed: 20261123)
        let setUp = ModelContext(container)
        for name in ["Work", "Home", "Old"] { setUp.insert(SnippetFolder(name: name)) }
        for name in ["t0", "t1", "t2", "t3"] { setUp.insert(SnippetTag(name: name)) }
        try setUp.save()
        let outside = try DatabaseQueue(path: storeURL.path)

        let reader = ModelContext(container)
        var nextTitle = 0
        for step in 0..<160 {
            // One to three changes of any kind in each save, so that changes mix as they do in an app.
            let writer = ModelContext(container)
            var snippets = try writer.fetch(FetchDescriptor<SnippetItem>(sortBy: [SortDescriptor(\.title)]))
            var folders = try writer.fetch(FetchDescriptor<SnippetFolder>(sortBy: [SortDescriptor(\.name)]))
            var tags = try writer.fetch(FetchDescriptor<SnippetTag>(sortBy: [SortDescriptor(\.name)]))
            var wroteOutside = false
            for _ in 0..<(1 + random.next(below: 3)) {
                let snippet = snippets.isEmpty ? nil : snippets[random.next(below: snippets.count)]
                switch random.next(below: 12) {
                case 0, 1, 2:
                    for _ in 0..<(1 + random.next(below: 3)) {
                        nextTitle += 1
                        let new = SnippetItem(title: "s\(nextTitle % 7)")
                        writer.insert(new)
                        new.folder = folders.isEmpty || random.next(below: 4) == 0 ? nil : folders[random.next(below: folders.count)]
                        new.tags = tags.filter { _ in random.next(below: 2) == 0 }
                        snippets.append(new)
                    }
                case 3:
                    snippet?.title = "s\(random.next(below: 7))"
                case 4:
                    snippet?.folder = folders.isEmpty || random.next(below: 3) == 0 ? nil : folders[random.next(below: folders.count)]
                case 5:
                    snippet?.tags = tags.filter { _ in random.next(below: 2) == 0 }
                case 6:
                    if let snippet {
                        writer.delete(snippet)
                        snippets.removeAll { $0 === snippet }
                    }
                case 7:
                    // The other side of the many-to-many writes the join rows.
                    if let snippet, let tag = tags.randomElement(using: &random) { tag.snippets.append(snippet) }
                case 8:
                    // A tag deleted takes its join rows; a folder deleted takes its snippets (cascade).
                    if random.next(below: 2) == 0, let tag = tags.randomElement(using: &random) {
                        writer.delete(tag)
                        tags.removeAll { $0 === tag }
                    } else if let folder = folders.randomElement(using: &random), random.next(below: 3) == 0 {
                        writer.delete(folder)
                        folders.removeAll { $0 === folder }
                        snippets.removeAll { $0.folder === folder }
                    }
                case 9:
                    // Rows deleted by a condition, and with a tag its join rows, which no saved model lists.
                    if random.next(below: 2) == 0 {
                        try writer.delete(model: SnippetItem.self, where: #Predicate { $0.title == "s3" })
                        snippets.removeAll { $0.title == "s3" }
                    } else {
                        try writer.delete(model: SnippetTag.self, where: #Predicate { $0.name == "t2" })
                        tags.removeAll { $0.name == "t2" }
                    }
                case 10:
                    // An insert with a saved tag's name takes over that row; or a new tag.
                    writer.insert(SnippetTag(name: "t\(random.next(below: 5))"))
                default:
                    wroteOutside = true
                }
            }
            if wroteOutside {
                // Another connection, as another process would write, between the reader's counts and this save.
                try outside.write { db in
                    try db.execute(sql: "UPDATE \"SnippetItem\" SET \"title\" = 's1' WHERE \"_pk\" = (SELECT MIN(\"_pk\") FROM \"SnippetItem\")")
                }
            }
            try writer.save()
            try assertCountsMatchTheModels(reader: reader, container: container, step: step)
        }
    }

    func testSearchCountsStayRightThroughRandomSaves() throws {
        let container = try makeContainer(Article.self)
        var random = SeededGenerator(seed: 7)
        let words = ["apple", "pear", "plum", "fig"]
        func text() -> String { (0..<3).map { _ in words[random.next(below: words.count)] }.joined(separator: " ") }
        let reader = ModelContext(container)
        for step in 0..<120 {
            let writer = ModelContext(container)
            let articles = try writer.fetch(FetchDescriptor<Article>())
            let article = articles.isEmpty ? nil : articles[random.next(below: articles.count)]
            switch random.next(below: 5) {
            case 0, 1:
                writer.insert(Article(title: "note", body: text(), category: ["a", "b"][random.next(below: 2)]))
            case 2:
                article?.body = text()
            case 3:
                article?.category = ["a", "b", "c"][random.next(below: 3)]
            default:
                if let article { writer.delete(article) }
            }
            try writer.save()

            let saved = try ModelContext(container).fetch(FetchDescriptor<Article>())
            for word in words {
                let hits = saved.filter { $0.body.split(separator: " ").contains(Substring(word)) }
                XCTAssertEqual(try reader.search(Article.self, for: word).totalCount, hits.count, "step \(step), \(word)")
                XCTAssertEqual(
                    try reader.counts(of: \Article.category, matching: word),
                    Dictionary(grouping: hits, by: \.category).mapValues(\.count), "step \(step), \(word)")
                XCTAssertEqual(
                    try reader.search(Article.self, for: word, where: #Predicate { $0.category == "a" }).totalCount,
                    hits.filter { $0.category == "a" }.count, "step \(step), \(word)")
            }
        }
    }

    /// A common word's ranks stay SQLite's bm25 through random saves: kept ranks that follow saves,
    /// ranks taken from a broader search's, and ranks scored from kept hit features after saves that
    /// change the index, for a broad condition, a narrower one and another one.
    func testSearchRanksStayRightThroughRandomSaves() throws {
        let container = try makeContainer(Article.self)
        var random = SeededGenerator(seed: 11)
        let setup = ModelContext(container)
        func body() -> String {
            String(repeating: "word ", count: random.next(below: 4)) + String(repeating: "filler ", count: random.next(below: 9))
        }
        for index in 0..<(ModelContext.hitsWorthReadingLengths + 400) {
            let article = Article(title: "note \(index)", body: "word " + body(), category: ["a", "b", "trash"][random.next(below: 3)])
            article.rating = random.next(below: 3)
            setup.insert(article)
        }
        try setup.save()
        let notTrashed = #Predicate<Article> { $0.category != "trash" }
        let narrower = #Predicate<Article> { $0.category != "trash" && $0.rating == 1 }
        let other = #Predicate<Article> { $0.category == "a" }
        for predicate in [notTrashed, narrower, other] { try setup.prepareCounts(of: \.category, where: predicate) }
        let conditions = [(notTrashed, "category != 'trash'"), (narrower, "category != 'trash' AND rating = 1"), (other, "category = 'a'")]
        func expected(_ condition: String) throws -> [Int64] {
            try container.store.read { db in
                try Int64.fetchAll(db, sql: """
                    SELECT "_fts_Article".rowid FROM "_fts_Article" JOIN Article ON Article."_pk" = "_fts_Article".rowid
                    WHERE "_fts_Article" MATCH '"word"' AND \(condition) ORDER BY bm25("_fts_Article", 10, 1), 1 LIMIT 25
                    """)
            }
        }
        for step in 0..<40 {
            let statements = try selects(in: container) {
                for (predicate, condition) in conditions {
                    let found = try ModelContext(container).search(Article.self, for: "word", where: predicate, weights: [\.title: 10], limit: 25)
                    XCTAssertEqual(try found.hits.map { try XCTUnwrap($0.model.persistentModelID.id.primaryKey) }, try expected(condition),
                                   "step \(step), \(condition)")
                }
            }
            // After the first, no search walks the word's entries: the ranks, the broader ranks or the
            // hit features all followed the saves.
            let walks = statements.filter { $0.contains("\(FullTextRanking.functionName)(") && !$0.contains("bm25(\"_fts_Article\", 10, 1)") }
            XCTAssertEqual(walks.count, step == 0 ? 1 : 0, "step \(step): \(walks)")
            let writer = ModelContext(container)
            var page = FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)])
            page.fetchOffset = random.next(below: 4_000)
            page.fetchLimit = 3
            for article in try writer.fetch(page) {
                switch random.next(below: 5) {
                case 0: article.body = body()
                case 1: article.title = random.next(below: 2) == 0 ? "word \(step)" : "note \(step)"
                case 2: article.rating = random.next(below: 3)
                case 3: article.category = ["a", "b", "trash"][random.next(below: 3)]
                default: writer.delete(article)
                }
            }
            if random.next(below: 3) == 0 { writer.insert(Article(title: "word \(step)", body: "word " + body(), category: "a")) }
            try writer.save()
        }
    }

    /// Pages on both sides of the kept ranks' end (the first 1,000), through random saves: each is
    /// bm25's window at its offset, so paging on never repeats or skips a hit, whichever way its
    /// pages were ranked (kept ranks brought up to date, hit features, or SQL past the kept ones).
    func testPagesAcrossTheEndOfTheKeptRanksFollowBM25ThroughRandomSaves() throws {
        let container = try makeContainer(Article.self)
        var random = SeededGenerator(seed: 29)
        let setup = ModelContext(container)
        func body() -> String {
            String(repeating: "word ", count: random.next(below: 3)) + String(repeating: "filler ", count: random.next(below: 12))
        }
        for index in 0..<(ModelContext.hitsWorthReadingLengths + 300) {
            setup.insert(Article(title: "note \(index)", body: "word " + body(), category: ["a", "b", "trash"][random.next(below: 3)]))
        }
        try setup.save()
        let notTrashed = #Predicate<Article> { $0.category != "trash" }
        try setup.prepareCounts(of: \.category, where: notTrashed)
        func expected(offset: Int) throws -> [Int64] {
            try container.store.read { db in
                try Int64.fetchAll(db, sql: """
                    SELECT "_fts_Article".rowid FROM "_fts_Article" JOIN Article ON Article."_pk" = "_fts_Article".rowid
                    WHERE "_fts_Article" MATCH '"word"' AND category != 'trash' ORDER BY bm25("_fts_Article", 10, 1), 1 LIMIT 25 OFFSET ?
                    """, arguments: [offset])
            }
        }
        let offsets = [0, ModelContext.cachedSearchRanks - 50, ModelContext.cachedSearchRanks - 25, ModelContext.cachedSearchRanks - 10,
                       ModelContext.cachedSearchRanks, ModelContext.cachedSearchRanks + 25]
        for step in 0..<12 {
            for offset in offsets.shuffled(using: &random) {
                let found = try ModelContext(container).search(
                    Article.self, for: "word", where: notTrashed, weights: [\.title: 10], limit: 25, offset: offset)
                XCTAssertEqual(try found.hits.map { try XCTUnwrap($0.model.persistentModelID.id.primaryKey) }, try expected(offset: offset),
                               "step \(step), offset \(offset)")
            }
            // Every other save leaves the index alone (hits into and out of the trash): the kept ranks
            // follow it, and lose or gain hits at their end. The others change the index.
            let writer = ModelContext(container)
            let triage = step % 2 == 0
            if triage {
                let notes = try writer.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)]))
                for _ in 0..<40 { notes[random.next(below: notes.count)].category = ["a", "trash"][random.next(below: 2)] }
            } else {
                var page = FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)])
                page.fetchOffset = random.next(below: 4_000)
                page.fetchLimit = 6
                for article in try writer.fetch(page) {
                    switch random.next(below: 3) {
                    case 0: article.body = "word " + body()
                    case 1: article.title = "word \(step)"
                    default: writer.delete(article)
                    }
                }
                writer.insert(Article(title: "word \(step)", body: "word " + body(), category: "a"))
            }
            try writer.save()
        }
    }

    func testAnInsertThatTakesOverASavedRowHasItsCountsMadeAgain() throws {
        let container = try makeContainer(GlossaryEntry.self)
        let first = ModelContext(container)
        first.insert(GlossaryEntry(term: "pie", definition: "apple pie"))
        try first.save()
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.search(GlossaryEntry.self, for: "apple").totalCount, 1)
        XCTAssertEqual(try reader.counts(of: \GlossaryEntry.term, matching: "apple"), ["pie": 1])

        // The same term again: the insert updates the saved row, whose key the save learns only as it writes.
        let second = ModelContext(container)
        // Its new text no longer matches: counted by key alone, it would stay in the count.
        second.insert(GlossaryEntry(term: "pie", definition: "pear pie"))
        second.insert(GlossaryEntry(term: "tart", definition: "apple tart"))
        try second.save()
        XCTAssertEqual(try reader.search(GlossaryEntry.self, for: "apple").totalCount, 1)
        XCTAssertEqual(try reader.counts(of: \GlossaryEntry.term, matching: "apple"), ["tart": 1])
        XCTAssertEqual(try reader.search(GlossaryEntry.self, for: "pear").totalCount, 1)
    }

    func testACountThatReadsOtherRowsOfItsOwnEntityIsMadeAgain() throws {
        let container = try makeContainer(OutlineItem.self)
        let writer = ModelContext(container)
        let draft = OutlineItem(title: "draft")
        for title in ["a", "b"] {
            let item = OutlineItem(title: title)
            item.parent = draft
            writer.insert(item)
        }
        try writer.save()
        let reader = ModelContext(container)
        let underDraft = FetchDescriptor<OutlineItem>(predicate: #Predicate { $0.parent?.title == "draft" })
        XCTAssertEqual(try reader.fetchCount(underDraft), 2)

        // Only the parent's row changes, but the count of its children's rows does.
        draft.title = "final"
        try writer.save()
        XCTAssertEqual(try reader.fetchCount(underDraft), 0)
    }

    /// A search's kept ranks follow saves that leave the index alone (a category changed) and are made
    /// again after those that change it; each window is compared with the same search in a container
    /// of its own, which ranks afresh. More hits than are kept, so that a window can reach past them.
    func testSearchRanksFollowSavesThatLeaveTheIndexAlone() throws {
        let container = try makeContainer(Article.self)
        var random = SeededGenerator(seed: 11)
        func body() -> String {
            // Every article has "apple"; counts of words and lengths vary, so that scores differ.
            (["apple"] + (0..<random.next(below: 5)).map { _ in ["apple", "pear", "filler"][random.next(below: 3)] })
                .joined(separator: " ")
        }
        let setUp = ModelContext(container)
        // Most in category "a", so that the filtered search too has more hits than are kept.
        for number in 0..<(ModelContext.cachedSearchRanks + 200) {
            setUp.insert(Article(title: "a\(number)", body: body(), category: random.next(below: 6) == 0 ? "b" : "a"))
        }
        try setUp.save()

        let reader = ModelContext(container)
        let inA = #Predicate<Article> { $0.category == "a" }
        let windows = [(0, 20), (ModelContext.cachedSearchRanks - 30, 30), (200, 50)]
        func ranks(in context: ModelContext, _ query: String, where predicate: Predicate<Article>?) throws -> [[String]] {
            try windows.map { offset, limit in
                try context.search(Article.self, for: query, where: predicate, limit: limit, offset: offset).hits.map(\.model.title)
            }
        }
        for step in 0..<25 {
            let writer = ModelContext(container)
            let articles = try writer.fetch(FetchDescriptor<Article>())
            var rewritesIndex = false
            for _ in 0..<(1 + random.next(below: 3)) {
                let article = articles[random.next(below: articles.count)]
                if random.next(below: 5) == 0 {
                    article.body = body()
                    rewritesIndex = true
                } else {
                    article.category = article.category == "a" ? "b" : "a"
                }
            }
            try writer.save()
            if !rewritesIndex && step > 0 {
                // The first page comes from the kept ranks, brought up to date by the save: nothing is ranked.
                let queries = try selects(in: container) {
                    _ = try reader.search(Article.self, for: "apple", where: inA, limit: 20)
                }
                XCTAssertFalse(queries.contains { $0.contains("bm25(") }, "step \(step)")
            }
            let fresh = ModelContext(try makeContainer(Article.self))
            for query in ["apple", "apple pear"] {
                for predicate in [nil, inA] {
                    XCTAssertEqual(try ranks(in: reader, query, where: predicate), try ranks(in: fresh, query, where: predicate),
                                   "step \(step), \(query), \(predicate == nil ? "all" : "category a")")
                }
            }
        }
    }

    func testAHitThatRanksPastTheKeptRanksIsNotAddedToThem() throws {
        let container = try makeContainer(Article.self)
        let kept = ModelContext.cachedSearchRanks
        // One more hit than are kept, each longer (so ranked lower) than the one before; and, in another
        // category, one that would rank last of all.
        let setUp = ModelContext(container)
        for number in 0...kept {
            setUp.insert(Article(title: "a\(number)", body: (["apple"] + Array(repeating: "filler", count: number)).joined(separator: " "), category: "a"))
        }
        let last = Article(title: "last", body: (["apple"] + Array(repeating: "filler", count: kept + 100)).joined(separator: " "), category: "b")
        setUp.insert(last)
        try setUp.save()
        let reader = ModelContext(container)
        let inA = #Predicate<Article> { $0.category == "a" }
        let firstRanks = try reader.search(Article.self, for: "apple", where: inA, limit: kept).hits.map(\.model.title)
        XCTAssertEqual(firstRanks.first, "a0")
        XCTAssertEqual(firstRanks.last, "a\(kept - 1)")

        // The best hit leaves the category and the worst joins it: the kept ranks lose one, and the
        // newcomer ranks below the hit that was just past them, so it must not be kept.
        let writer = ModelContext(container)
        let best = try XCTUnwrap(writer.fetch(FetchDescriptor<Article>(predicate: #Predicate { $0.title == "a0" })).first)
        best.category = "b"
        let worst = try XCTUnwrap(writer.fetch(FetchDescriptor<Article>(predicate: #Predicate { $0.title == "last" })).first)
        worst.category = "a"
        try writer.save()
        let ranks = try reader.search(Article.self, for: "apple", where: inA, limit: kept).hits.map(\.model.title)
        XCTAssertEqual(ranks, (1...kept).map { "a\($0)" })
    }

    /// The reader's counts (cached from earlier steps, and brought up to date or dropped by each save)
    /// against the same counts made from the models a fresh context reads.
    private func assertCountsMatchTheModels(reader: ModelContext, container: ModelContainer, step: Int) throws {
        let snippets = try ModelContext(container).fetch(FetchDescriptor<SnippetItem>())
        let message = "after step \(step)"
        var perFolder: [PersistentIdentifier?: Int] = [:]
        var perTag: [PersistentIdentifier: Int] = [:]
        var perTagFiled: [PersistentIdentifier: Int] = [:]
        var titlesInFolders: [String: Int] = [:]
        var taggedT1 = 0
        for snippet in snippets {
            perFolder[snippet.folder?.persistentModelID, default: 0] += 1
            for tag in snippet.tags {
                perTag[tag.persistentModelID, default: 0] += 1
                if snippet.folder != nil { perTagFiled[tag.persistentModelID, default: 0] += 1 }
            }
            if snippet.folder != nil { titlesInFolders[snippet.title, default: 0] += 1 }
            if snippet.tags.contains(where: { $0.name == "t1" }) { taggedT1 += 1 }
        }
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder), perFolder, message)
        XCTAssertEqual(try reader.counts(ofEach: \SnippetItem.tags), perTag, message)
        XCTAssertEqual(try reader.counts(ofEach: \SnippetItem.tags, where: #Predicate { $0.folder != nil }), perTagFiled, message)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title, where: #Predicate { $0.folder != nil }), titlesInFolders, message)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<SnippetItem>()), snippets.count, message)
        XCTAssertEqual(
            try reader.fetchCount(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.tags.contains { $0.name == "t1" } })),
            taggedT1, message)
        XCTAssertEqual(
            try reader.fetchCount(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.folder?.name == "Work" })),
            snippets.filter { $0.folder?.name == "Work" }.count, message)
    }
}

extension SeededGenerator {
    mutating func next(below bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }
}
