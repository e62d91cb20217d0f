import Foundation
import NIOCore
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// Hostile and malformed input, limits, the trash, and edits that conflict.
final class BadInputAndTrashTests: AppTestCase {
    private func snippetCount() throws -> Int {
        try withContext { try $0.fetchCount(FetchDescriptor<Snippet>()) }
    }

    /// A multipart body written by hand, so that it can hold bytes a well-behaved client never sends.
    /// A part's whole `Content-Disposition` parameters may be given instead of its name (`dispositions`).
    private func multipart(_ fields: [(String, [UInt8])], dispositions: [String: String] = [:],
                           boundary: String = "XyZboundary") -> (HTTPHeaders, ByteBuffer) {
        var bytes: [UInt8] = []
        for (name, value) in fields {
            let disposition = dispositions[name] ?? "name=\"\(name)\""
            bytes += Array("--\(boundary)\r\nContent-Disposition: form-data; \(disposition)\r\n\r\n".utf8) + value + Array("\r\n".utf8)
        }
        bytes += Array("--\(boundary)--\r\n".utf8)
        var headers = HTTPHeaders()
        headers.add(name: .contentType, value: "multipart/form-data; boundary=\(boundary)")
        return (headers, ByteBuffer(bytes: bytes))
    }

    func testInvalidUTF8IsRefusedWithAMessageAndStoresNothing() async throws {
        let (headers, body) = multipart([("title", Array("ok".utf8)), ("code", [0x66, 0xFF, 0xFE, 0x6F]), ("language", Array("swift".utf8))])
        try await send(.POST, "/snippets", headers: headers, beforeRequest: { req async throws in
            req.body = body
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status.code / 100, 4, response.body.string)
            XCTAssertTrue(response.body.string.contains("UTF-8"), response.body.string)
        })
        try await send(.POST, "/folders", headers: ["Content-Type": "application/x-www-form-urlencoded"], beforeRequest: { req async throws in
            req.body = ByteBuffer(string: "name=%FF%FEbad")
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status.code / 100, 4, response.body.string)
        })
        XCTAssertEqual(try snippetCount(), 0)
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Folder>()) }, 0)
    }

    /// A text field sent as a file part (with a filename) was not checked, and its invalid bytes were
    /// stored replaced; a filename written before the name gave the part the filename as its name.
    func testATextFieldSentAsAFileIsCheckedAsText() async throws {
        for disposition in ["name=\"title\"; filename=\"t.txt\"", "filename=\"t.txt\"; name=\"title\""] {
            let (headers, body) = multipart([("title", [0x62, 0x61, 0x64, 0xFF, 0xFE]), ("language", Array("swift".utf8))],
                                            dispositions: ["title": disposition])
            try await send(.POST, "/snippets", headers: headers, beforeRequest: { req async throws in
                req.body = body
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status, .badRequest, disposition)
                XCTAssertTrue(response.body.string.contains("UTF-8"), response.body.string)
            })
        }
        XCTAssertEqual(try snippetCount(), 0)
        // `name="` is also the end of `filename="`: the field is the whole parameter's.
        XCTAssertEqual(TextInputMiddleware.fieldName(inDisposition: "form-data; filename=\"a\"; name=\"b\""), "b")
        XCTAssertEqual(TextInputMiddleware.fieldName(inDisposition: "form-data; name=\"b\"; filename=\"a.png\""), "b")
    }

    func testNULBytesAreAFormErrorAndStoreNothing() async throws {
        try await send(.POST, "/snippets", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "Nul\u{0}title", code: "a\u{0}b"), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .unprocessableEntity)
            XCTAssertTrue(response.body.string.contains("NUL character"))
        })
        for (path, field) in [("/folders", "name"), ("/tags", "name")] {
            try await send(.POST, path, beforeRequest: { req async throws in
                try req.content.encode([field: "bad\u{0}name", "color": "#336699"], as: .urlEncodedForm)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status.code / 100, 4, path)
            })
        }
        XCTAssertEqual(try snippetCount(), 0)
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Folder>()) + $0.fetchCount(FetchDescriptor<Tag>()) }, 0)
    }

    /// The edit form's title is one line, which browsers keep without its line breaks: a title holding
    /// one (or another control character) was accepted and then changed at every later save.
    /// Limits counted characters, and one character may hold any number of combining marks: a title
    /// of "a" and 40,000 accents (80 KB) was one character long, and a note of a million was too.
    func testLimitsCountCombiningMarks() async throws {
        let marks = { (count: Int) in "a" + String(repeating: "\u{301}", count: count) }
        let cases: [(SnippetUpload, String)] = [
            (SnippetUpload(title: marks(ValidatedSnippetForm.maxTitleLength), code: "kept"), "Keep the title to"),
            (SnippetUpload(title: "Fine", newFolder: marks(ValidatedSnippetForm.maxNameLength), code: "kept"), "Keep folder names to"),
            (SnippetUpload(title: "Fine", code: "kept", notes: marks(ValidatedSnippetForm.maxNotesCharacters)), "The notes are longer than"),
        ]
        for (form, message) in cases {
            try await send(.POST, "/snippets", beforeRequest: { req async throws in
                try req.content.encode(form, as: .formData)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status, .unprocessableEntity, message)
                XCTAssertTrue(response.body.string.contains(message), message)
            })
        }
        XCTAssertEqual(try snippetCount(), 0)
        // Up to the limit, in scalars, is accepted.
        try await createSnippet(SnippetUpload(title: marks(ValidatedSnippetForm.maxTitleLength - 1), code: "kept"))
        XCTAssertEqual(try snippetCount(), 1)
    }

    /// The form came back without the attached image and without a word: saved after fixing the
    /// title, the snippet had no image.
    func testAFormSentBackSaysToChooseTheImageAgain() async throws {
        try await send(.POST, "/snippets", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "", code: "kept", image: File(data: ByteBuffer(data: tinyPNG), filename: "a.png")), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .unprocessableEntity)
            XCTAssertTrue(response.body.string.contains("Choose the image again"), response.body.string)
        })
        try await send(.POST, "/snippets", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "", code: "kept"), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertFalse(response.body.string.contains("Choose the image again"), "no image, nothing to choose again")
        })
    }

    func testATitleIsOneLine() async throws {
        for title in ["line\nbreak", "ctrl\u{1}\u{7}bell", "tab\there"] {
            try await send(.POST, "/snippets", beforeRequest: { req async throws in
                try req.content.encode(SnippetUpload(title: title, code: "kept"), as: .formData)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status, .unprocessableEntity, title.debugDescription)
                XCTAssertTrue(response.body.string.contains("A title is one line"), title.debugDescription)
                XCTAssertTrue(response.body.string.contains("kept"), "the code comes back")
            })
        }
        XCTAssertEqual(try snippetCount(), 0)
    }

    func testMalformedMultipartBodiesAreBadRequests() async throws {
        let bodies = [
            "--XyZboundary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nno end",
            "garbage without any boundary",
            "--XyZboundary\r\nno headers at all\r\n--XyZboundary--",
        ]
        for text in bodies {
            try await send(.POST, "/snippets", headers: ["Content-Type": "multipart/form-data; boundary=XyZboundary"], beforeRequest: { req async throws in
                req.body = ByteBuffer(string: text)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status.code / 100, 4, "\(text): \(response.body.string)")
                XCTAssertFalse(response.body.string.isEmpty)
            })
        }
        try await send(.POST, "/snippets", headers: ["Content-Type": "multipart/form-data"], beforeRequest: { req async throws in
            req.body = ByteBuffer(string: "no boundary in the header")
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status.code / 100, 4)
        })
        XCTAssertEqual(try snippetCount(), 0)
    }

    /// A form in a shape no page sends (a list where a field is one value, JSON of the wrong types,
    /// plain text) got the decoder's own words back: "No value found (expected type 'String')",
    /// "Value was not of type 'Array<Any>'", "Plaintext decoding does not support dictionaries".
    func testAFormOfTheWrongShapeIsRefusedByItsFieldInPlainWords() async throws {
        let bodies: [(path: String, contentType: String, body: String, field: String?)] = [
            ("/folders", "application/x-www-form-urlencoded", "name[]=x", "name"),
            ("/folders", "application/json", #"{"name": ["x"]}"#, "name"),
            ("/folders", "text/plain", "name=x", nil),
            ("/snippets/bulk", "application/json", #"{"ids": "not a list"}"#, "ids"),
        ]
        for test in bodies {
            try await send(.POST, test.path, headers: ["Content-Type": test.contentType], beforeRequest: { req async throws in
                req.body = ByteBuffer(string: test.body)
            }, afterResponse: { response async throws in
                let page = response.body.string
                XCTAssertEqual(response.status, .badRequest, "\(test.body): \(page)")
                XCTAssertTrue(page.contains("The form could not be read (" + (test.field.map { "field \($0)" } ?? "malformed body") + "). Nothing was saved."),
                              "\(test.body): \(page)")
                for internals in ["expected type", "Value was not", "Plaintext decoding", "codingPath", "debugDescription"] {
                    XCTAssertFalse(page.contains(internals), "\(test.body): \(page)")
                }
            })
        }
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Folder>()) }, 0)
        // A missing key is named: it is not in its context's path ("malformed body" before).
        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
        let missing = DecodingError.keyNotFound(Key(stringValue: "title"), .init(codingPath: [Key(stringValue: "snippet")], debugDescription: ""))
        XCTAssertEqual(ErrorPageMiddleware.summary(of: missing), "field snippet.title")
    }

    func testFieldLengthsAreFormErrors() async throws {
        try await send(.POST, "/snippets", beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: String(repeating: "t", count: 201), newFolder: String(repeating: "f", count: 101),
                                                 newTags: String(repeating: "g", count: 101)), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .unprocessableEntity)
            let body = response.body.string
            XCTAssertTrue(body.contains("Keep the title to 200 characters or fewer."))
            XCTAssertTrue(body.contains("Keep folder names to 100 characters or fewer."))
            XCTAssertTrue(body.contains("Tag names must be 100 characters or fewer"))
        })
        try await send(.POST, "/folders", beforeRequest: { req async throws in
            try req.content.encode(["name": String(repeating: "f", count: 101)], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .unprocessableEntity)
        })
        try await send(.POST, "/tags", beforeRequest: { req async throws in
            try req.content.encode(["name": String(repeating: "g", count: 101), "color": "#336699"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .unprocessableEntity)
        })
        XCTAssertEqual(try snippetCount(), 0)
    }

    func testHugeQueryStringsAndBodiesGetAMessageNotAnError() async throws {
        // Through a real server: the limits apply as the request arrives.
        let server = try app.testable(method: .running(hostname: "127.0.0.1", port: 0))
        let longQuery = String(repeating: "q=word&", count: 5_000)
        try await server.test(.GET, "/snippets?\(longQuery)", headers: session.headers) { response async throws in
            XCTAssertEqual(response.status, .uriTooLong)
            XCTAssertTrue(response.body.string.contains("longer than 8 KB"))
        }
        try await server.test(.GET, "/snippets?\(longQuery)", headers: TestSession().headers) { response async throws in
            XCTAssertEqual(response.status, .uriTooLong, "refused before the login redirect copies it into a header")
        }
        let manyTags = (0..<150).map { _ in "tag=\(UUID().uuidString)" }.joined(separator: "&")
        try await server.test(.GET, "/snippets?\(manyTags)&tagMode=all&q=\(String(repeating: "x", count: 1_000))", headers: session.headers) { response async throws in
            XCTAssertEqual(response.status, .ok)
        }
        let bigForm = "name=" + String(repeating: "n", count: 2 * 1024 * 1024)
        try await server.test(.POST, "/folders", headers: session.headers.adding("Content-Type", "application/x-www-form-urlencoded"), beforeRequest: { req async throws in
            req.body = ByteBuffer(string: bigForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .payloadTooLarge)
            XCTAssertTrue(response.body.string.contains("too large"))
        })
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Folder>()) }, 0)
    }

    func testARequestHeadBeyondTheParsersLimitLeavesTheServerServing() async throws {
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        let port = try XCTUnwrap(app.http.server.shared.localAddress?.port)
        let base = "http://127.0.0.1:\(port)"
        let cookie = HTTPHeaders([("Cookie", "snippetbox-session=\(session.cookie)")])
        // SwiftNIO's parser closes the connection: no answer, and nothing reached the app.
        let huge = try? await app.client.get(URI(string: base + "/snippets?" + String(repeating: "q=word&", count: 20_000)), headers: cookie)
        XCTAssertLessThan(huge?.status.code ?? 0, 500)
        let after = try await app.client.get(URI(string: base + "/snippets"), headers: cookie)
        XCTAssertEqual(after.status, .ok)
        await app.server.shutdown()
    }

    func testIdentifiersCannotReachOutsideTheLibrary() async throws {
        for path in ["/snippets/..%2F..%2Faccounts.store/image", "/snippets/%2e%2e/raw", "/static/..%2F..%2FPackage.swift",
                     "/static/%2e%2e/%2e%2e/Package.swift", "/static/css/..%5C..%5CPackage.swift", "/folders/..%2Fremoved/edit"] {
            try await send(.GET, path) { response async throws in
                XCTAssertEqual(response.status, .notFound, path)
                XCTAssertFalse(response.body.string.contains("swift-tools-version"), path)
            }
        }
    }

    /// A NUL ended the path for the file system but not for the content type: the script was served
    /// as HTML, SVG or a stylesheet as script, whatever the name added after the NUL said.
    func testAStaticPathWithANULIsNotFound() async throws {
        _ = try await page("/static/js/app.js")
        for path in ["/static/js/app.js%00.html", "/static/css/app.css%00.js", "/static/js/app.js%0A.svg"] {
            try await send(.GET, path) { response async throws in
                XCTAssertEqual(response.status, .notFound, path)
            }
        }
    }

    func testHostileTextIsEscapedOnEveryPage() async throws {
        let attack = "<script>alert(1)</script>"
        let id = try await createSnippet(SnippetUpload(title: attack, newFolder: attack, newTags: attack, code: attack, notes: attack))
        let binned = try await createSnippet(SnippetUpload(title: "\(attack) binned"))
        try await send(.POST, "/snippets/\(binned)/delete")
        try await send(.POST, "/searches", beforeRequest: { req async throws in
            try req.content.encode(["name": attack, "query": "q=\(attack.urlQueryEscaped)"], as: .urlEncodedForm)
        }, afterResponse: { _ in })
        let folderID = try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<Folder>()).first).uuid.uuidString }
        let tagID = try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<Tag>()).first).uuid.uuidString }
        let pages = ["/snippets", "/snippets/\(id)", "/snippets/\(id)/edit", "/snippets/\(id)/delete", "/folders", "/tags",
                     "/folders/\(folderID)/edit", "/folders/\(folderID)/delete", "/tags/\(tagID)/edit", "/tags/\(tagID)/delete",
                     "/trash", "/account", "/users", "/snippets?q=\(attack.urlQueryEscaped)", "/snippets?folder=\(folderID)",
                     "/snippets?tag=\(tagID)"]
        for path in pages {
            let body = try await page(path)
            XCTAssertFalse(body.contains("<script>alert"), "unescaped script on \(path)")
        }
        var anonymous = TestSession()
        try await send(.GET, "/login?next=\(("/\"><script>alert(1)</script>").urlQueryEscaped)", as: anonymous) { response async throws in
            XCTAssertEqual(response.status, .ok)
            XCTAssertFalse(response.body.string.contains("<script>alert"))
            anonymous = TestSession(startedBy: response)
        }
        try await send(.POST, "/login", as: anonymous, beforeRequest: { req async throws in
            try req.content.encode(["username": attack, "password": "whatever!"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertFalse(response.body.string.contains("<script>alert"))
        })
    }

    func testAConflictingEditIsRefusedWithAWayToReload() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Shared", code: "v1"))
        let form = try await page("/snippets/\(id)/edit")
        let marker = #"name="version" value=""#
        let version = try XCTUnwrap(form.components(separatedBy: marker).dropFirst().first?.split(separator: "\"").first.map(String.init))

        // The first tab saves; the second, opened on the same version, must not silently undo it.
        struct Edit: Content { var title: String; var code: String; var version: String; var language = "swift" }
        try await send(.POST, "/snippets/\(id)", beforeRequest: { req async throws in
            try req.content.encode(Edit(title: "Shared", code: "first tab", version: version), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        var newerVersion = ""
        try await send(.POST, "/snippets/\(id)", beforeRequest: { req async throws in
            try req.content.encode(Edit(title: "Shared", code: "second tab", version: version), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .conflict)
            let body = response.body.string
            XCTAssertTrue(body.contains("was saved elsewhere"))
            XCTAssertTrue(body.contains("Reload the latest version"))
            XCTAssertTrue(body.contains("second tab"), "the second tab's text is kept in the form")
            newerVersion = body.components(separatedBy: marker).dropFirst().first?.split(separator: "\"").first.map(String.init) ?? ""
        })
        XCTAssertEqual(try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<Snippet>()).first).code }, "first tab")
        // Saving again from the returned form is a deliberate choice, and goes through.
        XCTAssertNotEqual(newerVersion, version)
        try await send(.POST, "/snippets/\(id)", beforeRequest: { req async throws in
            try req.content.encode(Edit(title: "Shared", code: "second tab", version: newerVersion), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        XCTAssertEqual(try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<Snippet>()).first).code }, "second tab")
    }

    /// A hidden field's value in a page.
    private func hiddenValue(_ name: String, in html: String) throws -> String {
        let marker = "name=\"\(name)\" value=\""
        return try XCTUnwrap(html.components(separatedBy: marker).dropFirst().first?.split(separator: "\"", omittingEmptySubsequences: false)
            .first.map(String.init), "no \(name) in the page")
    }

    /// Marking a favourite is not a new version (it is not an edit); moving to Unfiled is, as moving
    /// into a folder is. Either way an edit form opened before must not quietly undo it.
    func testAFormOpenedBeforeAStarOrAMoveDoesNotUndoIt() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Starred later", newFolder: "Box", code: "x"))
        let box = try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<Folder>()).first).uuid.uuidString }
        struct Edit: Content {
            var title = "Starred later", code = "x", language = "swift"
            var folder: String, version: String, wasFavorite: String, isFavorite: String? = nil
        }
        func save(_ edit: Edit) async throws -> HTTPStatus {
            var status = HTTPStatus.ok
            try await send(.POST, "/snippets/\(id)", beforeRequest: { req async throws in
                try req.content.encode(edit, as: .formData)
            }, afterResponse: { status = $0.status })
            return status
        }
        func stored() throws -> (isFavorite: Bool, folder: String?) {
            try withContext { context in
                let snippet = try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>()).first)
                return (snippet.isFavorite, snippet.folder?.uuid.uuidString)
            }
        }

        var form = try await page("/snippets/\(id)/edit")
        XCTAssertEqual(try hiddenValue("wasFavorite", in: form), "0")
        try await send(.POST, "/snippets/\(id)/favorite")
        // Saved from the form opened before the star, its checkbox untouched: the star stays.
        expectStatus(.seeOther, try await save(Edit(folder: box, version: try hiddenValue("version", in: form), wasFavorite: "0")))
        XCTAssertEqual(try stored().isFavorite, true)

        // Unticked in a form that showed it ticked: that is the form's change, and it is made.
        form = try await page("/snippets/\(id)/edit")
        XCTAssertEqual(try hiddenValue("wasFavorite", in: form), "1")
        expectStatus(.seeOther, try await save(Edit(folder: box, version: try hiddenValue("version", in: form), wasFavorite: "1")))
        XCTAssertEqual(try stored().isFavorite, false)

        // Moved to Unfiled after the form was opened: the form's save is a conflict, not a move back.
        form = try await page("/snippets/\(id)/edit")
        try await Task.sleep(for: .milliseconds(5))
        try await send(.POST, "/snippets/\(id)/move", beforeRequest: { req async throws in
            try req.content.encode(["folder": ""], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        expectStatus(.conflict, try await save(Edit(folder: box, version: try hiddenValue("version", in: form), wasFavorite: "0")))
        XCTAssertNil(try stored().folder)

        // Starred elsewhere after the form was opened, and the form's save a conflict: the form shown
        // again has the star (its checkbox was left as it was), so saving it again keeps the star. It
        // came back unticked with wasFavorite 1, and saving it again took the star away.
        form = try await page("/snippets/\(id)/edit")
        try await Task.sleep(for: .milliseconds(5))
        try await send(.POST, "/snippets/\(id)/favorite")
        try await send(.POST, "/snippets/\(id)/move", beforeRequest: { req async throws in
            try req.content.encode(["folder": box], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        var shownAgain = ""
        try await send(.POST, "/snippets/\(id)", beforeRequest: { req async throws in
            try req.content.encode(Edit(folder: box, version: try self.hiddenValue("version", in: form), wasFavorite: "0"), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .conflict)
            shownAgain = response.body.string
        })
        XCTAssertTrue(shownAgain.contains("name=\"isFavorite\" value=\"1\" checked"), "the stored star is shown")
        expectStatus(.seeOther, try await save(Edit(folder: box, version: try hiddenValue("version", in: shownAgain),
                                                    wasFavorite: try hiddenValue("wasFavorite", in: shownAgain), isFavorite: "1")))
        XCTAssertEqual(try stored().isFavorite, true)
    }

    /// HTML drops a line break that directly follows `<textarea>`: code or notes that began with a
    /// blank line lost it on every save of the form.
    func testCodeAndNotesKeepTheirFirstBlankLineThroughTheForm() async throws {
        let code = "\n    indented first line\n", notes = "\n\nafter two blank lines"
        let id = try await createSnippet(SnippetUpload(title: "Blank first", code: code, notes: notes))
        /// A textarea's text as a browser reads it: one line break after the start tag dropped.
        func textarea(_ opening: String, in html: String) throws -> String {
            let afterTag = try XCTUnwrap(html.components(separatedBy: opening).dropFirst().first, "no \(opening)")
            let raw = try XCTUnwrap(afterTag.components(separatedBy: "</textarea>").first)
            return raw.hasPrefix("\n") ? String(raw.dropFirst()) : raw
        }
        let form = try await page("/snippets/\(id)/edit")
        XCTAssertEqual(try textarea("data-tab-inserts>", in: form), code)
        XCTAssertEqual(try textarea("<textarea id=\"notes\" name=\"notes\" rows=\"6\">", in: form), notes)
        let shown = try await page("/snippets/\(id)")
        XCTAssertEqual(try textarea("aria-label=\"Code to copy\">", in: shown), code)
    }

    func testTheTrashRestoresDeletesForGoodAndPurgesAfterThirtyDays() async throws {
        let kept = try await createSnippet(SnippetUpload(title: "Keep me", newFolder: "Box", image: File(data: ByteBuffer(data: tinyPNG), filename: "a.png")))
        let gone = try await createSnippet(SnippetUpload(title: "Gone for good"))
        let old = try await createSnippet(SnippetUpload(title: "Old rubbish"))
        for id in [kept, gone, old] { try await send(.POST, "/snippets/\(id)/delete") }
        try await expectPage("/trash", shows: "Keep me")
        _ = try await page("/snippets/\(kept)/image", status: .notFound)

        try await send(.POST, "/trash/\(kept)/restore") { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        }
        try await expectPage("/snippets/\(kept)", shows: "Keep me")
        try await expectPage("/snippets?folder=\(try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<Folder>()).first).uuid.uuidString })", shows: "Keep me")
        _ = try await page("/snippets/\(kept)/image")

        try await send(.POST, "/trash/\(gone)/delete")
        XCTAssertEqual(try withContext { try $0.fetch(FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.title)])).map(\.title) }, ["Keep me", "Old rubbish"])
        try await send(.POST, "/trash/\(kept)/delete") { response async throws in
            XCTAssertEqual(response.status, .notFound, "only what is in the trash can be deleted for good")
        }

        // Thirty days later the trash empties itself.
        try withContext { context in
            try TrashController.purgeExpired(in: context, now: Date.now.addingTimeInterval(29 * 86_400))
            try context.save()
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<Snippet>()), 2)
            try TrashController.purgeExpired(in: context, now: Date.now.addingTimeInterval(31 * 86_400))
            try context.save()
            XCTAssertEqual(try context.fetch(FetchDescriptor<Snippet>()).map(\.title), ["Keep me"])
        }
        let again = try await createSnippet(SnippetUpload(title: "Emptied"))
        try await send(.POST, "/snippets/\(again)/delete")
        try await emptyTheTrash()
        try await expectPage("/trash", shows: "The trash is empty.")
        XCTAssertEqual(try snippetCount(), 1)
    }

    /// Answers the trash's "Empty the trash?" with the value its form holds.
    private func emptyTheTrash() async throws {
        let question = try await page("/trash/empty")
        let asked = try XCTUnwrap(question.firstMatch(of: /name="asked" value="([0-9a-f]+)"/)?.1, question)
        try await send(.POST, "/trash/empty", beforeRequest: { req async throws in
            try req.content.encode(["asked": String(asked)], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
            XCTAssertEqual(self.location(response), "/trash")
        })
    }

    /// Deleting for good cannot be undone: the trash's buttons were forms that deleted at once, one
    /// click for everything in it. They are links to a question now, and emptying deletes exactly
    /// what the question counted: if the trash changed meanwhile (a snippet trashed, or imported with
    /// an old date of deletion, which a time of deletion would have let through), nothing is deleted
    /// and the question is asked again.
    func testDeletingForGoodAsksFirstAndEmptiesOnlyWhatWasAsked() async throws {
        let first = try await createSnippet(SnippetUpload(title: "First out"))
        let later = try await createSnippet(SnippetUpload(title: "Later out"))
        try await send(.POST, "/snippets/\(first)/delete")
        let trash = try await page("/trash")
        XCTAssertTrue(trash.contains("href=\"/trash/empty\""), trash)
        XCTAssertTrue(trash.contains("href=\"/trash/\(first)/delete\""), trash)
        XCTAssertFalse(trash.contains("action=\"/trash/empty\""), "no button empties the trash at once: \(trash)")

        let single = try await page("/trash/\(first)/delete")
        XCTAssertTrue(single.contains("Delete “\u{2068}First out\u{2069}” for good?"), single)
        XCTAssertTrue(single.contains("action=\"/trash/\(first)/delete\""), single)
        _ = try await page("/trash/\(later)/delete", status: .notFound)

        let question = try await page("/trash/empty")
        XCTAssertTrue(question.contains("1 snippet in it is deleted for good"), question)
        let asked = try XCTUnwrap(question.firstMatch(of: /name="asked" value="([0-9a-f]+)"/)?.1, question)
        // Trashed after the question was asked, with a date of deletion before it (as an import keeps one).
        try await send(.POST, "/snippets/\(later)/delete")
        try withContext { context in
            let snippet = try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.title == "Later out" })).first)
            snippet.deletedAt = Date.now.addingTimeInterval(-86_400)
            try context.save()
        }
        // A form without the answer deletes nothing: it is asked again.
        try await send(.POST, "/trash/empty") { response async throws in
            XCTAssertEqual(response.status, .seeOther)
            XCTAssertEqual(self.location(response), "/trash/empty")
        }
        try await send(.POST, "/trash/empty", beforeRequest: { req async throws in
            try req.content.encode(["asked": String(asked)], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(self.location(response), "/trash/empty", "asked again")
        })
        XCTAssertEqual(try snippetCount(), 2, "nothing deleted: the trash is not what was asked about")
        let again = try await page("/trash/empty")
        XCTAssertTrue(again.contains("The trash changed since you were asked, so nothing was deleted"), again)
        XCTAssertTrue(again.contains("2 snippets in it are deleted for good"), again)

        try await emptyTheTrash()
        XCTAssertEqual(try snippetCount(), 0)
        try await send(.GET, "/trash/empty") { response async throws in
            XCTAssertEqual(response.status, .seeOther, "nothing to ask about")
        }
    }

    func testAVersionOneStoreOpensWithItsSnippetsForTheFirstAccount() async throws {
        let folder = dataDirectory.appendingPathComponent("old")
        let settings = AppSettings(dataDirectory: folder, passwordHashCost: 4)
        do {
            let old = try ModelContainer(for: Schema(versionedSchema: SnippetSchemaV1.self), configurations: ModelConfiguration(url: settings.storeURL))
            let context = ModelContext(old)
            let snippet = SnippetSchemaV1.Snippet(title: "From before accounts", code: "print(1)")
            snippet.folder = SnippetSchemaV1.Folder(name: "Old folder")
            context.insert(snippet)
            try context.save()
        }
        let upgraded = try await Application.make(.testing)
        try configure(upgraded, settings: settings)
        defer { Task { try? await upgraded.asyncShutdown() } }
        let account = try await upgraded.accounts.create(username: "first", passwordHash: try Bcrypt.hash("long enough", cost: 4), isAdmin: true)
        let context = ModelContext(try upgraded.libraries.store(for: account).container)
        let snippets = try context.fetch(FetchDescriptor<Snippet>(predicate: Snippet.inLibrary))
        XCTAssertEqual(snippets.map(\.title), ["From before accounts"])
        XCTAssertEqual(snippets.first?.titleSortKey, "from before accounts", "version 2 to 3 ran after 1 to 2")
        XCTAssertEqual(snippets.first?.folder?.name, "Old folder")
        XCTAssertNil(snippets.first?.deletedAt)
        let second = try await upgraded.accounts.create(username: "second", passwordHash: try Bcrypt.hash("long enough", cost: 4), isAdmin: false)
        XCTAssertEqual(try ModelContext(upgraded.libraries.store(for: second).container).fetchCount(FetchDescriptor<Snippet>()), 0)
    }
}

private extension HTTPHeaders {
    func adding(_ name: String, _ value: String) -> HTTPHeaders {
        var copy = self
        copy.replaceOrAdd(name: name, value: value)
        return copy
    }
}
