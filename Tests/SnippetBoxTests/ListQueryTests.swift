import Foundation
@testable import SnippetBox
import Vapor
import XCTest

/// The list page's query string, read in one pass: every field, repeated and single tags, and fields
/// that are empty or not plain values, which count as absent without taking the others with them.
final class ListQueryTests: XCTestCase {
    private var app: Application!

    override func setUp() async throws {
        app = try await Application.make(.testing)
    }

    override func tearDown() async throws {
        try await app.asyncShutdown()
    }

    private func query(_ string: String) -> ListQuery {
        let request = Request(application: app, method: .GET, url: URI(string: "/snippets?" + string), on: app.eventLoopGroup.any())
        return ListQuery(query: request.query)
    }

    func testEveryFieldIsRead() {
        let folder = UUID().idString, first = UUID().idString, second = UUID().idString
        let read = query("q=sql%20join&folder=\(folder)&tag=\(first)&tag=\(second)&tagMode=all&language=swift"
            + "&favorites=1&image=1&createdFrom=2021-01-01&createdTo=2021-12-31&updatedFrom=2022-02-01"
            + "&updatedTo=2022-02-28&sort=title&order=asc&size=100&page=3")
        XCTAssertEqual(read.text, "sql join")
        XCTAssertEqual(read.folder, folder)
        XCTAssertEqual(read.tags, [first, second])
        XCTAssertEqual(read.tagMode, .all)
        XCTAssertEqual(read.language, .swift)
        XCTAssertTrue(read.favoritesOnly)
        XCTAssertTrue(read.withImageOnly)
        XCTAssertEqual(ListQuery.dayString(read.createdFrom), "2021-01-01")
        XCTAssertEqual(ListQuery.dayString(read.createdTo), "2022-01-01")
        XCTAssertEqual(ListQuery.dayString(read.updatedFrom), "2022-02-01")
        XCTAssertEqual(ListQuery.dayString(read.updatedTo), "2022-03-01")
        XCTAssertEqual(read.sort, .title)
        XCTAssertTrue(read.ascending)
        XCTAssertEqual(read.pageSize, 100)
        XCTAssertEqual(read.page, 3)
    }

    func testOneTagEmptyFieldsAndOddValues() {
        let tag = UUID().idString
        XCTAssertEqual(query("tag=\(tag)").tags, [tag])
        XCTAssertEqual(query("tag=").tags, [])
        XCTAssertEqual(query("tag=not-a-uuid&tag=\(tag)").tags, [tag])
        XCTAssertEqual(query("folder=unfiled").folder, "unfiled")

        let odd = query("q[]=x&folder=&language=klingon&size=7&page=-4&sort=title&favorites=yes")
        XCTAssertEqual(odd.text, "")
        XCTAssertNil(odd.folder)
        XCTAssertNil(odd.language)
        XCTAssertEqual(odd.pageSize, 25)
        XCTAssertEqual(odd.page, 1)
        XCTAssertEqual(odd.sort, .title)
        XCTAssertFalse(odd.favoritesOnly)
        XCTAssertEqual(query(""), ListQuery())
    }

    /// Values are escaped as Foundation escapes them against letters, digits and `-._~` (the way it
    /// was first written), with or without the fast path for values that need no escaping.
    func testQueryValuesAreEscapedAsFoundationEscapesThem() {
        let allowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))
        let pieces = ["a", "Z", "0", "9", "-", ".", "_", "~", " ", "&", "=", "?", "#", "+", "%", "/", "é", "日", "e\u{301}", "😀", "\"", "<"]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let value = (0..<Int.random(in: 0..<10, using: &generator)).map { _ in pieces.randomElement(using: &generator) ?? "" }.joined()
            XCTAssertEqual(value.urlQueryEscaped, value.addingPercentEncoding(withAllowedCharacters: allowed), value)
        }
        XCTAssertEqual("2".urlQueryEscaped, "2")
        XCTAssertEqual("a b&c".urlQueryEscaped, "a%20b%26c")
    }
}
