import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// Writes to one library sent at the same moment: a star double-clicked, a form sent twice.
final class ConcurrentWritesTests: AppTestCase {
    /// Two writes that each look for a folder and make it if it is missing: side by side, both found
    /// none and both made one, leaving two folders of one name.
    func testWritesOfOneLibraryRunOneAtATime() async throws {
        let store = try app.libraries.store(for: try XCTUnwrap(app.accounts.account(username: "tester")))
        let looked = [DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)]
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<2 {
                group.addTask {
                    try await store.write { context in
                        let missing = try Lookup.folder(named: "Twice", in: context) == nil
                        looked[index].signal()
                        // Let the other write look too, if it can run now; a second is plenty.
                        _ = looked[1 - index].wait(timeout: .now() + 1)
                        if missing { context.insert(Folder(name: "Twice")) }
                    }
                }
            }
            try await group.waitForAll()
        }
        XCTAssertEqual(try withContext { try $0.fetch(FetchDescriptor<Folder>()).map(\.name) }, ["Twice"])
    }

    /// Stars toggled at once each saw the snippet at one version, and all but one failed with a 500.
    func testStarsToggledAtOnceAllSave() async throws {
        let id = try await createSnippet(SnippetUpload(title: "Clicked"))
        let app: Application = try XCTUnwrap(self.app)
        let headers = session.headers
        let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    var status = HTTPStatus.ok
                    try await app.test(.POST, "/snippets/\(id)/favorite", headers: headers) { response async throws in
                        status = response.status
                    }
                    return status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(statuses, Array(repeating: .seeOther, count: 6))
        // Six toggles: back where it started.
        XCTAssertEqual(try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<Snippet>()).first).isFavorite }, false)
    }
}
