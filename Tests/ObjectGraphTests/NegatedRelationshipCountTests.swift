import Foundation
@testable import ObjectGraph
import XCTest

/// Counts of a predicate that excludes the holders of a to-many match (`!$0.tags.contains { … }`) are
/// the counts of its other parts less those of the holders: the same numbers as evaluating the
/// predicate on every model in memory.
final class NegatedRelationshipCountTests: StoreTestCase {
    private var container: ModelContainer!
    private var context: ModelContext!

    override func setUpWithError() throws {
        try super.setUpWithError()
        container = try makeContainer(SnippetFolder.self, SnippetItem.self, SnippetTag.self)
        context = ModelContext(container)
        let tags = ["swift", "sql", "go"].map(SnippetTag.init)
        let folders = ["work", "home"].map(SnippetFolder.init)
        for index in 0..<60 {
            let item = SnippetItem(title: String(UnicodeScalar(UInt8(97 + index % 26))) + "\(index)")
            item.folder = index % 3 == 2 ? nil : folders[index % 2]
            // Every subset of the three tags, the empty one included, in turn.
            item.tags = tags.enumerated().filter { index % 8 & (1 << $0.offset) != 0 }.map(\.element)
            context.insert(item)
        }
        try context.save()
    }

    private var withoutSwift: Predicate<SnippetItem> { #Predicate { !$0.tags.contains { $0.name == "swift" } } }

    private var earlyTitlesWithoutSwiftOrGo: Predicate<SnippetItem> {
        let names = ["swift", "go"]
        return Predicates.all([#Predicate { $0.title < "m" }, #Predicate { !$0.tags.contains { names.contains($0.name) } }])
    }

    private var atWorkWithoutSwiftOrSQL: Predicate<SnippetItem> {
        Predicates.all([
            #Predicate { !$0.tags.contains { $0.name == "swift" } },
            #Predicate { $0.folder?.name == "work" },
            #Predicate { !$0.tags.contains { $0.name == "sql" } },
        ])
    }

    /// The models that match, found by evaluating the predicate on each in memory.
    private func matching(_ predicate: Predicate<SnippetItem>) throws -> [SnippetItem] {
        try ModelContext(container).fetch(FetchDescriptor<SnippetItem>()).filter { try predicate.evaluate($0) }
    }

    private func assertCountsAgreeWithMemory(_ predicate: Predicate<SnippetItem>, file: StaticString = #filePath, line: UInt = #line) throws {
        let expected = try matching(predicate)
        XCTAssertFalse(expected.isEmpty, "a test of nothing", file: file, line: line)
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor(predicate: predicate)), expected.count, "total", file: file, line: line)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.folder, where: predicate),
                       Dictionary(expected.map { ($0.folder?.persistentModelID, 1) }, uniquingKeysWith: +), "per folder", file: file, line: line)
        XCTAssertEqual(try reader.counts(ofEach: \SnippetItem.tags, where: predicate),
                       Dictionary(expected.flatMap(\.tags).map { ($0.persistentModelID, 1) }, uniquingKeysWith: +), "per tag", file: file, line: line)
        XCTAssertEqual(try reader.counts(of: \SnippetItem.title, where: predicate),
                       Dictionary(expected.map { ($0.title, 1) }, uniquingKeysWith: +), "per title", file: file, line: line)
    }

    func testCountsAgreeWithEvaluatingThePredicateOnEveryModel() throws {
        try assertCountsAgreeWithMemory(withoutSwift)
        try assertCountsAgreeWithMemory(earlyTitlesWithoutSwiftOrGo)
        try assertCountsAgreeWithMemory(atWorkWithoutSwiftOrSQL)
    }

    /// Both counts are kept and follow saves: a tag put on and taken off, a model added and deleted.
    func testCountsFollowSaves() throws {
        for predicate in [withoutSwift, earlyTitlesWithoutSwiftOrGo, atWorkWithoutSwiftOrSQL] { try assertCountsAgreeWithMemory(predicate) }
        let items = try context.fetch(FetchDescriptor<SnippetItem>(sortBy: [SortDescriptor(\.title)]))
        let swift = try XCTUnwrap(context.fetch(FetchDescriptor<SnippetTag>(predicate: #Predicate { $0.name == "swift" })).first)
        items[0].tags.append(swift)
        items[1].tags.removeAll()
        let added = SnippetItem(title: "a new one")
        added.folder = items[2].folder
        context.insert(added)
        context.delete(items[3])
        try context.save()
        for predicate in [withoutSwift, earlyTitlesWithoutSwiftOrGo, atWorkWithoutSwiftOrSQL] { try assertCountsAgreeWithMemory(predicate) }
    }

    /// The holders are found from the relationship; no statement tests every other model against
    /// them. A lone negated test is the count of every model less the holders'; one part of several
    /// is the set of every model less the holders' set, intersected with the other parts' sets.
    func testTheCountIsTheOthersLessTheHolders() throws {
        let reader = ModelContext(container)
        var count = 0
        let alone = try selects(in: container) { count = try reader.fetchCount(FetchDescriptor(predicate: withoutSwift)) }
        XCTAssertEqual(count, try matching(withoutSwift).count)
        XCTAssertFalse(alone.contains { $0.contains("NOT") }, "\(alone)")
        let statements = try selects(in: container) {
            count = try reader.fetchCount(FetchDescriptor(predicate: earlyTitlesWithoutSwiftOrGo))
        }
        XCTAssertEqual(count, try matching(earlyTitlesWithoutSwiftOrGo).count)
        XCTAssertFalse(statements.contains { $0.contains("NOT") }, "\(statements)")
        XCTAssertTrue(statements.contains { $0.contains("_SnippetItem_tags") }, "the holders: \(statements)")
        let perFolder = try selects(in: container) { _ = try reader.counts(of: \SnippetItem.folder, where: withoutSwift) }
        XCTAssertFalse(perFolder.contains { $0.contains("NOT") }, "\(perFolder)")
    }
}
