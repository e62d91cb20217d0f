import Foundation
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
}
