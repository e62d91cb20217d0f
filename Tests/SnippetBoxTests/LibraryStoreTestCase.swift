import Foundation
import ObjectGraph
@testable import SnippetBox
import XCTest

/// A library store of the app's own schema in a temporary folder, without the app around it: for
/// tests of the queries the app makes. Subclasses fill it after `super.setUpWithError()`.
class LibraryStoreTestCase: XCTestCase {
    private var folder: URL!
    var container: ModelContainer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("library-\(UUID().uuidString)")
        container = try SnippetStore.openContainer(at: folder.appendingPathComponent("library.store"))
    }

    override func tearDownWithError() throws {
        container = nil
        try? FileManager.default.removeItem(at: folder)
        try super.tearDownWithError()
    }
}
