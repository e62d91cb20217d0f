import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

final class SnippetRoutesTests: AppTestCase {
    func testTheRootRedirectsToTheListAndAnEmptyStoreOffersExamples() async throws {
        try await send(.GET, "/") { response async throws in
            XCTAssertEqual(response.status, .seeOther)
            XCTAssertEqual(location(response), "/snippets")
        }
        let empty = try await page("/snippets")
        XCTAssertTrue(empty.contains("Add example snippets"))

        var cookie = ""
        try await send(.POST, "/examples") { response async throws in
            XCTAssertEqual(response.status, .seeOther)
            cookie = response.headers.first(name: .setCookie)?.split(separator: ";").first.map(String.init) ?? ""
        }
        var list = ""
        try await send(.GET, "/snippets", headers: ["Cookie": cookie]) { response async throws in list = response.body.string }
        XCTAssertTrue(list.contains("Fetch a page of models"))
        XCTAssertTrue(list.contains("Added a few example snippets."), "a flash message after the action")
        var again = ""
        try await send(.GET, "/snippets", headers: ["Cookie": cookie]) { response async throws in again = response.body.string }
        XCTAssertFalse(again.contains("Added a few example snippets."), "shown once")
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Snippet>()) }, 4)

        try await send(.POST, "/examples")
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Snippet>()) }, 4, "examples go only into an empty store")
        // And a second click says so, rather than that it added them.
        let after = try await page("/snippets")
        XCTAssertFalse(after.contains("Added a few example snippets."), "nothing was added")
        XCTAssertTrue(after.contains("The library is not empty, so no examples were added."))
    }

    func testCreatingASnippetWithEverything() async throws {
        let id = try await createSnippet(SnippetUpload(
            title: "Decode JSON", language: "swift", newFolder: "Work", newTags: "swift, Codable",
            code: "let value = try JSONDecoder().decode(Thing.self, from: data) // decode\n",
            notes: "Uses **JSONDecoder**.", image: File(data: ByteBuffer(data: tinyPNG), filename: "shot.png"), isFavorite: "1"))
        XCTAssertNotNil(UUID(uuidString: id))

        let body = try await page("/snippets/\(id)")
        XCTAssertTrue(body.contains("Decode JSON"))
        XCTAssertTrue(body.contains(#"<span class="tok-keyword">let</span>"#), "highlighted on the server")
        XCTAssertTrue(body.contains("<strong>JSONDecoder</strong>"), "notes rendered from Markdown")
        XCTAssertTrue(body.contains("/snippets/\(id)/image"))
        XCTAssertTrue(body.contains("Work"))
        XCTAssertTrue(body.contains("Codable"))
        XCTAssertTrue(body.contains("Unfavorite"))

        try withContext { context in
            let snippet = try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>()).first)
            XCTAssertEqual(snippet.language, .swift)
            XCTAssertEqual(snippet.folder?.name, "Work")
            XCTAssertEqual(snippet.tags.map(\.name).sorted(), ["Codable", "swift"])
            XCTAssertEqual(snippet.imageContentType, "image/png")
            XCTAssertTrue(snippet.isFavorite)
        }
    }

    func testEachRowOfTheListShowsAnExcerptOfItsNotesOrElseItsCode() async throws {
        try await createSnippet(SnippetUpload(title: "Code only", code: "\n  let answer = 42\nprint(answer)\n"))
        try await createSnippet(SnippetUpload(title: "With notes", code: "ignored()", notes: "Prints the answer."))
        let body = try await page("/snippets")
        XCTAssertTrue(body.contains(#"<span class="row-excerpt">let answer = 42 print(answer)</span>"#), body)
        XCTAssertTrue(body.contains(#"<span class="row-excerpt">Prints the answer.</span>"#), body)
    }

    func testTheImageIsServedWithItsTypeCachingAndAnETag() async throws {
        let id = try await createSnippet(SnippetUpload(title: "With image", image: File(data: ByteBuffer(data: tinyPNG), filename: "a.png")))
        var etag = ""
        try await send(.GET, "/snippets/\(id)/image") { response async throws in
            XCTAssertEqual(response.status, .ok)
            XCTAssertEqual(response.headers.contentType?.description, "image/png")
            XCTAssertEqual(Data(buffer: response.body), tinyPNG)
            XCTAssertNotNil(response.headers.first(name: .cacheControl))
            etag = response.headers.first(name: .eTag) ?? ""
        }
        XCTAssertFalse(etag.isEmpty)
        try await send(.GET, "/snippets/\(id)/image", headers: ["If-None-Match": etag]) { response async throws in
            XCTAssertEqual(response.status, .notModified)
            // Not the signed-in pages' no-store, which would replace the image's policy in the cache.
            XCTAssertEqual(response.headers.first(name: .cacheControl), "private, max-age=86400")
        }

        // Replaced by an image of the same size within the same second: the ETag and the page's
        // `?v=` were whole seconds and the size, so the browser kept the old image for a day.
        var other = tinyPNG
        other[other.count - 1] ^= 0xFF
        let before = try await page("/snippets/\(id)")
        try await send(.POST, "/snippets/\(id)", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "With image", image: File(data: ByteBuffer(data: other), filename: "b.png")), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        let after = try await page("/snippets/\(id)")
        func version(_ page: String) -> String? {
            let afterMarker: String? = page.components(separatedBy: "/image?v=").dropFirst().first
            return afterMarker.map { String($0.prefix { $0 != "\"" }) }
        }
        XCTAssertNotNil(version(after))
        XCTAssertNotEqual(version(before), version(after))
        try await send(.GET, "/snippets/\(id)/image", headers: ["If-None-Match": etag]) { response async throws in
            XCTAssertEqual(response.status, .ok, "the old ETag no longer matches")
            XCTAssertEqual(Data(buffer: response.body), other)
        }
    }

    func testInvalidInputKeepsTheValuesAndSaysWhatIsWrong() async throws {
        try await send(.POST, "/snippets", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "  ", language: "cobol-2099", code: "keep me"), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .unprocessableEntity)
            let body = response.body.string
            XCTAssertTrue(body.contains("Give the snippet a title."))
            XCTAssertTrue(body.contains("Choose a language from the list."))
            XCTAssertTrue(body.contains("keep me"), "the user's code is kept")
        })
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Snippet>()) }, 0)
    }

    func testANonImageNamedPNGIsRefusedAndNothingIsStored() async throws {
        try await send(.POST, "/snippets", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(
                title: "Fake", image: File(data: ByteBuffer(string: "<html>not an image</html>"), filename: "evil.png")), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .unprocessableEntity)
            XCTAssertTrue(response.body.string.contains("Only PNG, JPEG, GIF and WebP images"))
        })
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Snippet>()) }, 0)
    }

    func testAnUploadOverTheLimitGetsAClearMessageAndStoresNothing() async throws {
        // Through a real server, where the body limit applies as the request streams in.
        let big = tinyPNG + Data(count: 4 * 1024 * 1024)
        try await app.testable(method: .running(hostname: "127.0.0.1", port: 0)).test(.POST, "/snippets", headers: session.headers, beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "Huge", image: File(data: ByteBuffer(data: big), filename: "big.png")), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .payloadTooLarge)
            XCTAssertTrue(response.body.string.contains("too large"), response.body.string)
        })
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Snippet>()) }, 0)
    }

    func testAnUploadJustOverTheImageLimitIsAFormError() async throws {
        let over = tinyPNG + Data(count: 1024 * 1024)
        try await send(.POST, "/snippets", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "Over", image: File(data: ByteBuffer(data: over), filename: "o.png")), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .unprocessableEntity)
            XCTAssertTrue(response.body.string.contains("The image is larger than 1 MB."))
        })
    }

    func testEditingFavouritingMovingAndDeleting() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Draft", code: "print(1)", image: File(data: ByteBuffer(data: tinyPNG), filename: "a.png")))
        let edit = try await page("/snippets/\(id)/edit")
        XCTAssertTrue(edit.contains("value=\"Draft\""))

        try await send(.POST, "/snippets/\(id)", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "Final", language: "python", code: "print(2)", removeImage: "1"), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        try withContext { context in
            let snippet = try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>()).first)
            XCTAssertEqual(snippet.title, "Final")
            XCTAssertEqual(snippet.language, .python)
            XCTAssertNil(snippet.imageData)
        }

        try await send(.POST, "/snippets/\(id)/favorite")
        XCTAssertTrue(try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<Snippet>()).first).isFavorite })
        try await expectPage("/snippets?favorites=1", shows: "Final")

        try await send(.POST, "/folders", beforeRequest: { req async throws in try req.content.encode(["name": "Archive"], as: .urlEncodedForm) }, afterResponse: { _ in })
        let folderID = try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<Folder>()).first).uuid.uuidString }
        try await send(.POST, "/snippets/\(id)/move", beforeRequest: { req async throws in try req.content.encode(["folder": folderID], as: .urlEncodedForm) }, afterResponse: { _ in })
        try await expectPage("/snippets?folder=\(folderID)", shows: "Final")
        try await expectPage("/snippets?folder=unfiled", hides: "Final")

        try await expectPage("/snippets/\(id)/delete", shows: "Delete “\u{2068}Final\u{2069}”?")
        try await send(.POST, "/snippets/\(id)/delete") { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        }
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Snippet>(predicate: Snippet.inLibrary)) }, 0)
        _ = try await page("/snippets/\(id)", status: .notFound)
        try await expectPage("/snippets", shows: "Moved “\u{2068}Final\u{2069}” to the trash.")
        try await expectPage("/snippets", hides: "Final")
        try await expectPage("/trash", shows: "Final")
    }

    func testRawViewAndDownloadFollowTheLanguage() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Query: users!", language: "sql", code: "SELECT * FROM users;"))
        try await send(.GET, "/snippets/\(id)/raw") { response async throws in
            XCTAssertEqual(response.body.string, "SELECT * FROM users;")
            XCTAssertEqual(response.headers.first(name: .contentType), "text/plain; charset=utf-8")
        }
        try await send(.GET, "/snippets/\(id)/download") { response async throws in
            XCTAssertEqual(response.headers.first(name: .contentDisposition), "attachment; filename=\"query-users.sql\"")
            XCTAssertEqual(response.headers.first(name: .contentType), "application/sql; charset=utf-8")
        }
        // A name that is not ASCII: percent-encoded UTF-8 in filename*, an ASCII stand-in in filename
        // (raw UTF-8 there, as before, is read as Latin-1 by some clients).
        let german = try await createSnippet(SnippetUpload(title: "Größe 日本", language: "python", code: "x"))
        try await send(.GET, "/snippets/\(german)/download") { response async throws in
            XCTAssertEqual(response.headers.first(name: .contentDisposition),
                           "attachment; filename=\"gro_e-__.py\"; filename*=UTF-8''gr%C3%B6%C3%9Fe-%E6%97%A5%E6%9C%AC.py")
        }
    }

    /// What a user typed comes back when the folder they chose, or the snippet they edit, was deleted
    /// in another tab meanwhile: it was a bare error page, and the text was lost.
    func testAFormWhoseFolderOrSnippetWasDeletedMeanwhileKeepsTheText() async throws {
        try await createSnippet(SnippetUpload(title: "Holder", newFolder: "Doomed"))
        let doomed = try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<Folder>()).first).uuid.uuidString }
        let edited = try await createSnippet(SnippetUpload(title: "Edited", code: "old"))
        try await send(.POST, "/folders/\(doomed)/delete", beforeRequest: { req async throws in
            try req.content.encode(["snippets": "move"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Folder>()) }, 0)
        for path in ["/snippets", "/snippets/\(edited)"] {
            try await send(.POST, path, beforeRequest: { req async throws in
                try req.content.encode(SnippetUpload(title: "Typed with care", folder: doomed, code: "precious code"), as: .formData)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status, .unprocessableEntity, path)
                let body = response.body.string
                XCTAssertTrue(body.contains("The folder you chose was deleted meanwhile"), body)
                XCTAssertTrue(body.contains("precious code") && body.contains("Typed with care"), "the text is kept")
            })
        }
        try await send(.POST, "/snippets/\(edited)/delete")
        try await send(.POST, "/snippets/\(edited)", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "Edited", code: "new and precious"), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .notFound)
            let body = response.body.string
            XCTAssertTrue(body.contains("This snippet is not in your library"), body)
            XCTAssertTrue(body.contains("new and precious"), "the text is kept")
        })
        XCTAssertEqual(try withContext { try $0.fetch(FetchDescriptor<Snippet>()).map(\.code).sorted() }, ["", "old"])
    }

    /// A tag checked in a form and deleted in another tab before the save was dropped without a word.
    func testASaveSaysWhichCheckedTagsWereGone() async throws {
        let edited = try await createSnippet(SnippetUpload(title: "Tagged", newTags: "doomed, also doomed, kept"))
        let tags = try withContext { context in
            Dictionary(uniqueKeysWithValues: try context.fetch(FetchDescriptor<Tag>()).map { ($0.name, $0.uuid.uuidString) })
        }
        for name in ["doomed", "also doomed"] {
            try await send(.POST, "/tags/\(try XCTUnwrap(tags[name]))/delete") { response async throws in
                XCTAssertEqual(response.status, .seeOther)
            }
        }
        let checked = ["doomed", "also doomed", "kept"].compactMap { tags[$0] }
        for (path, checked, notice) in [
            ("/snippets/\(edited)", checked, "Snippet saved. 2 tags you checked are no longer in your library (deleted meanwhile?), so the snippet does not have them."),
            ("/snippets", Array(checked.prefix(1)), "Snippet created. A tag you checked is no longer in your library (deleted meanwhile?), so the snippet does not have it."),
        ] {
            var target = ""
            try await send(.POST, path, beforeRequest: { req async throws in
                try req.content.encode(SnippetUpload(title: "Tagged", tags: checked), as: .formData)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status, .seeOther, path)
                target = location(response) ?? ""
            })
            try await expectPage(target, shows: notice)
        }
        XCTAssertEqual(try withContext { try XCTUnwrap(Lookup.snippet(XCTUnwrap(UUID(uuidString: edited)), in: $0)).tags.map(\.name) }, ["kept"])
    }

    func testUserTextIsEscapedEverywhere() async throws {
        let attack = "<script>alert(1)</script>"
        let id = try await createSnippet(SnippetUpload(
            title: attack, newFolder: attack, newTags: attack, code: attack,
            notes: "\(attack)\n\n[click](javascript:alert(1)) <img src=x onerror=alert(1)>"))
        for path in ["/snippets", "/snippets/\(id)", "/snippets/\(id)/edit", "/folders", "/tags", "/snippets/\(id)/delete"] {
            let body = try await page(path)
            XCTAssertFalse(body.contains("<script>alert"), "unescaped script on \(path)")
            XCTAssertFalse(body.contains("<img src=x onerror"), "live attribute on \(path)")
            XCTAssertFalse(body.contains("href=\"javascript:"), "javascript link on \(path)")
        }
        try await expectPage("/snippets/\(id)", shows: "&lt;script&gt;alert(1)&lt;/script&gt;")
    }

    func testUnknownAndMalformedIdentifiersGetAFriendly404() async throws {
        let unknown = try await page("/snippets/\(UUID().uuidString)", status: .notFound)
        XCTAssertTrue(unknown.contains("Not found"))
        XCTAssertTrue(unknown.contains("Back to your snippets"))
        _ = try await page("/snippets/not-a-uuid", status: .notFound)
        // A list naming an unknown folder is the list without it, with a notice (ListLinksToDeletedChoicesTests).
        _ = try await page("/snippets?folder=\(UUID().uuidString)", status: .seeOther)
        _ = try await page("/nowhere", status: .notFound)
        _ = try await page("/static/../Package.swift", status: .notFound)
    }

    func testStaticFilesAreServed() async throws {
        let css = try await page("/static/css/app.css")
        XCTAssertTrue(css.contains("prefers-color-scheme: dark"))
    }

    /// Ranges as RFC 9110 §14 has them: one reaching past the end is shortened to it, one starting
    /// past it is 416 with the file's length, and a Range that cannot be read, asks for several
    /// ranges, or comes with an If-Range is answered with the whole file. Vapor answered 400 to a
    /// range reaching past the end and to one it could not read, 206 with no bytes ("bytes
    /// 10426-10425/10426") to one starting at the end or asking for the last 0 bytes, and served the
    /// range whatever the If-Range (so a client resuming a changed file would have joined two versions).
    func testARangeOfAStaticFileIsAnsweredAsHTTPSays() async throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: "Public/css/app.css"))
        let size = whole.count
        let cases: [(range: String, ifRange: String?, status: HTTPStatus, bytes: Range<Int>, contentRange: String?)] = [
            ("bytes=0-9", nil, .partialContent, 0..<10, "bytes 0-9/\(size)"),
            ("bytes=-5", nil, .partialContent, (size - 5)..<size, "bytes \(size - 5)-\(size - 1)/\(size)"),
            ("bytes=10-1048575", nil, .partialContent, 10..<size, "bytes 10-\(size - 1)/\(size)"),
            ("bytes=-99999999999999999999", nil, .partialContent, 0..<size, "bytes 0-\(size - 1)/\(size)"),
            ("bytes=\(size)-", nil, .rangeNotSatisfiable, 0..<0, "bytes */\(size)"),
            ("bytes=99999999999999999999-", nil, .rangeNotSatisfiable, 0..<0, "bytes */\(size)"),
            ("bytes=-0", nil, .rangeNotSatisfiable, 0..<0, "bytes */\(size)"),
            ("bytes=5-2", nil, .ok, 0..<size, nil),
            ("bytes=abc", nil, .ok, 0..<size, nil),
            ("lines=1-2", nil, .ok, 0..<size, nil),
            ("bytes=0-1,5-9", nil, .ok, 0..<size, nil),
            ("bytes=0-9", "\"stale\"", .ok, 0..<size, nil),
        ]
        // A copy still current is 304 whatever the range.
        var eTag = ""
        try await send(.GET, "/static/css/app.css") { response async throws in eTag = response.headers.first(name: .eTag) ?? "" }
        try await send(.GET, "/static/css/app.css", headers: ["Range": "bytes=\(size)-", "If-None-Match": eTag]) { response async throws in
            XCTAssertEqual(response.status, .notModified)
        }
        for test in cases {
            var headers = HTTPHeaders([("Range", test.range)])
            if let ifRange = test.ifRange { headers.add(name: "If-Range", value: ifRange) }
            try await send(.GET, "/static/css/app.css", headers: headers) { response async throws in
                XCTAssertEqual(response.status, test.status, test.range)
                XCTAssertEqual(response.headers.first(name: .contentRange), test.contentRange, test.range)
                XCTAssertEqual(Data(buffer: response.body), whole[test.bytes], test.range)
            }
        }
        // A range past the end, asked with a validator that no longer holds: 416, not the whole file.
        try await send(.GET, "/static/css/app.css", headers: ["Range": "bytes=\(size)-", "If-None-Match": "\"stale\""]) { response async throws in
            XCTAssertEqual(response.status, .rangeNotSatisfiable)
        }
    }

    /// A cache asking with a weak tag, a list of tags, `*` or the date it was given was sent the whole
    /// body again: only If-None-Match of exactly the tag's text was answered 304 (static files and images).
    func testConditionalRequestsAreAnsweredAsHTTPSays() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Pictured", image: File(data: ByteBuffer(data: tinyPNG), filename: "a.png")))
        for path in ["/static/css/app.css", "/snippets/\(id)/image"] {
            var (eTag, lastModified) = ("", "")
            try await send(.GET, path) { response async throws in
                XCTAssertEqual(response.status, .ok, path)
                eTag = response.headers.first(name: .eTag) ?? ""
                lastModified = response.headers.first(name: .lastModified) ?? ""
            }
            XCTAssertTrue(eTag.hasPrefix("\"") && !lastModified.isEmpty, "\(path): \(eTag) \(lastModified)")
            let longBefore = HTTPHeaders.LastModified(Date(timeIntervalSince1970: 86_400)).serialize()
            let cases: [(headers: HTTPHeaders, status: HTTPStatus)] = [
                (["If-None-Match": eTag], .notModified),
                (["If-None-Match": "W/\(eTag)"], .notModified),
                (["If-None-Match": "\"x,y\", \(eTag)"], .notModified),
                (HTTPHeaders([("If-None-Match", "\"other\""), ("If-None-Match", "W/\(eTag)")]), .notModified),
                (["If-None-Match": "*"], .notModified),
                (["If-None-Match": "\"other\""], .ok),
                (["If-Modified-Since": lastModified], .notModified),
                (["If-Modified-Since": longBefore], .ok),
                (["If-Modified-Since": "yesterday"], .ok),
                // If-None-Match is weighed first, and decides.
                (["If-None-Match": "\"other\"", "If-Modified-Since": lastModified], .ok),
            ]
            for test in cases {
                try await send(.GET, path, headers: test.headers) { response async throws in
                    XCTAssertEqual(response.status, test.status, "\(path) \(test.headers)")
                    if test.status == .notModified {
                        XCTAssertEqual(response.body.readableBytes, 0)
                        XCTAssertEqual(response.headers.first(name: .eTag), eTag, path)
                        XCTAssertNotNil(response.headers.first(name: .cacheControl), path)
                    } else {
                        XCTAssertGreaterThan(response.body.readableBytes, 0, path)
                    }
                }
            }
        }
        XCTAssertEqual(CachedCopy.entityTags(in: #"W/"a", "b,c" , *,junk, "d""#), [#""a""#, #""b,c""#, "*", #""d""#])
    }
}

