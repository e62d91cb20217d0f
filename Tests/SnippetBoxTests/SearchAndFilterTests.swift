import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// The list page's GET form: each filter alone and combined, each order, pages, search and counts.
final class SearchAndFilterTests: AppTestCase {
    var ids: [String: String] = [:]

    override func setUp() async throws {
        try await super.setUp()
        try withContext { context in
            let work = Folder(name: "Work"), home = Folder(name: "Home")
            let swift = Tag(name: "swift", color: ColorData.palette[0]), sql = Tag(name: "sql", color: ColorData.palette[1])
            let day: (Int) -> Date = { Date(timeIntervalSince1970: 1_700_000_000 + Double($0) * 86_400) }
            let rows: [(String, String, String, CodingLanguage, Folder?, [Tag], Bool, Bool, Int)] = [
                ("Alpha fetch", "let rows = try fetch()", "", .swift, work, [swift], true, false, 1),
                ("Beta query", "SELECT * FROM fetch_log;", "joins", .sql, work, [sql], false, true, 2),
                ("Gamma both", "print(1)", "swift and sql", .python, home, [swift, sql], false, false, 3),
                ("Delta loose", "echo fetch", "a shell fetch", .shell, nil, [], true, false, 4),
                ("Epsilon notes", "x", "mentions gamma", .swift, nil, [swift], false, false, 5),
            ]
            for (title, code, notes, language, folder, tags, favorite, image, offset) in rows {
                let snippet = Snippet(title: title, code: code, notes: notes, language: language)
                snippet.folder = folder
                snippet.tags = tags
                snippet.isFavorite = favorite
                if image {
                    snippet.imageData = tinyPNG
                    snippet.imageContentType = "image/png"
                }
                snippet.createdAt = day(offset)
                snippet.updatedAt = day(10 - offset)
                snippet.refreshSearchKeywords()
                context.insert(snippet)
            }
            try context.save()
            for folder in [work, home] { ids[folder.name] = folder.uuid.uuidString }
            for tag in [swift, sql] { ids[tag.name] = tag.uuid.uuidString }
        }
    }

    /// The titles a list URL shows, in order.
    private func titles(_ query: String) async throws -> [String] {
        let body = try await page("/snippets" + query)
        return body.components(separatedBy: "<span class=\"row-title\">").dropFirst().map { part in
            let html = String(part.prefix { $0 != "\n" }).components(separatedBy: "</span>\n").first ?? ""
            return html.replacingOccurrences(of: "<mark>", with: "").replacingOccurrences(of: "</mark>", with: "")
                .replacingOccurrences(of: "<bdi>", with: "").replacingOccurrences(of: "</bdi>", with: "")
                .replacingOccurrences(of: "<span class=\"star\" title=\"Favorite\">★</span> ", with: "")
                .components(separatedBy: "</span>").first ?? ""
        }
    }

    /// Checks the titles a list URL shows, in order, or in any order with `anyOrder`.
    private func expectTitles(_ query: String, _ expected: [String], anyOrder: Bool = false, _ message: String = "",
                              file: StaticString = #filePath, line: UInt = #line) async throws {
        let shown = try await titles(query)
        XCTAssertEqual(anyOrder ? shown.sorted() : shown, anyOrder ? expected.sorted() : expected, message, file: file, line: line)
    }

    func testEachFilterAlone() async throws {
        let work = try XCTUnwrap(ids["Work"]), swift = try XCTUnwrap(ids["swift"]), sql = try XCTUnwrap(ids["sql"])
        try await expectTitles("?folder=\(work)", ["Alpha fetch", "Beta query"], anyOrder: true)
        try await expectTitles("?folder=unfiled", ["Delta loose", "Epsilon notes"], anyOrder: true)
        try await expectTitles("?tag=\(swift)", ["Alpha fetch", "Epsilon notes", "Gamma both"], anyOrder: true)
        try await expectTitles("?tag=\(swift)&tag=\(sql)&tagMode=all", ["Gamma both"])
        let anyOfBoth = try await titles("?tag=\(swift)&tag=\(sql)&tagMode=any")
        XCTAssertEqual(anyOfBoth.count, 4)
        try await expectTitles("?tag=\(swift)&tagMode=none", ["Beta query", "Delta loose"], anyOrder: true)
        try await expectTitles("?language=swift", ["Alpha fetch", "Epsilon notes"], anyOrder: true)
        try await expectTitles("?favorites=1", ["Alpha fetch", "Delta loose"], anyOrder: true)
        try await expectTitles("?image=1", ["Beta query"])
        try await expectTitles("?createdFrom=2023-11-17&createdTo=2023-11-18", ["Delta loose", "Gamma both"], anyOrder: true)
        try await expectTitles("?updatedFrom=2023-11-22", ["Alpha fetch", "Beta query"], anyOrder: true)
    }

