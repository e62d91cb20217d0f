import Foundation
@testable import ObjectGraph
import XCTest

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

    /// When most owners match, the counts are every join row's less those of the owners that do not.
    func testCountsOfMostOwnersAreEveryCountLessTheOthers() throws {
        var counts: [PersistentIdentifier: Int] = [:]
        let broad = try selects(in: container) {
            counts = try context.counts(ofEach: \SnippetItem.tags, where: #Predicate { $0.title != "e" })
        }
        XCTAssertEqual(byName(counts), ["swift": 3, "sql": 2])
        XCTAssertTrue(broad.contains { $0.contains("NOT COALESCE") }, "\(broad)")

        let narrow = try selects(in: container) {
            counts = try context.counts(ofEach: \SnippetItem.tags, where: #Predicate { $0.title == "a" })
        }
        XCTAssertEqual(byName(counts), ["swift": 1, "sql": 1])
        XCTAssertFalse(narrow.contains { $0.contains("NOT COALESCE") }, "few owners match: counted directly")

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
}