final class BasePathTests: AppTestCase {
    override var basePath: String { "/box" }

    func testEveryRouteAndLinkLivesUnderTheBasePath() async throws {
        try await send(.GET, "/box") { response async throws in
            XCTAssertEqual(location(response), "/box/snippets")
        }
        let id = try await createSnippet(SnippetUpload(title: "Behind a proxy"))
        let body = try await page("/box/snippets/\(id)")
        XCTAssertTrue(body.contains("href=\"/box/static/css/app.css\""))
        XCTAssertTrue(body.contains("action=\"/box/snippets/\(id)/favorite"))
        _ = try await page("/box/static/js/app.js")
        _ = try await page("/snippets", status: .notFound)
    }

    /// The cookie that ended a session had path `/`, so under `/box` the browser kept the session
    /// cookie (path `/box`) after logging out.
    func testLoggingOutClearsTheCookieItsLoginSet() async throws {
        var cleared = ""
        try await send(.POST, "/box/logout") { response async throws in
            XCTAssertEqual(response.status, .seeOther)
            cleared = response.headers[.setCookie].first { $0.hasPrefix("snippetbox-session=") } ?? ""
        }
        let attributes = cleared.lowercased().split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertTrue(attributes.contains("path=/box"), cleared)
        XCTAssertTrue(attributes.contains("httponly"), cleared)
        XCTAssertTrue(attributes.contains { $0.hasPrefix("expires=thu, 01 jan 1970") }, cleared)
    }
}

