import Foundation
@testable import ObjectGraph
import XCTest

/// Searchable, with labels: counts per label of the dishes a word finds.
@Model final class Dish {
    @Attribute(.spotlight) var title: String
    var labels: [DishLabel] = []
    init(title: String) { self.title = title }
}

@Model final class DishLabel {
    @Attribute(.unique) var name: String
    var dishes: [Dish] = []
    init(name: String) { self.name = name }
}

/// `counts(ofEach:)`: how many models match, per related model of a to-many relationship.
final class GroupedCountsTests: StoreTestCase {
    private var container: ModelContainer!
    private var context: ModelContext!
    private var tags: [String: SnippetTag] = [:]
    private var folders: [String: SnippetFolder] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        container = try makeContainer(SnippetFolder.self, SnippetItem.self, SnippetTag.self)
        context = ModelContext(container)
        for name in ["swift", "sql", "unused"] { tags[name] = SnippetTag(name: name) }
        for name in ["work", "home"] { folders[name] = SnippetFolder(name: name) }
        // title, folder, tags
        for (title, folder, tagNames) in [
            ("a", "work", ["swift", "sql"]), ("b", "work", ["swift"]), ("c", "home", ["sql"]),
            ("d", nil, ["swift"]), ("e", "home", []),
        ] as [(String, String?, [String])] {
            let item = SnippetItem(title: title)
            item.folder = folder.flatMap { folders[$0] }
            item.tags = tagNames.compactMap { tags[$0] }
            context.insert(item)
        }
        tags.values.forEach { context.insert($0) }
        try context.save()
    }

    private func byName(_ counts: [PersistentIdentifier: Int]) -> [String: Int] {
        var result: [String: Int] = [:]
        for (name, tag) in tags { if let count = counts[tag.persistentModelID] { result[name] = count } }
        return result
    }

    func testEachTagCountsTheMatchingModelsThatHaveIt() throws {
        XCTAssertEqual(byName(try context.counts(ofEach: \SnippetItem.tags)), ["swift": 3, "sql": 2])
        XCTAssertEqual(byName(try context.counts(ofEach: \SnippetItem.tags, where: #Predicate { $0.folder?.name == "work" })),
                       ["swift": 2, "sql": 1])
        XCTAssertEqual(byName(try context.counts(ofEach: \SnippetItem.tags, where: #Predicate { $0.title == "e" })), [:])
    }

    /// Counts of most owners and of few, and of conditions SQL makes NULL, agree with the models.
    /// (Counts per tag of a search, where most owners match, are every join row's less those of the
    /// owners that do not: `testCountsOfASearchMostRowsMatchFollowSavesRowByRow`.)
    func testCountsOfMostOrFewOwnersAgreeWithTheModels() throws {
        XCTAssertEqual(byName(try context.counts(ofEach: \SnippetItem.tags, where: #Predicate { $0.title != "e" })), ["swift": 3, "sql": 2])
        XCTAssertEqual(byName(try context.counts(ofEach: \SnippetItem.tags, where: #Predicate { $0.title == "a" })), ["swift": 1, "sql": 1])

        // Conditions an item without a folder can make NULL in SQL (the first: `nil == false` is false
        // in Swift, NULL in SQL), each compared with the models. Most items match each of them.
        let predicates: [Predicate<SnippetItem>] = [
            #Predicate { $0.folder?.name.contains("x") == false },
            #Predicate { $0.folder?.name != "home" },
            #Predicate { $0.folder?.name == "work" || $0.title != "c" },
            #Predicate { $0.folder?.name != "nowhere" },
        ]
        for predicate in predicates {
            var expected: [String: Int] = [:]
            for item in try context.fetch(FetchDescriptor<SnippetItem>()) where try predicate.evaluate(item) {
                for tag in item.tags { expected[tag.name, default: 0] += 1 }
            }
            XCTAssertEqual(byName(try ModelContext(container).counts(ofEach: \SnippetItem.tags, where: predicate)), expected)
        }
    }

    func testCountsFollowSavesAndDeletes() throws {
        let b = try XCTUnwrap(context.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == "b" })).first)
        b.tags.append(try XCTUnwrap(tags["unused"]))
        try context.save()
        XCTAssertEqual(byName(try context.counts(ofEach: \SnippetItem.tags)), ["swift": 3, "sql": 2, "unused": 1])
        context.delete(b)
        try context.save()
        XCTAssertEqual(byName(try ModelContext(container).counts(ofEach: \SnippetItem.tags)), ["swift": 2, "sql": 2])
    }

    func testAnInverseForeignKeyCountsEachRelatedModelOfTheMatchingOwners() throws {
        let counts = try context.counts(ofEach: \SnippetFolder.snippets, where: #Predicate { $0.name == "home" })
        let items = try context.fetch(FetchDescriptor<SnippetItem>())
        let home = Set(items.filter { $0.folder?.name == "home" }.map(\.persistentModelID))
        XCTAssertEqual(Set(counts.keys), home)
        XCTAssertEqual(Set(counts.values), [1])
    }

    /// Counts per label of what a word finds, when most dishes have it: kept, they follow a save
    /// with each changed row's match tested by rowid, not with the word's whole set of hits.
    func testCountsOfASearchMostRowsMatchFollowSavesRowByRow() throws {
        let container = try makeContainer(Dish.self, DishLabel.self)
        let writer = ModelContext(container)
        let quick = DishLabel(name: "quick"), cheap = DishLabel(name: "cheap")
        for index in 0..<8 {
            let dish = Dish(title: index < 7 ? "soup \(index)" : "bread")
            dish.labels = index % 2 == 0 ? [quick] : [quick, cheap]
            writer.insert(dish)
        }
        try writer.save()
        let reader = ModelContext(container)
        func named(_ counts: [PersistentIdentifier: Int]) -> [String: Int] {
            [quick, cheap].reduce(into: [:]) { result, label in result[label.name] = counts[label.persistentModelID] }
        }
        let first = try selects(in: container) {
            XCTAssertEqual(named(try reader.counts(ofEach: \Dish.labels, matching: "soup")), ["quick": 7, "cheap": 3])
        }
        XCTAssertTrue(first.contains { $0.contains("NOT COALESCE") }, "most dishes match: \(first)")

        let soup = try XCTUnwrap(writer.fetch(FetchDescriptor<Dish>(predicate: #Predicate { $0.title == "soup 0" })).first)
        // A new label, and a new title that still has the word: the counts of the word follow both.
        soup.labels.append(cheap)
        soup.title = "soup of the day"
        let saving = try container.store.sqlLog.statements(during: { try writer.save() })
        XCTAssertFalse(saving.contains { $0.contains("IN (SELECT rowid FROM") }, "a save tests its rows' match one by one: \(saving)")
        let after = try selects(in: container) {
            XCTAssertEqual(named(try reader.counts(ofEach: \Dish.labels, matching: "soup")), ["quick": 7, "cheap": 4])
        }
        XCTAssertFalse(after.contains { $0.contains("COUNT(") }, "the kept counts followed the save: \(after)")
    }

    /// A search and the counts per label of the same word count its hits once between them: the
    /// counts by complement take the search's total from the cache.
    func testASearchAndTheCountsOfItsWordCountTheHitsOnce() throws {
        let container = try makeContainer(Dish.self, DishLabel.self)
        let writer = ModelContext(container)
        let quick = DishLabel(name: "quick")
        for index in 0..<6 {
            let dish = Dish(title: index < 5 ? "soup \(index)" : "bread")
            dish.labels = [quick]
            writer.insert(dish)
        }
        try writer.save()
        let reader = ModelContext(container)
        let searching = try selects(in: container) {
            XCTAssertEqual(try reader.search(Dish.self, for: "soup").totalCount, 5)
        }
        // The hits with their rows, once (the count of the index's own hits, which decides how to rank, is another).
        XCTAssertEqual(searching.filter { $0.hasPrefix("SELECT COUNT(*)") && $0.contains("MATCH") && $0.contains("JOIN") }.count, 1, "\(searching)")
        let counting = try selects(in: container) {
            XCTAssertEqual(try reader.counts(ofEach: \Dish.labels, matching: "soup")[quick.persistentModelID], 5)
        }
        XCTAssertTrue(counting.contains { $0.contains("NOT COALESCE") }, "most dishes match: by complement: \(counting)")
        XCTAssertFalse(counting.contains { $0.hasPrefix("SELECT COUNT(*)") && $0.contains("MATCH") },
                       "the hits were counted by the search: \(counting)")
    }
}
