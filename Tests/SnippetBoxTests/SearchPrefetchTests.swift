import Foundation
@testable import ObjectGraph
@testable import SnippetBox
import XCTest

/// A page of search results shows each hit's folder and tags: the search loads them for every hit at
/// once, as a fetch with `relationshipKeyPathsForPrefetching` does, instead of two queries per hit.
final class SearchPrefetchTests: LibraryStoreTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        let context = ModelContext(container)
        let folders = (0..<3).map { Folder(name: "Folder \($0)") }
        let tags = (0..<4).map { Tag(name: "tag\($0)", color: ColorData.palette[$0 % ColorData.palette.count]) }
        for index in 0..<12 {
            let snippet = Snippet(title: "Needle \(index)", code: "print(\(index))", language: .swift)
            snippet.folder = folders[index % folders.count]
            snippet.tags = [tags[index % tags.count], tags[(index + 1) % tags.count]]
            snippet.refreshSearchKeywords()
            context.insert(snippet)
        }
        try context.save()
    }

    private func statements(_ body: () throws -> Void) rethrows -> [String] {
        try container.store.sqlLog.statements(during: body).filter { $0.hasPrefix("SELECT") }
    }

    func testAPageOfHitsLoadsItsFoldersAndTagsInOneQueryEach() throws {
        let context = ModelContext(container)
        var hits: [Snippet] = []
        let searching = try statements {
            hits = try context.search(Snippet.self, for: "needle", limit: 10,
                                      relationshipKeyPathsForPrefetching: [\.folder, \.tags]).hits.map(\.model)
        }
        XCTAssertEqual(hits.count, 10)
        XCTAssertEqual(searching.filter { $0.contains("\"Folder\"") }.count, 1, "\(searching)")
        XCTAssertEqual(searching.filter { $0.contains("\"_Snippet_tags\"") }.count, 1, "\(searching)")
        let reading = statements {
            for hit in hits {
                XCTAssertNotNil(hit.folder?.name)
                XCTAssertEqual(hit.tags.count, 2)
            }
        }
        XCTAssertEqual(reading, [], "nothing more is read when the page shows them")
    }

    func testWithoutPrefetchingEachHitLoadsItsOwn() throws {
        let context = ModelContext(container)
        let hits = try context.search(Snippet.self, for: "needle", limit: 10).hits.map(\.model)
        let reading = statements { _ = hits.map { ($0.folder?.name, $0.tags.count) } }
        XCTAssertGreaterThanOrEqual(reading.count, 10, "the relationships are faults until read")
    }
}
