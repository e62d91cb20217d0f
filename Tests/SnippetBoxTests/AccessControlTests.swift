import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// Login, sessions, CSRF, and one account's data out of another's reach.
final class AccessControlTests: AppTestCase {
    /// Every registered route with its `:id` filled with a real id of the right kind, so that a route
    /// added later is checked too.
    private func everyProtectedRoute() async throws -> [(HTTPMethod, String)] {
        let snippetID = try await createSnippet(SnippetUpload(title: "Guarded", newFolder: "Box", newTags: "secret"))
        let trashedID = try await createSnippet(SnippetUpload(title: "Binned"))
        try await send(.POST, "/snippets/\(trashedID)/delete")
        try await send(.POST, "/searches", beforeRequest: { req async throws in
            try req.content.encode(["name": "Mine", "query": "q=x"], as: .urlEncodedForm)
        }, afterResponse: { _ in })
        let other = try await addAccount("someone")
        let (folderID, tagID, searchID) = try withContext { context in
            (try XCTUnwrap(context.fetch(FetchDescriptor<Folder>()).first).uuid.uuidString,
             try XCTUnwrap(context.fetch(FetchDescriptor<Tag>()).first).uuid.uuidString,
             try XCTUnwrap(context.fetch(FetchDescriptor<SavedSearch>()).first).uuid.uuidString)
        }
        let idFor = ["snippets": snippetID, "folders": folderID, "tags": tagID, "searches": searchID,
                     "trash": trashedID, "users": other.id.uuidString]
        let publicRoots: Set<String> = ["login", "setup", "static"]
        return app.routes.all.compactMap { route in
            let parts = route.path.map(\.description)
            guard let first = parts.first, !publicRoots.contains(first) else { return nil }
            let path = "/" + parts.map { $0 == ":id" ? (idFor[first] ?? "missing") : $0 }.joined(separator: "/")
            return (route.method, path)
        }
    }

