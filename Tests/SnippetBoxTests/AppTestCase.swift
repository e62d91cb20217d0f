import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// An app on a store of its own in a temporary folder, driven through HTTP, with an account
/// (`tester`, an administrator) logged in: `send` adds its session cookie and CSRF token.
class AppTestCase: XCTestCase {
    var app: Application!
    var dataDirectory: URL!
    var settings: AppSettings!
    var session = TestSession()

    var basePath: String { "" }
    var maxUploadMegabytes: Int { 1 }
    var sessionLimit: Int { 10_000 }
    var trustsForwardedFor: Bool { false }
    static let password = "correct horse battery"

    override func setUp() async throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("snippetbox-tests-\(UUID().uuidString)")
        settings = AppSettings(dataDirectory: dataDirectory, basePath: basePath, maxUploadMegabytes: maxUploadMegabytes,
                               passwordHashCost: 4)
        settings.sessionLimit = sessionLimit
        settings.trustForwardedFor = trustsForwardedFor
        app = try await Application.make(.testing)
        try configure(app, settings: settings)
        try await addAccount("tester", isAdmin: true)
        session = try await logIn("tester")
    }

    /// Adds an account directly (the set-up page and the users page have tests of their own).
    @discardableResult
    func addAccount(_ username: String, password: String = AppTestCase.password, isAdmin: Bool = false) async throws -> AccountInfo {
        try await app.accounts.create(username: username, passwordHash: try Bcrypt.hash(password, cost: 4), isAdmin: isAdmin)
    }

    /// Logs in through the login form, as a browser does, and returns the session.
    func logIn(_ username: String, password: String = AppTestCase.password, on application: Application? = nil,
               file: StaticString = #filePath, line: UInt = #line) async throws -> TestSession {
        let app: Application = application ?? self.app
        var anonymous = TestSession()
        try await app.test(.GET, "\(basePath)/login") { response async throws in
            anonymous = TestSession(startedBy: response)
        }
        var loggedIn = TestSession()
        try await app.test(.POST, "\(basePath)/login", headers: anonymous.headers, beforeRequest: { req async throws in
            try req.content.encode(["username": username, "password": password, "csrf": anonymous.csrf], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther, "login of \(username) failed", file: file, line: line)
            loggedIn.cookie = response.headers.setCookie?["snippetbox-session"]?.string ?? ""
        })
        try await app.test(.GET, "\(basePath)/snippets/new", headers: loggedIn.headers) { response async throws in
            loggedIn.csrf = TestSession.csrfToken(in: response.body.string) ?? ""
        }
        return loggedIn
    }

    /// `app.test` as the logged-in account (or as `session`), with the session's CSRF token in a header.
    func send(
        _ method: HTTPMethod, _ path: String, as session: TestSession? = nil, headers: HTTPHeaders = [:],
        file: StaticString = #filePath, line: UInt = #line,
        afterResponse: (XCTHTTPResponse) async throws -> Void = { _ in }
    ) async throws {
        try await send(method, path, as: session, headers: headers, file: file, line: line,
                       beforeRequest: { _ in }, afterResponse: afterResponse)
    }

    func send(
        _ method: HTTPMethod, _ path: String, as session: TestSession? = nil, headers: HTTPHeaders = [:],
        file: StaticString = #filePath, line: UInt = #line,
        beforeRequest: (inout XCTHTTPRequest) async throws -> Void,
        afterResponse: (XCTHTTPResponse) async throws -> Void
    ) async throws {
        var allHeaders = (session ?? self.session).headers
        for (name, value) in headers { allHeaders.replaceOrAdd(name: name, value: value) }
        try await app.test(method, path, headers: allHeaders, file: file, line: line,
                           beforeRequest: beforeRequest, afterResponse: afterResponse)
    }

    override func tearDown() async throws {
        try await app.asyncShutdown()
        app = nil
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    /// The value of `Location` after a redirect.
    func location(_ response: XCTHTTPResponse) -> String? {
        response.headers.first(name: .location)
    }

    /// Creates a snippet through the form and returns its id.
    @discardableResult
    func createSnippet(_ form: SnippetUpload, file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        var id = ""
        try await send(.POST, "\(basePath)/snippets", beforeRequest: { req async throws in
            try req.content.encode(form, as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther, response.body.string, file: file, line: line)
            id = String(location(response)?.split(separator: "/").last ?? "")
        })
        return id
    }

    /// The text of a page, fetched with GET.
    func page(_ path: String, status: HTTPStatus = .ok, file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        var body = ""
        try await send(.GET, path) { response async throws in
            XCTAssertEqual(response.status, status, file: file, line: line)
            body = response.body.string
        }
        return body
    }

    /// Checks that a page shows (or does not show) a text.
    func expectPage(_ path: String, shows text: String, _ message: String = "",
                    file: StaticString = #filePath, line: UInt = #line) async throws {
        let body = try await page(path, file: file, line: line)
        XCTAssertTrue(body.contains(text), message.isEmpty ? "\(path) does not show \(text)" : message, file: file, line: line)
    }

    func expectPage(_ path: String, hides text: String, _ message: String = "",
                    file: StaticString = #filePath, line: UInt = #line) async throws {
        let body = try await page(path, file: file, line: line)
        XCTAssertFalse(body.contains(text), message.isEmpty ? "\(path) shows \(text)" : message, file: file, line: line)
    }

    /// Checks an awaited status (XCTest's assertions cannot await).
    func expectStatus(_ expected: HTTPStatus, _ actual: HTTPStatus, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(actual, expected, file: file, line: line)
    }

    /// The library of an account (the logged-in `tester` by default).
    func library(of username: String = "tester") throws -> ModelContainer {
        guard let account = app.accounts.account(username: username) else { throw Abort(.notFound) }
        return try app.libraries.store(for: account).container
    }

    /// Reads the logged-in account's library directly, as the app sees it.
    func withContext<T>(_ body: (ModelContext) throws -> T) throws -> T {
        try body(ModelContext(try library()))
    }
}

/// A browser's session: its cookie and the CSRF token its pages carry.
struct TestSession {
    var cookie = ""
    var csrf = ""

    init(cookie: String = "", csrf: String = "") {
        self.cookie = cookie
        self.csrf = csrf
    }

    /// The session a page started: the cookie it set and the token its form carries.
    init(startedBy response: XCTHTTPResponse) {
        cookie = response.headers.setCookie?["snippetbox-session"]?.string ?? ""
        csrf = Self.csrfToken(in: response.body.string) ?? ""
    }

    var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        if !cookie.isEmpty { headers.add(name: .cookie, value: "snippetbox-session=\(cookie)") }
        if !csrf.isEmpty { headers.add(name: "X-CSRF-Token", value: csrf) }
        return headers
    }

    /// The token in a page's hidden `csrf` input.
    static func csrfToken(in html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        let rest = html[range.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
}

/// The snippet form as a browser posts it.
struct SnippetUpload: Content {
    var title: String
    var language: String = "swift"
    var folder: String = ""
    var newFolder: String = ""
    var tags: [String] = []
    var newTags: String = ""
    var code: String = ""
    var notes: String = ""
    var image: File?
    var removeImage: String?
    var isFavorite: String?
}

/// A valid 1×1 PNG.
let tinyPNG = Data([
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
    0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x60, 0x60, 0x60, 0xF8,
    0x0F, 0x00, 0x01, 0x04, 0x01, 0x00, 0x5F, 0x3C, 0xE5, 0x9B, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
    0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
])

/// A value handed from a thread a test starts to the test's own.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func get() -> Value { lock.withLock { value } }
}
