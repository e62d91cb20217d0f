import Foundation
import ObjectGraph
import XCTest

/// Errors matched as SwiftData code matches them (`catch SwiftDataError.duplicateConfiguration`, a
/// `switch` over the kinds, `==`), and the configuration errors SwiftData names, thrown where it
/// throws them. Before, only `error.code` could be compared: such code did not compile.
final class SwiftDataErrorTests: StoreTestCase {
    private func openTwice() throws {
        let same = ModelConfiguration(url: storeURL)
        _ = try ModelContainer(for: Note.self, configurations: same, same)
    }

    func testAnErrorIsCaughtByItsKind() throws {
        var caughtBy = "nothing"
        do {
            try openTwice()
        } catch SwiftDataError.loadIssueModelContainer {
            caughtBy = "loadIssueModelContainer"
        } catch SwiftDataError.duplicateConfiguration {
            caughtBy = "duplicateConfiguration"
        } catch {
            caughtBy = "another error: \(error)"
        }
        XCTAssertEqual(caughtBy, "duplicateConfiguration")
    }

    func testAnErrorIsSwitchedOverAndComparedByItsKind() throws {
        do {
            try openTwice()
            XCTFail("two identical configurations were accepted")
        } catch let error as SwiftDataError {
            switch error {
            case .loadIssueModelContainer: XCTFail("matched the wrong kind")
            case .duplicateConfiguration: break
            default: XCTFail("matched no kind: \(error)")
            }
            XCTAssertTrue(error == .duplicateConfiguration)
            XCTAssertFalse(error == .loadIssueModelContainer)
            XCTAssertEqual(error.code, .duplicateConfiguration)
            // The message still says what happened; it is not part of the comparison.
            XCTAssertTrue(error.localizedDescription.contains("twice"), error.localizedDescription)
        }
        let other: any Error = CocoaError(.fileNoSuchFile)
        if case SwiftDataError.duplicateConfiguration = other { XCTFail("an error of another type matched a kind") }
    }

    /// SwiftData refuses a configuration whose name cannot be its store's file name. Here a `/` in the
    /// name put the store in another folder (`../` outside the data folder) without a word.
    func testAConfigurationNameThatCannotNameAFileIsRefused() throws {
        // A configuration made by name stores in `data/` under the working directory: this test's folder.
        let workingDirectory = FileManager.default.currentDirectoryPath
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath(folder.path))
        defer { _ = FileManager.default.changeCurrentDirectoryPath(workingDirectory) }
        for name in ["../outside", "nested/inner", "nul\u{0}byte"] {
            let configuration = ModelConfiguration(name)
            XCTAssertThrowsError(try ModelContainer(for: Note.self, configurations: configuration), name) { error in
                XCTAssertEqual((error as? SwiftDataError)?.code, .configurationFileNameContainsInvalidCharacters, "\(error)")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: configuration.url.path), configuration.url.path)
        }
        let long = ModelConfiguration(String(repeating: "n", count: 210))
        XCTAssertThrowsError(try ModelContainer(for: Note.self, configurations: long)) { error in
            XCTAssertTrue(error as? SwiftDataError == .configurationFileNameTooLong, "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent("outside.store").path))
        // A name of 209 bytes makes a file name of 215, which leaves room for the files beside the store
        // (a store at 249 failed to open its write-ahead log, whose name is 4 bytes longer); a URL
        // given with a name is used as it is, whatever the name.
        let longest = ModelConfiguration(String(repeating: "n", count: 209))
        let container = try ModelContainer(for: Note.self, configurations: longest)
        let context = ModelContext(container)
        context.insert(Note(title: "kept"))
        try context.save()
        XCTAssertTrue(FileManager.default.fileExists(atPath: longest.url.path + "-wal"), longest.url.path)
        let named = ModelConfiguration("a/b", url: storeURL)
        XCTAssertNoThrow(try ModelContainer(for: Note.self, configurations: named))
    }

    func testAConfigurationSchemaWithAnEntityTheContainerLacksIsRefusedByName() throws {
        let configuration = ModelConfiguration(schema: Schema([Label.self]), url: storeURL)
        do {
            _ = try ModelContainer(for: Schema([Note.self]), configurations: configuration)
            XCTFail("a configuration's schema with an entity the container lacks was accepted")
        } catch SwiftDataError.configurationSchemaNotFoundInContainerSchema {
        } catch {
            XCTFail("\(error)")
        }
    }
}