    private func libraryState() throws -> String {
        try withContext { context in
            let snippets = try context.fetch(FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.title)]))
            let folders = try context.fetch(FetchDescriptor<Folder>()).map(\.name).sorted()
            let tags = try context.fetch(FetchDescriptor<Tag>()).map(\.name).sorted()
            let searches = try context.fetchCount(FetchDescriptor<SavedSearch>())
            return snippets.map { "\($0.title)|\($0.isFavorite)|\($0.deletedAt != nil)|\($0.folder?.name ?? "-")" }.joined(separator: ",")
                + " folders:\(folders) tags:\(tags) searches:\(searches) accounts:\(app.accounts.all.map(\.username))"
        }
    }

    func testEveryProtectedRouteRefusesAnAnonymousRequest() async throws {
        let routes = try await everyProtectedRoute()
        XCTAssertGreaterThan(routes.count, 30)
        let before = try libraryState()
        for (method, path) in routes {
            try await send(method, path, as: TestSession()) { response async throws in
                if method == .GET {
                    XCTAssertEqual(response.status, .seeOther, "\(method) \(path)")
                    XCTAssertTrue(response.headers.first(name: .location)?.hasPrefix("/login?next=") == true, "\(method) \(path)")
                } else {
                    XCTAssertEqual(response.status, .unauthorized, "\(method) \(path)")
                }
                XCTAssertFalse(response.body.string.contains("Guarded"), "\(method) \(path) leaks a title")
            }
        }
        XCTAssertEqual(try libraryState(), before)
    }

    func testEveryChangeNeedsTheSessionsCSRFToken() async throws {
        let routes = try await everyProtectedRoute().filter { $0.0 != .GET }
        XCTAssertGreaterThan(routes.count, 15)
        let before = try libraryState()
        var wrong = session
        wrong.csrf = "not-the-token"
        var missing = session
        missing.csrf = ""
        for (method, path) in routes {
            for attempt in [wrong, missing] {
                try await send(method, path, as: attempt, beforeRequest: { req async throws in
                    try req.content.encode(["name": "Changed", "title": "Changed", "csrf": attempt.csrf], as: .urlEncodedForm)
                }, afterResponse: { response async throws in
                    XCTAssertEqual(response.status, .forbidden, "\(method) \(path) with token “\(attempt.csrf)”")
                })
            }
        }
        XCTAssertEqual(try libraryState(), before)
        // Another session's token is no better than a made-up one.
        let otherSession = try await logIn("tester")
        try await send(.POST, "/folders", as: TestSession(cookie: session.cookie, csrf: otherSession.csrf), beforeRequest: { req async throws in
            try req.content.encode(["name": "Crossed"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .forbidden)
        })
        XCTAssertEqual(try libraryState(), before)
    }

    func testTheTokenInTheFormsHiddenFieldIsAccepted() async throws {
        let noHeader = TestSession(cookie: session.cookie, csrf: "")
        try await send(.POST, "/folders", as: noHeader, beforeRequest: { req async throws in
            try req.content.encode(["name": "From a form", "csrf": self.session.csrf], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        XCTAssertEqual(try withContext { try $0.fetch(FetchDescriptor<Folder>()).map(\.name) }, ["From a form"])
    }

    func testTheTokenIsFoundInABigFormThatArrivesInPieces() async throws {
        // Through a real server, a large body streams in; the token is read from the whole of it.
        struct BigForm: Content { var csrf: String; var title: String; var padding: String; var language = "swift" }
        let noHeader = TestSession(cookie: session.cookie, csrf: "")
        try await app.testable(method: .running(hostname: "127.0.0.1", port: 0)).test(.POST, "/snippets", headers: noHeader.headers, beforeRequest: { req async throws in
            try req.content.encode(BigForm(csrf: self.session.csrf, title: "Big", padding: String(repeating: "let x = 1\n", count: 50_000)), as: .formData)
        }, afterResponse: { response async throws in
            // The test client follows the redirect to the new snippet.
            XCTAssertEqual(response.status, .ok, response.body.string)
        })
        XCTAssertEqual(try withContext { try $0.fetch(FetchDescriptor<Snippet>()).map(\.title) }, ["Big"])
    }

    func testAccountsCannotReachEachOthersDataByGuessingIds() async throws {
        let snippetID = try await createSnippet(SnippetUpload(title: "Tester's secret", newFolder: "Private", newTags: "mine",
                                                              code: "password = 1", image: File(data: ByteBuffer(data: tinyPNG), filename: "a.png")))
        let (folderID, tagID) = try withContext { context in
            (try XCTUnwrap(context.fetch(FetchDescriptor<Folder>()).first).uuid.uuidString,
             try XCTUnwrap(context.fetch(FetchDescriptor<Tag>()).first).uuid.uuidString)
        }
        try await addAccount("mallory")
        let mallory = try await logIn("mallory")
        for path in ["/snippets/\(snippetID)", "/snippets/\(snippetID)/edit", "/snippets/\(snippetID)/raw",
                     "/snippets/\(snippetID)/download", "/snippets/\(snippetID)/image", "/snippets/\(snippetID)/delete",
                     "/folders/\(folderID)/edit", "/folders/\(folderID)/delete", "/tags/\(tagID)/edit", "/tags/\(tagID)/delete"] {
            try await send(.GET, path, as: mallory) { response async throws in
                XCTAssertEqual(response.status, .notFound, path)
                XCTAssertFalse(response.body.string.contains("secret"), path)
            }
        }
        // A list naming another library's folder or tag is the list without them, as for a deleted one.
        try await send(.GET, "/snippets?folder=\(folderID)&tag=\(tagID)", as: mallory) { response async throws in
            XCTAssertEqual(response.status, .seeOther)
            XCTAssertEqual(location(response), "/snippets")
        }
        try await send(.GET, "/snippets", as: mallory) { response async throws in
            XCTAssertFalse(response.body.string.contains("secret"))
            XCTAssertFalse(response.body.string.contains("Private"))
        }
        for path in ["/snippets/\(snippetID)", "/snippets/\(snippetID)/delete", "/snippets/\(snippetID)/favorite",
                     "/folders/\(folderID)", "/folders/\(folderID)/delete", "/tags/\(tagID)", "/tags/\(tagID)/delete"] {
            try await send(.POST, path, as: mallory, beforeRequest: { req async throws in
                try req.content.encode(["title": "Owned", "name": "Owned", "color": "#ff0000", "snippets": "delete"], as: .formData)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status, .notFound, path)
            })
        }
        for path in ["/snippets", "/snippets?q=secret", "/snippets?q=password", "/folders", "/tags", "/trash"] {
            try await send(.GET, path, as: mallory) { response async throws in
                XCTAssertEqual(response.status, .ok, path)
                XCTAssertFalse(response.body.string.contains("s secret"), path)
                XCTAssertFalse(response.body.string.contains("password = 1"), path)
                XCTAssertFalse(response.body.string.contains("Private"), path)
            }
        }
        try withContext { context in
            let snippet = try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>()).first)
            XCTAssertEqual(snippet.title, "Tester's secret")
            XCTAssertFalse(snippet.isFavorite)
            XCTAssertNil(snippet.deletedAt)
        }
        XCTAssertEqual(try ModelContext(library(of: "mallory")).fetchCount(FetchDescriptor<Snippet>()), 0)
    }

    func testTheFirstRunCreatesTheAdministratorOnce() async throws {
        let fresh = try await Application.make(.testing)
        let folder = dataDirectory.appendingPathComponent("fresh")
        try configure(fresh, settings: AppSettings(dataDirectory: folder, passwordHashCost: 4))
        defer { Task { try? await fresh.asyncShutdown() } }
        try await fresh.test(.GET, "/snippets") { response async throws in
            XCTAssertEqual(response.status, .seeOther)
            XCTAssertEqual(response.headers.first(name: .location), "/setup")
        }
        var cookie = ""
        var csrf = ""
        try await fresh.test(.GET, "/setup") { response async throws in
            XCTAssertTrue(response.body.string.contains("Welcome to SnippetBox"))
            cookie = response.headers.setCookie?["snippetbox-session"]?.string ?? ""
            csrf = TestSession.csrfToken(in: response.body.string) ?? ""
        }
        let anonymous = TestSession(cookie: cookie, csrf: csrf)
        try await fresh.test(.POST, "/setup", headers: anonymous.headers, beforeRequest: { req async throws in
            try req.content.encode(["username": "Root", "password": "short", "confirmation": "short"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .unprocessableEntity)
            XCTAssertTrue(response.body.string.contains("8 to 72 bytes"))
        })
        try await fresh.test(.POST, "/setup", headers: anonymous.headers, beforeRequest: { req async throws in
            try req.content.encode(["username": "Root", "password": "long enough", "confirmation": "long enough"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
            XCTAssertEqual(response.headers.first(name: .location), "/snippets")
        })
        XCTAssertEqual(fresh.accounts.all.map(\.username), ["root"])
        XCTAssertEqual(fresh.accounts.all.first?.isAdmin, true)
        try await fresh.test(.POST, "/setup", headers: anonymous.headers, beforeRequest: { req async throws in
            try req.content.encode(["username": "intruder", "password": "long enough", "confirmation": "long enough"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .forbidden)
        })
        XCTAssertEqual(fresh.accounts.all.count, 1)
    }

    func testAdminPasswordFromTheEnvironmentCreatesTheAdminAccount() async throws {
        let fresh = try await Application.make(.testing)
        var settings = try AppSettings.fromEnvironment(["DATA_DIR": dataDirectory.appendingPathComponent("env").path,
                                                        "ADMIN_PASSWORD": "from the environment"])
        settings.passwordHashCost = 4
        try configure(fresh, settings: settings)
        defer { Task { try? await fresh.asyncShutdown() } }
        try await createAdminFromSettings(fresh)
        let admin = try XCTUnwrap(fresh.accounts.account(username: "admin"))
        XCTAssertTrue(admin.isAdmin)
        XCTAssertTrue(try Bcrypt.verify("from the environment", created: admin.passwordHash))
        XCTAssertThrowsError(try AppSettings.fromEnvironment(["ADMIN_PASSWORD": "short"]))
    }

    func testLoginFailuresAreRefusedThenRateLimited() async throws {
        var anonymous = TestSession()
        try await send(.GET, "/login", as: anonymous) { response async throws in
            anonymous = TestSession(startedBy: response)
        }
        func attempt(_ password: String) async throws -> (HTTPStatus, String) {
            var result: (HTTPStatus, String) = (.ok, "")
            try await send(.POST, "/login", as: anonymous, beforeRequest: { req async throws in
                try req.content.encode(["username": "Tester", "password": password], as: .urlEncodedForm)
            }, afterResponse: { response async throws in
                result = (response.status, response.body.string)
            })
            return result
        }
        let wrong = try await attempt("not my password")
        expectStatus(.unauthorized, wrong.0)
        XCTAssertTrue(wrong.1.contains("That username and password do not match."))
        for _ in 0..<4 { _ = try await attempt("still wrong") }
        let limited = try await attempt(Self.password)
        expectStatus(.tooManyRequests, limited.0)
        XCTAssertTrue(limited.1.contains("Too many failed attempts"))
    }

    func testTheSessionCookieIsHttpOnlyAndSameSiteLax() async throws {
        var header = ""
        try await send(.GET, "/login", as: TestSession()) { response async throws in
            header = response.headers.first(name: .setCookie) ?? ""
        }
        XCTAssertTrue(header.contains("HttpOnly"), header)
        XCTAssertTrue(header.lowercased().contains("samesite=lax"), header)
        XCTAssertFalse(header.contains("Secure"), "plain HTTP by default: \(header)")

        let secure = try await Application.make(.testing)
        try configure(secure, settings: AppSettings(dataDirectory: dataDirectory.appendingPathComponent("secure"), secureCookies: true, passwordHashCost: 4))
        defer { Task { try? await secure.asyncShutdown() } }
        try await secure.test(.GET, "/setup") { response async throws in
            XCTAssertTrue(response.headers.first(name: .setCookie)?.contains("Secure") == true)
        }
    }

    func testChangingThePasswordEndsOtherSessions() async throws {
        let otherTab = try await logIn("tester")
        try await send(.POST, "/account/password", beforeRequest: { req async throws in
            try req.content.encode(["current": "wrong one!", "password": "a new password", "confirmation": "a new password"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .unprocessableEntity)
            XCTAssertTrue(response.body.string.contains("That is not your current password."))
        })
        // Sessions record their login time in whole seconds; make sure the change is later.
        try await Task.sleep(nanoseconds: 1_100_000_000)
        var renewed = session
        try await send(.POST, "/account/password", beforeRequest: { req async throws in
            try req.content.encode(["current": Self.password, "password": "a new password", "confirmation": "a new password"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
            renewed.cookie = response.headers.setCookie?["snippetbox-session"]?.string ?? ""
        })
        try await send(.GET, "/snippets", as: otherTab) { response async throws in
            XCTAssertEqual(response.status, .seeOther, "the other session is over")
        }
        try await send(.GET, "/snippets", as: renewed) { response async throws in
            XCTAssertEqual(response.status, .ok, "the session that changed it goes on")
        }
        _ = try await logIn("tester", password: "a new password")
    }

    func testAnAdministratorManagesAccountsAndOthersCannot() async throws {
        try await send(.POST, "/users", beforeRequest: { req async throws in
            try req.content.encode(["username": "Bob", "password": "bob's password"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        let bobAccount = try XCTUnwrap(app.accounts.account(username: "bob"))
        XCTAssertFalse(bobAccount.isAdmin)
        let bob = try await logIn("bob", password: "bob's password")
        try await send(.GET, "/users", as: bob) { response async throws in
            XCTAssertEqual(response.status, .forbidden)
        }
        let tester = try XCTUnwrap(app.accounts.account(username: "tester"))
        try await send(.POST, "/users/\(tester.id.uuidString)/delete", as: bob) { response async throws in
            XCTAssertEqual(response.status, .forbidden)
        }
        // Bob's library is a file of its own, moved aside (not deleted) when the account goes.
        try await send(.POST, "/snippets", as: bob, beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "Bob's"), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        try await send(.POST, "/users/\(tester.id.uuidString)/delete") { response async throws in
            XCTAssertEqual(response.status, .badRequest, "an administrator cannot remove their own account")
        }
        try await send(.POST, "/users/\(bobAccount.id.uuidString)/delete") { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        }
        XCTAssertNil(app.accounts.account(username: "bob"))
        try await send(.GET, "/snippets", as: bob) { response async throws in
            XCTAssertEqual(response.status, .seeOther, "a removed account's session is over")
        }
        let removed = try FileManager.default.contentsOfDirectory(atPath: dataDirectory.appendingPathComponent("removed").path)
        XCTAssertEqual(removed.count, 1)
        XCTAssertTrue(removed[0].hasPrefix("bob-"))
    }

    func testSecurityHeadersOnPagesErrorsAndFiles() async throws {
        for path in ["/snippets", "/snippets/\(UUID().uuidString)", "/static/css/app.css", "/login"] {
            try await send(.GET, path) { response async throws in
                let policy = response.headers.first(name: "Content-Security-Policy") ?? ""
                XCTAssertTrue(policy.contains("script-src 'self'"), path)
                XCTAssertFalse(policy.contains("unsafe-eval"), path)
                XCTAssertFalse(policy.contains("script-src 'self' 'unsafe-inline'"), path)
                XCTAssertTrue(policy.contains("frame-ancestors 'none'"), path)
                XCTAssertEqual(response.headers.first(name: "X-Content-Type-Options"), "nosniff", path)
                XCTAssertEqual(response.headers.first(name: "Referrer-Policy"), "same-origin", path)
                XCTAssertEqual(response.headers.first(name: "X-Frame-Options"), "DENY", path)
            }
        }
    }

    func testNoPageHasAnInlineScript() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Scripts", code: "<script>alert(1)</script>"))
        for path in ["/snippets", "/snippets/\(id)", "/snippets/new", "/snippets/\(id)/edit", "/folders", "/tags",
                     "/trash", "/account", "/users"] {
            let body = try await page(path)
            let scripts = body.components(separatedBy: "<script").dropFirst()
            for script in scripts {
                XCTAssertTrue(script.hasPrefix(" src=\""), "\(path) has an inline script: \(script.prefix(60))")
            }
        }
    }

    func testLoginRedirectsOnlyWithinTheSite() async throws {
        try await send(.GET, "/snippets?q=abc", as: TestSession()) { response async throws in
            XCTAssertEqual(response.headers.first(name: .location), "/login?next=%2Fsnippets%3Fq%3Dabc")
        }
        // Browsers drop tabs and line breaks anywhere in a URL, and spaces and control characters at
        // its ends, so "/\t/evil.example" is "//evil.example", another site.
        for next in ["https://evil.example/", "//evil.example/x", "/\\evil.example", "/\t/evil.example/phish",
                     "/\n/evil.example", "/\r/evil.example", " //evil.example", "/\u{0}/evil.example", "/\u{7F}/evil.example"] {
            var anonymous = TestSession()
            try await send(.GET, "/login?next=\(next.urlQueryEscaped)", as: anonymous) { response async throws in
                anonymous = TestSession(startedBy: response)
                XCTAssertFalse(response.body.string.contains("evil.example"), next)
            }
            try await send(.POST, "/login", as: anonymous, beforeRequest: { req async throws in
                try req.content.encode(["username": "tester", "password": Self.password, "next": next], as: .urlEncodedForm)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.headers.first(name: .location), "/snippets", next)
            })
        }
    }
}