    func testFiltersCombine() async throws {
        let work = try XCTUnwrap(ids["Work"]), swift = try XCTUnwrap(ids["swift"])
        try await expectTitles("?folder=\(work)&favorites=1", ["Alpha fetch"])
        try await expectTitles("?tag=\(swift)&language=swift&favorites=1", ["Alpha fetch"])
        try await expectTitles("?q=fetch&folder=unfiled", ["Delta loose"])
        try await expectTitles("?folder=\(work)&image=1&favorites=1", [])
    }

    func testEachOrder() async throws {
        try await expectTitles("", ["Alpha fetch", "Beta query", "Gamma both", "Delta loose", "Epsilon notes"], "updated, newest first")
        try await expectTitles("?order=asc", ["Epsilon notes", "Delta loose", "Gamma both", "Beta query", "Alpha fetch"])
        try await expectTitles("?sort=created", ["Epsilon notes", "Delta loose", "Gamma both", "Beta query", "Alpha fetch"])
        try await expectTitles("?sort=title&order=asc", ["Alpha fetch", "Beta query", "Delta loose", "Epsilon notes", "Gamma both"])
        try await expectTitles("?sort=language&order=asc", ["Gamma both", "Delta loose", "Beta query", "Alpha fetch", "Epsilon notes"])
    }

