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
