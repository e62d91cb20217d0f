import Foundation
import Leaf
import NIOConcurrencyHelpers
@testable import SnippetBox
import Vapor
import XCTest

final class StartupTests: XCTestCase {
    /// Started outside the repository, the server used to run and answer every page with a 500.
    func testStartingWhereThereAreNoTemplatesIsRefusedAndSaysWhereItLooked() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("snippetbox-startup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let app = try await Application.make(.testing)
        app.directory = DirectoryConfiguration(workingDirectory: folder.path + "/")
        let settings = AppSettings(dataDirectory: folder.appendingPathComponent("data"), passwordHashCost: 4)
        XCTAssertThrowsError(try configure(app, settings: settings)) { error in
            XCTAssertTrue(error is MissingTemplatesError, "\(error)")
            XCTAssertTrue("\(error)".contains(folder.path + "/Views/"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("data").path),
                       "nothing was made before the check")
        try await app.asyncShutdown()
    }

    /// The templates are parsed as the server boots, not by the first page that asks for each, and one
    /// that does not parse is named in the log then; the server starts all the same.
    func testTemplatesAreParsedAtBootAndOneThatDoesNotParseIsLogged() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("snippetbox-startup-\(UUID().uuidString)")
        let views = folder.appendingPathComponent("Views")
        try FileManager.default.createDirectory(at: views.appendingPathComponent("parts"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try "<html>#import(\"body\")</html>".write(to: views.appendingPathComponent("base.leaf"), atomically: true, encoding: .utf8)
        try "#extend(\"base\"):#export(\"body\"):#(title)#endexport#endextend"
            .write(to: views.appendingPathComponent("parts/page.leaf"), atomically: true, encoding: .utf8)
        try "#endif without an if".write(to: views.appendingPathComponent("broken.leaf"), atomically: true, encoding: .utf8)

        let app = try await Application.make(.testing)
        let log = LogMessages()
        app.logger = Logger(label: "test") { _ in log }
        app.directory = DirectoryConfiguration(workingDirectory: folder.path + "/")
        try configure(app, settings: AppSettings(dataDirectory: folder.appendingPathComponent("data"), passwordHashCost: 4))
        XCTAssertEqual(TemplatePreparation.templateNames(in: app.directory.viewsDirectory), ["base", "broken", "parts/page"])
        let loop = app.eventLoopGroup.next()
        for name in ["base", "parts/page"] {
            let cached = try await app.leaf.cache.retrieve(documentName: name, on: loop).get()
            XCTAssertNil(cached, "\(name) is not parsed before the server boots")
        }

        try await app.asyncBoot()
        for name in ["base", "parts/page"] {
            let cached = try await app.leaf.cache.retrieve(documentName: name, on: loop).get()
            XCTAssertNotNil(cached, "\(name) is parsed as the server boots")
        }
        let broken = try await app.leaf.cache.retrieve(documentName: "broken", on: loop).get()
        XCTAssertNil(broken)
        let warnings = log.messages.filter { $0.contains(".leaf") }
        XCTAssertEqual(warnings.count, 1, "\(warnings)")
        XCTAssertTrue(warnings.first?.contains("broken.leaf") ?? false, "\(warnings)")
        let page = try await app.leaf.renderer.render(path: "parts/page", context: ["title": "Hello"]).get()
        XCTAssertEqual(String(buffer: page), "<html>Hello</html>")
        try await app.asyncShutdown()
    }

    /// In development (`--env development`) Leaf's renderer bypasses its cache whatever the cache's
    /// setting says, so preparing the templates found none of them cached and logged every template
    /// as broken: 20 false warnings at each start.
    func testInDevelopmentTheTemplatesAreNotCachedAndNoneIsReportedBroken() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("snippetbox-startup-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let app = try await Application.make(.development)
        let log = LogMessages()
        app.logger = Logger(label: "test") { _ in log }
        try configure(app, settings: AppSettings(dataDirectory: folder, passwordHashCost: 4))
        try await app.asyncBoot()
        XCTAssertEqual(log.messages.filter { $0.contains(".leaf") }, [])
        XCTAssertFalse(app.leaf.cache.isEnabled, "templates are reread in development, as Leaf's renderer does there")
        XCTAssertFalse(app.renderedFragments.isEnabled, "so are the fragments rendered from them")
        try await app.asyncShutdown()
    }
}

final class RequestLoggingTests: XCTestCase {
    /// Vapor's request log wrote the decoded path: `%0A` in a URL broke the line, and a request could
    /// add lines of its own making to the log.
    func testARequestIsLoggedOnOneLine() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("snippetbox-log-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let app = try await Application.make(.testing)
        let log = LogMessages(level: .info)
        app.logger = Logger(label: "test") { _ in log }
        try configure(app, settings: AppSettings(dataDirectory: folder, passwordHashCost: 4))
        try await app.test(.GET, "/static/js/app.js%0A2026-12-01T00:00:00+0000%20error%20forged%00", afterResponse: { _ async in })
        let lines = log.messages.filter { $0.contains("forged") }
        XCTAssertEqual(lines, ["GET /static/js/app.js%0A2026-12-01T00:00:00+0000%20error%20forged%00"])
        XCTAssertEqual(RequestLogging.loggedPath("/a\r\nb"), "/a%0D%0Ab")
        try await app.asyncShutdown()
    }
}

/// Keeps the messages logged at `logLevel` (warning unless told) and above.
private final class LogMessages: LogHandler, @unchecked Sendable {
    private let kept = NIOLockedValueBox<[String]>([])
    var messages: [String] { kept.withLockedValue { $0 } }
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level

    init(level: Logger.Level = .warning) {
        logLevel = level
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        kept.withLockedValue { $0.append(event.message.description) }
    }
}
