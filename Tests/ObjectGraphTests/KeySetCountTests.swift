import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// Counts of a predicate made of parts (`Predicates.all`) come from each part's kept set of keys and
/// each grouping's kept pairs of row and group: the same numbers as evaluating the predicate on every
/// model, with no SQL once the parts are known, and kept right through saves.
final class KeySetCountTests: StoreTestCase {
    private var container: ModelContainer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        container = try makeContainer(SnippetFolder.self, SnippetItem.self, SnippetTag.self)
        let context = ModelContext(container)
        let tags = ["swift", "sql", "go"].map(SnippetTag.init)
        let folders = ["work", "home"].map(SnippetFolder.init)
        for index in 0..<90 {
            let item = SnippetItem(title: "\(["a", "b", "c", "d", "e"][index % 5])\(index)")
            item.folder = index % 3 == 2 ? nil : folders[index % 2]
            item.tags = tags.enumerated().filter { index % 7 & (1 << $0.offset) != 0 }.map(\.element)
            context.insert(item)
        }
        try context.save()
    }

    private let early = #Predicate<SnippetItem> { $0.title < "c" }
    private let filed = #Predicate<SnippetItem> { $0.folder != nil }
    private let taggedSQL = #Predicate<SnippetItem> { $0.tags.contains { $0.name == "sql" } }
    private let notGo = #Predicate<SnippetItem> { !$0.tags.contains { $0.name == "go" } }

    /// A combination's total and counts per folder, per tag and per title.
    private struct Counts: Equatable {
        var total = 0
        var perFolder: [PersistentIdentifier?: Int] = [:]
        var perTag: [PersistentIdentifier: Int] = [:]
        var perTitle: [String: Int] = [:]
    }

    private func counts(_ parts: [Predicate<SnippetItem>], in reader: ModelContext) throws -> Counts {
        let predicate = Predicates.all(parts)
        return Counts(
            total: try reader.fetchCount(FetchDescriptor(predicate: predicate)),
            perFolder: try reader.counts(of: \SnippetItem.folder, where: predicate),
            perTag: try reader.counts(ofEach: \SnippetItem.tags, where: predicate),
            perTitle: try reader.counts(of: \SnippetItem.title, where: predicate))
    }

    /// The same counts, by evaluating the predicate on every model in memory.
    private func countsInMemory(_ parts: [Predicate<SnippetItem>]) throws -> Counts {
        let predicate = Predicates.all(parts)
        var counts = Counts()
        for item in try ModelContext(container).fetch(FetchDescriptor<SnippetItem>()) where try predicate.evaluate(item) {
            counts.total += 1
            counts.perFolder[item.folder?.persistentModelID, default: 0] += 1
            for tag in item.tags { counts.perTag[tag.persistentModelID, default: 0] += 1 }
            counts.perTitle[item.title, default: 0] += 1
        }
        return counts
    }

    private func assertCountsAgreeWithTheModels(
        _ parts: [Predicate<SnippetItem>], in reader: ModelContext, _ message: String = "", file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let expected = try countsInMemory(parts)
        XCTAssertGreaterThan(expected.total, 0, "a test of nothing \(message)", file: file, line: line)
        XCTAssertEqual(try counts(parts, in: reader), expected, message, file: file, line: line)
    }

    /// Counts once, which has the grouping's pairs read in the background, and waits for them: a
    /// page that finds them missing counts in SQL.
    private func readPairs(_ reader: ModelContext) throws {
        _ = try counts([early], in: reader)
        container.store.backgroundPreparation.waitUntilIdle()
    }

    func testCountsOfEveryCombinationOfPartsAgreeWithTheModels() throws {
        let reader = ModelContext(container)
        try readPairs(reader)
        let parts = [early, filed, taggedSQL, notGo]
        for mask in 1..<(1 << parts.count) {
            try assertCountsAgreeWithTheModels(parts.indices.filter { mask & (1 << $0) != 0 }.map { parts[$0] }, in: reader, "mask \(mask)")
        }
        // Only a negated part: every model less the holders.
        try assertCountsAgreeWithTheModels([notGo, notGo], in: reader, "negated twice")
    }

    /// Once each part has been counted in some combination (and the pairs read), a new combination of
    /// them runs no SQL: its counts are intersections of the kept sets, walked through the kept pairs.
    func testANewCombinationOfKnownPartsRunsNoSQL() throws {
        let reader = ModelContext(container)
        try readPairs(reader)
        try assertCountsAgreeWithTheModels([early, filed], in: reader)
        try assertCountsAgreeWithTheModels([taggedSQL, notGo], in: reader)
        let expected = try countsInMemory([early, taggedSQL, notGo])
        var found = Counts()
        let statements = try selects(in: container) { found = try counts([early, taggedSQL, notGo], in: reader) }
        XCTAssertEqual(found, expected)
        XCTAssertEqual(statements, [])
    }

    /// Counts prepared when a store opens run no SQL the first time they are asked, alone or with a
    /// part seen before, and are right; so do totals of a prepared part; before a save and after it.
    /// What they count with is all made by then.
    func testPreparedCountsRunNoSQLTheFirstTime() throws {
        let reader = ModelContext(container)
        try reader.prepareCounts(of: \SnippetItem.folder, where: filed)
        try reader.prepareCounts(ofEach: \SnippetItem.tags, where: early)
        try reader.prepareCounts(of: \SnippetItem.title)
        container.store.backgroundPreparation.waitUntilIdle()
        let keptPairs: [GroupedKeys] = container.store.aggregateCache.keptValues(where: { _ in true })
        XCTAssertEqual(keptPairs.count, 3, "the pairs of the folders, of the tags and of the titles")
        XCTAssertTrue(keptPairs.allSatisfy(\.groupSetsAreMade), "their groups' sets are made as they are prepared, not by the first count")

        func assertCountsRunNoSQL(_ message: String) throws {
            let expected = try countsInMemory([filed, early])
            var found = (perFolder: [PersistentIdentifier?: Int](), perTag: [PersistentIdentifier: Int](), perTitle: [String: Int](),
                         filedTotal: 0, total: 0)
            let statements = try selects(in: container) {
                found.perFolder = try reader.counts(of: \SnippetItem.folder, where: filed)
                found.perTag = try reader.counts(ofEach: \SnippetItem.tags, where: early)
                found.perTitle = try reader.counts(of: \SnippetItem.title)
                XCTAssertEqual(try reader.counts(of: \SnippetItem.folder, where: Predicates.all([filed, early])), expected.perFolder, message)
                found.filedTotal = try reader.fetchCount(FetchDescriptor(predicate: filed))
                found.total = try reader.fetchCount(FetchDescriptor<SnippetItem>())
            }
            XCTAssertEqual(found.filedTotal, try countsInMemory([filed]).total, message)
            XCTAssertEqual(found.total, try countsInMemory([]).total, message)
            XCTAssertEqual(statements, [], message)
            XCTAssertEqual(found.perFolder, try countsInMemory([filed]).perFolder, message)
            XCTAssertEqual(found.perTag, try countsInMemory([early]).perTag, message)
            XCTAssertEqual(found.perTitle, try countsInMemory([]).perTitle, message)
        }
        try assertCountsRunNoSQL("before a save")

        let writer = ModelContext(container)
        let items = try writer.fetch(FetchDescriptor<SnippetItem>(sortBy: [SortDescriptor(\.title)]))
        items[0].folder = nil
        items[1].title = "z moved late"
        items[2].tags = []
        try writer.save()
        try assertCountsRunNoSQL("after a save")
    }

    /// The set of a to-many test on listed related rows (a tag by its unique name) is read from the
    /// join table alone: its owners are the keys wanted, and looking each up in the owner's table
    /// cost 7-12 ms for a tag's 4,700 snippets at 100,000 (2 ms from the join table). The counts stay
    /// right before and after a save that changes the tags and deletes a tagged item.
    func testAToManyTestsSetIsReadFromTheJoinTableAlone() throws {
        let reader = ModelContext(container)
        try readPairs(reader)
        var found = Counts()
        let statements = try selects(in: container) { found = try counts([taggedSQL, notGo], in: reader) }
        XCTAssertEqual(found, try countsInMemory([taggedSQL, notGo]))
        // The two tags' sets (the negated part's is its holders'), each from the join table's rows.
        let setReads = statements.filter { $0.hasPrefix(#"SELECT "t2"."source" FROM "_SnippetItem_tags" AS "t2" WHERE"#) }
        XCTAssertEqual(setReads.count, 2, "\(statements)")
        XCTAssertFalse(statements.contains { $0.hasPrefix(#"SELECT "t0"."_pk" FROM "SnippetItem" AS "t0" WHERE ("t0"."_pk" IN"#) }, "\(statements)")

        let writer = ModelContext(container)
        let items = try writer.fetch(FetchDescriptor<SnippetItem>(sortBy: [SortDescriptor(\.title)]))
        let tags = try writer.fetch(FetchDescriptor<SnippetTag>(sortBy: [SortDescriptor(\.name)]))
        let tagged = try XCTUnwrap(items.first { $0.tags.contains { $0.name == "sql" } })
        items.first { $0 !== tagged }?.tags = tags
        writer.delete(tagged)
        try writer.save()
        try assertCountsAgreeWithTheModels([taggedSQL, notGo], in: reader, "after the save")
        try assertCountsAgreeWithTheModels([taggedSQL], in: ModelContext(container), "a new context")
    }

    /// A save brings the kept sets and pairs up to date from its own rows: a new combination after it
    /// is right, and still reads no row from SQL.
    func testKeptSetsAndPairsFollowSaves() throws {
        let reader = ModelContext(container)
        try readPairs(reader)
        try assertCountsAgreeWithTheModels([early, filed, taggedSQL, notGo], in: reader)

        let writer = ModelContext(container)
        let items = try writer.fetch(FetchDescriptor<SnippetItem>(sortBy: [SortDescriptor(\.title)]))
        let tags = try writer.fetch(FetchDescriptor<SnippetTag>(sortBy: [SortDescriptor(\.name)]))
        let go = try XCTUnwrap(tags.first { $0.name == "go" }), sql = try XCTUnwrap(tags.first { $0.name == "sql" })
        items[0].title = "z moved late"
        items[1].folder = nil
        items[2].tags = [go, sql]
        items[3].tags = []
        writer.delete(items[4])
        let added = SnippetItem(title: "a new one")
        writer.insert(added)
        added.folder = items[5].folder
        added.tags = [sql]
        try writer.save()

        for parts in [[early, taggedSQL], [filed, notGo], [early, filed, notGo]] {
            let expected = try countsInMemory(parts)
            var found = Counts()
            let statements = try selects(in: container) { found = try counts(parts, in: reader) }
            XCTAssertEqual(found, expected)
            XCTAssertEqual(statements, [], "the kept sets and pairs followed the save")
        }
    }

    func testKeySetOperations() {
        var keys = KeySet([3, 64, 65, 200])
        XCTAssertEqual(keys.count, 4)
        XCTAssertTrue(keys.contains(64) && keys.contains(200) && !keys.contains(4) && !keys.contains(-1) && !keys.contains(10_000))
        keys.insert(64)
        XCTAssertEqual(keys.count, 4, "a key held once")
        keys.remove(3)
        keys.remove(5)
        XCTAssertEqual(keys.count, 3)
        let other = KeySet([64, 200, 300])
        XCTAssertEqual(keys.intersection(other).count, 2)
        XCTAssertTrue(keys.intersection(other).contains(200) && !keys.intersection(other).contains(300))
        XCTAssertEqual(keys.subtracting(other).count, 1)
        XCTAssertTrue(keys.subtracting(other).contains(65))
        XCTAssertEqual(other.subtracting(keys).count, 1, "a longer set less a shorter one")
        XCTAssertEqual(keys.replacing([64, 65], with: [7]).count, 2)
        var far = KeySet([1])
        far.insert(KeySet.largestKey + 1)
        XCTAssertTrue(far.unrepresentable)
        XCTAssertTrue(KeySet([1]).intersection(far).unrepresentable)
    }

    func testGroupedKeysCountAndFollowChanges() {
        var pairs = GroupedKeys()
        for (owner, group) in [(1, "x"), (1, "y"), (2, "x"), (3, "z")] as [(Int64, String)] {
            pairs.append(owner, group.databaseValue)
        }
        let counted = Self.counts
        XCTAssertEqual(counted(pairs, KeySet([1, 2, 3])), ["x": 2, "y": 1, "z": 1])
        XCTAssertEqual(counted(pairs, KeySet([1])), ["x": 1, "y": 1])
        var before = GroupedKeys(), after = GroupedKeys()
        before.append(1, "x".databaseValue)
        before.append(1, "y".databaseValue)
        after.append(1, "w".databaseValue)
        after.append(4, "x".databaseValue)
        XCTAssertEqual(counted(pairs.replacing(before, with: after), KeySet([1, 2, 3, 4])), ["w": 1, "x": 2, "z": 1])
    }

    /// Counts per group from each group's set agree with a walk of the pairs, counted first or after
    /// `replacing` (whose result counts its own pairs, not those of the value it came from); pairs
    /// that repeat a row in a group, or name a negative key, are counted pair by pair.
    func testGroupedKeysCountWithGroupSetsAsThePairsDo() {
        let groups = Self.groupValues(12)
        let (pairs, model) = Self.randomPairs(owners: 3_000, groups: groups, mostPerOwner: 3)
        let expected = Self.expectedCounts, counted = Self.counts
        let sets = [KeySet((0..<3_000).filter { $0 % 3 == 0 }), KeySet([5, 2_999]), KeySet(), KeySet(0..<4_000)]
        for keys in sets { XCTAssertEqual(counted(pairs, keys), expected(model, keys)) }
        pairs.prepareCounts()

        var before = GroupedKeys(), after = GroupedKeys()
        for pair in model where pair.owner % 7 == 0 { before.append(pair.owner, groups[pair.group]) }
        var changed = model.filter { $0.owner % 7 != 0 }
        for owner in stride(from: Int64(0), to: 3_000, by: 7) {
            after.append(owner, groups[Int(owner) % 12])
            changed.append((owner, Int(owner) % 12))
        }
        let replaced = pairs.replacing(before, with: after)
        // New rows only: nothing taken out.
        var inserted = GroupedKeys()
        for owner in Int64(3_000)..<3_100 { inserted.append(owner, groups[Int(owner) % 12]) }
        let added = pairs.replacing(GroupedKeys(), with: inserted)
        let withAdded = model + (Int64(3_000)..<3_100).map { (owner: $0, group: Int($0) % 12) }
        for keys in sets {
            XCTAssertEqual(counted(replaced, keys), expected(changed, keys))
            XCTAssertEqual(counted(added, keys), expected(withAdded, keys))
            XCTAssertEqual(counted(pairs, keys), expected(model, keys), "the pairs it came from count as before")
        }

        var repeated = GroupedKeys()
        for (owner, group) in [(1, 0), (1, 0), (2, 0), (-3, 1), (4, 1)] as [(Int64, Int)] { repeated.append(owner, groups[group]) }
        XCTAssertEqual(counted(repeated, KeySet([1, 2, 4])), ["g0": 3, "g1": 1])
    }

    /// A set of few keys is counted at the words that hold them: the same counts as a walk of the
    /// pairs, for keys in one word, at both ends, past every group's rows, and at the most words that
    /// are still few; a set spread wider is counted word by word.
    func testGroupedKeysCountAFewKeysAtTheirWordsAlone() {
        var generator = SystemRandomNumberGenerator()
        let (pairs, model) = Self.randomPairs(owners: 20_000, groups: Self.groupValues(9), mostPerOwner: 2)
        XCTAssertEqual(KeySet([1, 70, 19_999]).fewOccupiedWords, [0, 1, 312])
        XCTAssertEqual(KeySet().fewOccupiedWords, [])
        XCTAssertNil(KeySet(stride(from: Int64(0), to: 20_000, by: 64)).fewOccupiedWords, "a key in every word")
        // The sets on either side of where keys stop being few.
        var spread: [Int64] = [19_999]
        var lastFew = KeySet(spread), firstWide: KeySet?
        for word in 0..<312 {
            spread.append(Int64(word * 64 + 5))
            let keys = KeySet(spread)
            if keys.fewOccupiedWords == nil {
                firstWide = keys
                break
            }
            lastFew = keys
        }
        XCTAssertGreaterThan(lastFew.fewOccupiedWords?.count ?? 0, 20)
        XCTAssertNotNil(firstWide)
        let sets = [
            KeySet([7]), KeySet([0, 1, 2, 63]), KeySet([0, 19_999]), KeySet([3, 50_000, 60_000]), KeySet([19_999, 25_000]),
            lastFew, firstWide ?? KeySet(), KeySet((0..<30).map { _ in Int64.random(in: 0..<20_000, using: &generator) }),
        ]
        pairs.prepareCounts()
        for keys in sets { XCTAssertEqual(Self.counts(pairs, keys), Self.expectedCounts(model, keys), "\(keys.sortedKeys.prefix(8))") }
    }

    private static func groupValues(_ count: Int) -> [DatabaseValue] {
        (0..<count).map { "g\($0)".databaseValue }
    }

    /// Pairs of each owner in `0..<owners` with up to `mostPerOwner` different random groups, and the
    /// same pairs as a list to count from.
    private static func randomPairs(
        owners: Int64, groups: [DatabaseValue], mostPerOwner: Int
    ) -> (GroupedKeys, [(owner: Int64, group: Int)]) {
        var generator = SystemRandomNumberGenerator()
        var pairs = GroupedKeys(), model: [(owner: Int64, group: Int)] = []
        for owner in 0..<owners {
            let chosen = (0..<Int.random(in: 0...mostPerOwner, using: &generator)).map { _ in
                Int.random(in: 0..<groups.count, using: &generator)
            }
            for group in Set(chosen) {
                pairs.append(owner, groups[group])
                model.append((owner, group))
            }
        }
        return (pairs, model)
    }

    /// The count per group name of the pairs whose owner `keys` holds, from the list.
    private static func expectedCounts(_ model: [(owner: Int64, group: Int)], _ keys: KeySet) -> [String: Int] {
        var counts: [String: Int] = [:]
        for pair in model where keys.contains(pair.owner) { counts["g\(pair.group)", default: 0] += 1 }
        return counts
    }

    private static func counts(_ pairs: GroupedKeys, _ keys: KeySet) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: pairs.counts(of: keys).map { (String.fromDatabaseValue($0.0) ?? "?", $0.1) })
    }

    /// A search's counts per group come from the word's kept set of hits, intersected with the
    /// predicate's sets: right against the models, with no SQL once the word and the parts are known,
    /// and through saves that change the text, the group, or the rows.
    func testSearchCountsFromTheWordsKeptHits() throws {
        let container = try makeContainer(Article.self)
        let writer = ModelContext(container)
        let words = ["apple", "pear", "plum"]
        for index in 0..<60 {
            let article = Article(title: "note \(index)", body: "\(words[index % 3]) \(words[index % 2]) tart",
                                  category: ["a", "b", "c"][index % 3])
            article.rating = index % 4
            writer.insert(article)
        }
        try writer.save()
        let rated = #Predicate<Article> { $0.rating > 0 }
        let topRated = #Predicate<Article> { $0.rating > 2 }
        func expected(_ word: String, _ predicate: Predicate<Article>) throws -> [String: Int] {
            let hits = try ModelContext(container).fetch(FetchDescriptor<Article>()).filter {
                try predicate.evaluate($0) && ($0.title + " " + $0.body).split(separator: " ").contains(Substring(word))
            }
            return Dictionary(grouping: hits, by: \.category).mapValues(\.count)
        }
        let reader = ModelContext(container)
        _ = try reader.counts(of: \Article.category, matching: "apple")
        container.store.backgroundPreparation.waitUntilIdle()
        // The word's hits and each part's set, read by these counts.
        XCTAssertEqual(try reader.counts(of: \Article.category, where: rated, matching: "apple"), try expected("apple", rated))
        XCTAssertEqual(try reader.counts(of: \Article.category, where: topRated, matching: "pear"), try expected("pear", topRated))

        var found: [String: Int] = [:]
        var statements = try selects(in: container) {
            found = try reader.counts(of: \Article.category, where: Predicates.all([rated, topRated]), matching: "apple")
        }
        XCTAssertEqual(found, try expected("apple", Predicates.all([rated, topRated])))
        XCTAssertEqual(statements, [], "a known word and known parts")
        // The search's total from the same sets: no count of the hits joined to their rows (the index's
        // own count of its hits, which chooses how to rank, remains).
        var total = 0
        statements = try selects(in: container) {
            total = try reader.search(Article.self, for: "apple", where: Predicates.all([topRated, rated])).totalCount
        }
        XCTAssertEqual(total, try expected("apple", Predicates.all([topRated, rated])).values.reduce(0, +))
        XCTAssertFalse(statements.contains { $0.contains("COUNT(") && $0.contains("JOIN") }, "\(statements)")

        let articles = try writer.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)]))
        articles[0].body = "pear only"
        articles[1].body = "apple now"
        articles[2].category = "z"
        writer.delete(articles[3])
        let added = Article(title: "apple pie", body: "plum", category: "b")
        added.rating = 3
        writer.insert(added)
        try writer.save()
        for (word, predicate) in [("apple", topRated), ("pear", rated), ("apple", Predicates.all([topRated, rated]))] {
            statements = try selects(in: container) { found = try reader.counts(of: \Article.category, where: predicate, matching: word) }
            XCTAssertEqual(found, try expected(word, predicate), word)
            XCTAssertEqual(statements, [], "the kept hits followed the save: \(word)")
            statements = try selects(in: container) { total = try reader.search(Article.self, for: word, where: predicate).totalCount }
            XCTAssertEqual(total, try expected(word, predicate).values.reduce(0, +), word)
            XCTAssertFalse(statements.contains { $0.contains("COUNT(") && $0.contains("JOIN") }, "\(statements)")
        }
    }
}
