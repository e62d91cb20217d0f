import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// An app on a store of its own in a temporary folder, driven through HTTP.
class AppTestCase: XCTestCase {
    var app: Application!
    var dataDirectory: URL!
    var settings: AppSettings!

    var basePath: String { "" }
    var maxUploadMegabytes: Int { 1 }

    override func setUp() async throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("snippetbox-tests-\(UUID().uuidString)")
        settings = AppSettings(dataDirectory: dataDirectory, basePath: basePath, maxUploadMegabytes: maxUploadMegabytes)
        app = try await Application.make(.testing)
        try configure(app, settings: settings)
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
        try await app.test(.POST, "\(basePath)/snippets", beforeRequest: { req async throws in
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
        try await app.test(.GET, path) { response async throws in
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

    /// Reads the store directly, as the app sees it.
    func withContext<T>(_ body: (ModelContext) throws -> T) throws -> T {
        try body(ModelContext(app.snippetStore.container))
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