    /// Titles sort as people read them: SQLite's byte order put every capitalised title before
    /// "apple pie", "Éclair" after "zebra" and "step 10" before "Step 9".
    func testTitlesSortWithoutRegardToCaseOrAccentsAndNumbersByValue() async throws {
        try withContext { context in
            for title in ["zebra", "Step 9", "apple pie", "step 10", "Éclair"] { context.insert(Snippet(title: title)) }
            try context.save()
        }
        let expected = ["Alpha fetch", "apple pie", "Beta query", "Delta loose", "Éclair", "Epsilon notes", "Gamma both",
                        "Step 9", "step 10", "zebra"]
        try await expectTitles("?sort=title&order=asc", expected)
        try await expectTitles("?sort=title&order=desc", Array(expected.reversed()))
        try await expectTitles("?sort=title&order=asc&size=10&page=1", expected, "a full page")
        // A title changed through the form moves with it.
        let zebra = try withContext { context in
            try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.title == "zebra" })).first).uuid.uuidString
        }
        try await send(.POST, "/snippets/\(zebra)", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "aardvark"), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        try await expectTitles("?sort=title&order=asc", ["aardvark"] + expected.dropLast())
    }

    func testPagesNeverRepeatOrSkip() async throws {
        var seen: [String] = []
        for page in 1...3 {
            seen += try await titles("?size=10&sort=title&order=asc&page=\(page)")
        }
        XCTAssertEqual(seen.count, 5)
        try await expectTitles("?sort=title&order=asc&size=10&page=2", [])
        let body = try await page("/snippets?size=10")
        XCTAssertTrue(body.contains("1–5 of 5"))
        XCTAssertFalse(body.contains("rel=\"next\""))
    }

    /// Pages that cut through runs of equal sort keys: eleven titles that sort alike (case and accents
    /// aside) and twenty-two snippets with the same dates and language. Every order, walked a page of
    /// ten at a time, shows each snippet once and in the order of one page holding them all; so do a
    /// search's pages. (The test above has five snippets, a page of ten: it crosses no boundary.)
    func testPagesThatCutThroughEqualSortKeysNeitherRepeatNorSkip() async throws {
        let tiedTitles = ["tie", "Tie", "tIe", "tiE", "TIe", "TiE", "tIE", "TIE", "tíe", "Tíe", "TÍE"]
        let otherTitles = (11...21).map { "Row \($0)" }
        try withContext { context in
            let sameDay = Date(timeIntervalSince1970: 1_700_500_000)
            for title in tiedTitles + otherTitles {
                let snippet = Snippet(title: title, code: "let pagerword = 1", notes: "", language: .go)
                snippet.createdAt = sameDay
                snippet.updatedAt = sameDay
                snippet.refreshSearchKeywords()
                context.insert(snippet)
            }
            try context.save()
        }
        let everyTitle = Set(try await titles("?size=100"))
        XCTAssertEqual(everyTitle.count, 27, "the five of setUp and the twenty-two here, each title once")

        for sort in ["updated", "created", "title", "language"] {
            for order in ["asc", "desc"] {
                let onePage = try await titles("?sort=\(sort)&order=\(order)&size=100")
                var walked: [String] = []
                for page in 1...4 {
                    walked += try await titles("?sort=\(sort)&order=\(order)&size=10&page=\(page)")
                }
                XCTAssertEqual(walked, onePage, "sort=\(sort)&order=\(order): the pages of ten, one after another")
                XCTAssertEqual(Set(walked), everyTitle, "sort=\(sort)&order=\(order)")
            }
        }
        let body = try await page("/snippets?sort=title&order=asc&size=10&page=2")
        XCTAssertTrue(body.contains("11–20 of 27"))
        XCTAssertTrue(body.contains("rel=\"next\""))

        let hits = try await titles("?q=pagerword&size=100")
        XCTAssertEqual(Set(hits), Set(tiedTitles + otherTitles))
        var walkedHits: [String] = []
        for page in 1...3 {
            walkedHits += try await titles("?q=pagerword&size=10&page=\(page)")
        }
        XCTAssertEqual(walkedHits, hits, "a search's pages of ten, one after another")
    }

    /// The links to the page before and after show exactly where there is such a page (the template
    /// tests flags for them); the top bar's account links show for a logged-in page only.
    func testPreviousAndNextLinksAndTheAccountLinksShowWhereTheyApply() async throws {
        try withContext { context in
            for index in 0..<7 { context.insert(Snippet(title: "Extra \(index)", code: "x")) }
            try context.save()
        }
        let first = try await page("/snippets?size=10")
        XCTAssertTrue(first.contains("1–10 of 12"), first)
        XCTAssertTrue(first.contains(#"rel="next" href="/snippets?size=10&amp;page=2""#), first)
        XCTAssertFalse(first.contains(#"rel="prev""#))
        let second = try await page("/snippets?size=10&page=2")
        XCTAssertTrue(second.contains("11–12 of 12"), second)
        XCTAssertTrue(second.contains(#"rel="prev" href="/snippets?size=10""#), second)
        XCTAssertFalse(second.contains(#"rel="next""#))
        // Past the end: it says so, and Previous goes to the last page (it said "12–12 of 12" and
        // went to page 999998).
        let pastTheEnd = try await page("/snippets?size=10&page=999999")
        XCTAssertTrue(pastTheEnd.contains("Past the last page (2) of 12"), pastTheEnd)
        XCTAssertTrue(pastTheEnd.contains(#"rel="prev" href="/snippets?size=10&amp;page=2""#), pastTheEnd)
        XCTAssertFalse(pastTheEnd.contains(#"rel="next""#))

        XCTAssertTrue(first.contains(#"action="/logout""#) && first.contains(#"href="/trash""#), "a logged-in page's top bar")
        try await app.test(.GET, "/login") { response async throws in
            XCTAssertEqual(response.status, .ok)
            XCTAssertFalse(response.body.string.contains(#"action="/logout""#), "the login page has no account links")
            XCTAssertFalse(response.body.string.contains(#"href="/trash""#))
        }
    }

    func testSearchRanksTitleMatchesFirstAndMarksTheWords() async throws {
        let results = try await titles("?q=fetch")
        XCTAssertEqual(results.first, "Alpha fetch", "a title match ranks above code and notes matches")
        XCTAssertEqual(Set(results), ["Alpha fetch", "Beta query", "Delta loose"])
        let body = try await page("/snippets?q=fetch")
        XCTAssertTrue(body.contains("<mark>fetch</mark>"))
        XCTAssertTrue(body.contains("3 results for “\u{2068}fetch\u{2069}”"))
        try await expectTitles("?q=gamma", ["Gamma both", "Epsilon notes"])
        try await expectTitles("?q=sql", ["Beta query", "Gamma both"], anyOrder: true, "tag names are searched too")
        try await expectTitles("?q=fetch+-shell", ["Alpha fetch", "Beta query"])
        try await expectTitles("?q=%22swift+and%22", ["Gamma both"])
        try await expectTitles("?q=gam*", ["Gamma both", "Epsilon notes"])
    }

    /// A search of only -excluded words finds nothing (a full-text index cannot search them alone),
    /// and says why, where it said "0 results for “-alert”".
    func testASearchOfOnlyExcludedWordsSaysItHasNothingToFind() async throws {
        for query in ["-alert", "-alert+-%22two+words%22"] {
            let body = try await page("/snippets?q=\(query)")
            XCTAssertTrue(body.contains("Nothing to search for in"), body)
            XCTAssertFalse(body.contains("0 results"), body)
            try await expectTitles("?q=\(query)", [])
        }
        let body = try await page("/snippets?q=fetch+-alert")
        XCTAssertTrue(body.contains("3 results for “\u{2068}fetch -alert\u{2069}”"), body)
    }

    func testHostileQueriesAreTreatedAsText() async throws {
        for query in ["%22", "%22unbalanced", "*", "(", "NEAR(a%20b)", "a%20AND", "%27%3B%20DROP%20TABLE%20Snippet%3B", "-", "%00"] {
            _ = try await page("/snippets?q=\(query)")
        }
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Snippet>()) }, 5)
    }

    func testCountsBesideChoicesFollowTheQuery() async throws {
        let body = try await page("/snippets?favorites=1")
        XCTAssertTrue(body.contains(">Work (1)</option>"), "one favourite in Work")
        XCTAssertTrue(body.contains(">Unfiled (1)</option>"))
        XCTAssertTrue(body.contains(">Home (0)</option>"))
        XCTAssertTrue(body.contains(">Swift (1)</option>"))
        XCTAssertTrue(body.contains("Clear filters"))
        let unfiltered = try await page("/snippets")
        XCTAssertFalse(unfiltered.contains("Clear filters"))
    }

    /// The form shows the query it ran with, so that a bookmarked URL opens with its filters set.
    func testTheFormAndSidebarShowTheCurrentQuery() async throws {
        let work = try XCTUnwrap(ids["Work"]), swift = try XCTUnwrap(ids["swift"])
        let body = try await page("/snippets?folder=\(work)&tag=\(swift)&tagMode=all&sort=title&order=asc&size=10")
        XCTAssertTrue(body.contains("<option value=\"all\" selected>all of them</option>"), "the tag mode")
        XCTAssertTrue(body.contains("<option value=\"any\" >any of them</option>"))
        XCTAssertTrue(body.contains("<option value=\"asc\" selected>Ascending</option>"), "the order")
        XCTAssertTrue(body.contains("<option value=\"desc\" >Descending</option>"))
        XCTAssertTrue(body.contains("<option value=\"title\" selected>"), "the sort")
        XCTAssertTrue(body.contains("<option value=\"10\" selected>"), "the page size")
        XCTAssertTrue(body.contains("<option value=\"\(work)\" selected>Work (1)</option>"), "the folder, with its count")
        XCTAssertTrue(body.contains("1–1 of 1"), "the pagination")
        XCTAssertTrue(body.contains("<span class=\"row-meta\">Swift · \u{2068}Work\u{2069} · "), "the row shows its folder")
        XCTAssertFalse(body.contains("Nothing matches."))

        let favorites = try await page("/snippets?favorites=1")
        XCTAssertTrue(favorites.contains("<a href=\"/snippets?favorites=1\" aria-current=\"page\">Favorites <span class=\"count\">2</span>"))
        XCTAssertTrue(favorites.contains("<a href=\"/snippets\" >All <span class=\"count\">5</span>"))
        XCTAssertTrue(favorites.contains("<option value=\"desc\" selected>Descending</option>"), "descending by default")
        XCTAssertTrue(favorites.contains("<span class=\"row-meta\">Shell · "), "an unfiled row names no folder")

        let nothing = try await page("/snippets?q=nowhere")
        XCTAssertTrue(nothing.contains("Nothing matches."))
        XCTAssertFalse(nothing.contains("class=\"pagination\""))
    }

    /// A saved search's query went into the redirect's Location as it came: a line break in it split
    /// the response, and what followed became headers (a Set-Cookie among them).
    func testASavedSearchQueryCannotAddHeaders() async throws {
        for name in ["Split", ""] {
            for query in ["q=a\r\nSet-Cookie: injected=1", "q=x\nX-Injected: yes", "q=a b", "q=a#b", "q=\u{0}"] {
                try await send(.POST, "/searches", beforeRequest: { req async throws in
                    try req.content.encode(["name": name, "query": query], as: .urlEncodedForm)
                }, afterResponse: { response async throws in
                    XCTAssertEqual(response.status, .badRequest, query.debugDescription)
                    XCTAssertNil(response.headers.first(name: "X-Injected"))
                    XCTAssertFalse(response.headers[.setCookie].contains { $0.contains("injected") }, query.debugDescription)
                    XCTAssertFalse(response.headers.first(name: .location)?.contains("\n") ?? false)
                })
            }
        }
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<SavedSearch>()) }, 0)
    }

    /// A search saved from its second page opened there; a second search of one name was a second
    /// sidebar entry nobody could tell from the first.
    func testASavedSearchOpensOnItsFirstPageAndNamesAreNotRepeated() async throws {
        for (name, query) in [("Fetches", "q=fetch&page=2&size=10"), ("FETCHES", "q=gamma"), ("fetches", "q=sql")] {
            try await send(.POST, "/searches", beforeRequest: { req async throws in
                try req.content.encode(["name": name, "query": query], as: .urlEncodedForm)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status, .seeOther)
            })
        }
        try withContext { context in
            let saved = try context.fetch(FetchDescriptor<SavedSearch>())
            XCTAssertEqual(saved.map(\.name), ["Fetches"])
            XCTAssertEqual(saved.map(\.query), ["q=fetch&size=10"])
        }
        let body = try await page("/snippets")
        XCTAssertTrue(body.contains("There is already a saved search named “\u{2068}fetches\u{2069}”"), body)
    }

    func testSavedSearchesAppearInTheSidebar() async throws {
        try await send(.POST, "/searches", beforeRequest: { req async throws in
            try req.content.encode(["name": "Fetch favourites", "query": "?q=fetch&favorites=1"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
            XCTAssertEqual(response.headers.first(name: .location), "/snippets?q=fetch&favorites=1")
        })
        let body = try await page("/snippets")
        XCTAssertTrue(body.contains("Fetch favourites"))
        XCTAssertTrue(body.contains("href=\"/snippets?q=fetch&amp;favorites=1\""))
        let id = try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<SavedSearch>()).first).uuid.uuidString }
        try await send(.POST, "/searches/\(id)/delete") { response async throws in
            XCTAssertEqual(response.status, .seeOther, response.body.string)
        }
        let after = try await page("/snippets")
        XCTAssertTrue(after.contains("Removed the saved search “\u{2068}Fetch favourites\u{2069}”."))
        XCTAssertFalse(after.contains("href=\"/snippets?q=fetch&amp;favorites=1\""))
    }

    func testDemoDataFillsAStore() throws {
        try DemoData.fill(library(), count: 120, batchSize: 50)
        try withContext { context in
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<Snippet>()), 125)
            XCTAssertGreaterThan(try context.fetchCount(FetchDescriptor<Folder>()), 2)
            XCTAssertGreaterThan(try context.fetchCount(FetchDescriptor(predicate: #Predicate<Snippet> { $0.isFavorite })), 0)
        }
    }
}