final class SettingsTests: XCTestCase {
    func testSettingsComeFromTheEnvironmentWithDefaults() throws {
        let defaults = try AppSettings.fromEnvironment([:])
        XCTAssertEqual(defaults.port, 8080)
        XCTAssertEqual(defaults.dataDirectory.lastPathComponent, "data")
        let custom = try AppSettings.fromEnvironment(["HOST": "0.0.0.0", "PORT": "9000", "DATA_DIR": "/tmp/x", "BASE_PATH": "snippets/", "MAX_UPLOAD_MB": "5"])
        XCTAssertEqual(custom.host, "0.0.0.0")
        XCTAssertEqual(custom.port, 9000)
        XCTAssertEqual(custom.dataDirectory.path, "/tmp/x")
        XCTAssertEqual(custom.basePath, "/snippets")
        XCTAssertEqual(custom.maxUploadBytes, 5 * 1024 * 1024)
        XCTAssertFalse(defaults.secureCookies || defaults.trustForwardedFor)
        let proxied = try AppSettings.fromEnvironment(["SECURE_COOKIES": "true", "TRUST_X_FORWARDED_FOR": "1"])
        XCTAssertTrue(proxied.secureCookies && proxied.trustForwardedFor)
    }

    func testNonsenseSettingsAreClearErrors() {
        XCTAssertThrowsError(try AppSettings.fromEnvironment(["PORT": "eighty"])) { error in
            XCTAssertTrue("\(error)".contains("PORT"))
        }
        XCTAssertThrowsError(try AppSettings.fromEnvironment(["MAX_UPLOAD_MB": "0"]))
        XCTAssertThrowsError(try AppSettings.fromEnvironment(["BASE_PATH": "/../etc"]))
        XCTAssertThrowsError(try AppSettings.fromEnvironment(["TRUST_X_FORWARDED_FOR": "yes"])) { error in
            XCTAssertTrue("\(error)".contains("TRUST_X_FORWARDED_FOR"))
        }
        // Accepted once, and then served at no path: a non-ASCII segment, a segment of dots.
        for unreachable in ["/café", "/.", "/snippets/./x", "/日本"] {
            XCTAssertThrowsError(try AppSettings.fromEnvironment(["BASE_PATH": unreachable]), unreachable)
        }
        XCTAssertEqual(try AppSettings.fromEnvironment(["BASE_PATH": "/my.snippets"]).basePath, "/my.snippets")
    }
}
