import Foundation
import ObjectGraph
@testable import SnippetBox
import XCTest

/// Titles and names in the order people read them (``TitleOrder``), and the sort key a store of an
/// earlier version gets for each snippet it holds.
final class TitleOrderTests: LibraryStoreTestCase {
    func testTheKeyIgnoresCaseAccentsAndWidthAndOrdersNumbersByValue() {
        let key = TitleOrder.sortKey
        XCTAssertEqual(key("Éclair"), key("eclair"))
        XCTAssertEqual(key("ＡＢＣ"), key("abc"), "full-width letters")
        XCTAssertEqual(key("  Zed "), key("zed"), "surrounding spaces")
        XCTAssertEqual(key("Step 007"), key("step 7"), "leading zeros")
        XCTAssertLessThan(key("Step 9"), key("Step 10"))
        XCTAssertLessThan(key("v2.9"), key("v2.10"))
        XCTAssertLessThan(key("apple"), key("Zed"))
        XCTAssertLessThan(key("Ölberg"), key("Zed"))
        XCTAssertLessThan(key("0"), key("00001"))
        XCTAssertLessThan(key("build 999999999"), key("build 100000000000"))
        XCTAssertEqual(key("Step 10"), "step 0210", "a number after its count of digits")
        XCTAssertEqual(key(String(repeating: "7", count: 150)).count, 152, "a longer number keeps its digits")
        XCTAssertLessThan(key("item"), key("item 0"))
        XCTAssertEqual(key(""), "")
    }

    func testAShortListSortsByKeyAndKeepsTheOrderOfEqualKeys() {
        let names = ["beta", "Alpha", "folder 10", "Folder 9", "alpha", "Élan"]
        XCTAssertEqual(TitleOrder.sorted(names, byName: { $0 }), ["Alpha", "alpha", "beta", "Élan", "Folder 9", "folder 10"])
    }

    /// A name's key is kept for the pages after it: the kept key is the key, the first time and every
    /// time after, and more names than are kept start the kept keys over instead of growing them.
    func testANamesKeptKeyIsItsKeyAndTheKeptKeysStayBounded() {
        let names = (0..<(TitleOrder.keptNameKeys + 300)).map { "Ébauche \($0 % 7 == 0 ? "ＷＩＤＥ" : "narrow") \($0)" }
        for round in 0..<2 {
            for name in names {
                XCTAssertEqual(TitleOrder.nameSortKey(name), TitleOrder.sortKey(name), "\(name), round \(round)")
                XCTAssertLessThanOrEqual(TitleOrder.keptNameKeyCount, TitleOrder.keptNameKeys)
            }
        }
    }

    func testFoldersTagsAndSavedSearchesAreListedInTitleOrder() throws {
        let context = ModelContext(container)
        for name in ["beta", "Alpha", "Folder 10", "folder 9"] { context.insert(Folder(name: name)) }
        for (index, name) in ["SQL", "bash", "Python 3", "python 2"].enumerated() {
            context.insert(Tag(name: name, color: ColorData.palette[index]))
        }
        for name in ["todo", "Recent", "été"] { context.insert(SavedSearch(name: name, query: "q=\(name)")) }
        try context.save()

        let listed = try FoldersAndTags(context: ModelContext(container))
        XCTAssertEqual(listed.folders.map(\.name), ["Alpha", "beta", "folder 9", "Folder 10"])
        XCTAssertEqual(listed.tags.map(\.name), ["bash", "python 2", "Python 3", "SQL"])
        let sidebar = try Presenter(context: ModelContext(container)).sidebar(current: "")
        XCTAssertEqual(sidebar.folders.map(\.name), ["Alpha", "beta", "folder 9", "Folder 10"])
        XCTAssertEqual(sidebar.savedSearches.map(\.name), ["été", "Recent", "todo"])
        let options = try Presenter(context: ModelContext(container)).folderOptions(selected: nil, includeNone: false)
        XCTAssertEqual(options.map(\.label), ["Alpha", "beta", "folder 9", "Folder 10"])
    }

    /// A version 2 store has no sort keys: the migration computes one for every snippet, in batches
    /// (three here, the last one short), and the list then sorts by them.
    func testAVersionTwoStoreGetsEverySnippetsKeyWhenItOpens() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("v2-\(UUID().uuidString)").appendingPathComponent("library.store")
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let count = 2_345
        do {
            let old = try ModelContainer(for: Schema(versionedSchema: SnippetSchemaV2.self), configurations: ModelConfiguration(url: url))
            let context = ModelContext(old)
            for index in 0..<count {
                context.insert(SnippetSchemaV2.Snippet(title: index.isMultiple(of: 2) ? "Note \(index)" : "note \(index)"))
            }
            try context.save()
        }
        let upgraded = try SnippetStore.openContainer(at: url)
        let context = ModelContext(upgraded)
        let snippets = try context.fetch(FetchDescriptor<Snippet>())
        XCTAssertEqual(snippets.count, count)
        let wrong = snippets.filter { $0.titleSortKey != TitleOrder.sortKey($0.title) || $0.titleSortKey.isEmpty }
        XCTAssertEqual(wrong.count, 0, "first without a key: \(wrong.first?.title ?? "")")

        var byTitle = ListQuery()
        (byTitle.sort, byTitle.ascending) = (.title, true)
        var firstPage = FetchDescriptor<Snippet>(sortBy: byTitle.sortDescriptors)
        firstPage.fetchLimit = 4
        XCTAssertEqual(try context.fetch(firstPage).map(\.title), ["Note 0", "note 1", "Note 2", "note 3"])
    }
}
