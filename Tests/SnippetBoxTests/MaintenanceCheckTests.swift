import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif
import ObjectGraph
@testable import SnippetBox
import XCTest

/// `snippetbox check` on data directories that are not all well.
final class MaintenanceCheckTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("check-\(UUID().uuidString)")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// A data directory with two accounts; the first's library holds a snippet, the second's is made
    /// only if `openSecondLibrary`. Returns the second's library file name.
    private func makeDataDirectory(openSecondLibrary: Bool) async throws -> String {
        let accounts = try AccountStore(dataDirectory: folder, threadPool: .singleton)
        let first = try await accounts.create(username: "first", passwordHash: "x", isAdmin: true)
        let second = try await accounts.create(username: "second", passwordHash: "x", isAdmin: false)
        let context = ModelContext(try SnippetStore.openContainer(at: folder.appendingPathComponent(first.libraryFileName)))
        context.insert(Snippet(title: "kept", code: "print(1)"))
        try context.save()
        if openSecondLibrary { _ = try SnippetStore.openContainer(at: folder.appendingPathComponent(second.libraryFileName)) }
        return second.libraryFileName
    }

    private func check() throws -> (healthy: Bool, lines: [String]) {
        var lines: [String] = []
        let healthy = try Maintenance.check(AppSettings(dataDirectory: folder)) { lines.append($0) }
        return (healthy, lines)
    }

    /// An upgrade run in place: the new binary's `check`, `backup` or `seed` (by hand, or from cron)
    /// beside the earlier version's server still running. They converted the stores under it: that
    /// server then read every date 31 years early, its next purge emptied the trash, and what it saved
    /// went into the converted store in its own form (found in the upgrade hunt).
    func testNoCommandBesideAServerOfAnEarlierVersionChangesItsStores() async throws {
        _ = try await makeDataDirectory(openSecondLibrary: false)
        let library = folder.appendingPathComponent(AppSettings.firstLibraryFileName)
        // The library as an earlier version left it: no record of the form of its dates, which are seconds
        // since 1970 (shifted here as that version wrote them).
        let queue = try DatabaseQueue(path: library.path)
        try await queue.write { db in
            try db.execute(sql: "DELETE FROM _objectgraph_metadata WHERE key = 'dates'")
            try db.execute(sql: "UPDATE Snippet SET createdAt = createdAt + 978307200, updatedAt = updatedAt + 978307200")
        }
        try queue.close()
        let written = try Data(contentsOf: library)
        let settings = AppSettings(dataDirectory: folder)

        // The earlier version's server: its claim, with nothing written into the lock file.
        let lockFile = folder.appendingPathComponent(DataDirectoryLock.fileName).path
        let earlierServer = open(lockFile, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        XCTAssertEqual(flock(earlierServer, LOCK_EX | LOCK_NB), 0)
        XCTAssertEqual(DataDirectoryLock.holder(of: folder), .earlierVersion)
        for (command, run) in [("check", { _ = try self.check() }), ("backup", { _ = try Maintenance.backup(settings) })] {
            XCTAssertThrowsError(try run(), command) { error in
                XCTAssertTrue("\(error)".contains("a snippetbox server is using \(folder.path)"), "\(error)")
                XCTAssertTrue("\(error)".contains("(snippetbox.store)"), "\(error)")
                XCTAssertTrue("\(error)".contains("run \(command) again"), "\(error)")
            }
        }
        XCTAssertThrowsError(try Maintenance.refuseUpdatesBesideAServer(settings, command: "seed"))
        XCTAssertEqual(try Data(contentsOf: library), written, "the library was left as the server reads it")
        XCTAssertFalse(FileManager.default.fileExists(atPath: settings.backupDirectory.path))
        close(earlierServer)

        // Beside a server of this version, which has not opened the library yet (its account has not
        // signed in since the upgrade), the check updates it, and its snippet keeps its date.
        let server = try DataDirectoryLock.claim(folder)
        XCTAssertEqual(DataDirectoryLock.holder(of: folder), .current)
        let (healthy, lines) = try check()
        XCTAssertTrue(healthy, "\(lines)")
        let snippet = try XCTUnwrap(try ModelContext(try SnippetStore.openContainer(at: library)).fetch(FetchDescriptor<Snippet>()).first)
        XCTAssertLessThan(abs(snippet.createdAt.timeIntervalSinceNow), 600)
        XCTAssertNoThrow(try Maintenance.backup(settings))
        withExtendedLifetime(server) {}
        XCTAssertEqual(DataDirectoryLock.holder(of: folder), .current, "still held")
    }

    func testADataDirectoryThatDoesNotExistIsAnErrorAndIsNotMade() throws {
        XCTAssertThrowsError(try check()) { error in
            XCTAssertTrue("\(error)".contains("there is no data directory at \(folder.path)"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.path))
    }

    func testAStoreThatCannotBeOpenedIsReportedAndTheOthersAreStillChecked() async throws {
        let second = try await makeDataDirectory(openSecondLibrary: true)
        // Sorted before the first library, so a check that stopped at it would not reach that one.
        XCTAssertLessThan(second, AppSettings.firstLibraryFileName)
        let damaged = folder.appendingPathComponent(second)
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: damaged.path + suffix) }
        try Data(repeating: 0x42, count: 8192).write(to: damaged)

        let (healthy, lines) = try check()
        XCTAssertFalse(healthy)
        XCTAssertTrue(lines.contains("accounts.store: ok"), "\(lines)")
        XCTAssertTrue(lines.contains("\(second): CANNOT BE OPENED"), "\(lines)")
        XCTAssertTrue(lines.contains("snippetbox.store: ok"), "\(lines)")
    }

    func testALibraryNotMadeYetIsSaidSoAndIsNotMade() async throws {
        let second = try await makeDataDirectory(openSecondLibrary: false)
        let (healthy, lines) = try check()
        XCTAssertTrue(healthy, "\(lines)")
        XCTAssertEqual(lines, ["accounts.store: ok", "\(second): not made yet (its account has not signed in)", "snippetbox.store: ok"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.appendingPathComponent(second).path))
    }

    /// An accounts store from a crafted (or hand-edited) backup named `../outside.store` as a library:
    /// restore took it, and the server then read and wrote a store outside the data directory.
    func testALibraryNamedOutsideTheDataDirectoryIsRefused() async throws {
        _ = try await makeDataDirectory(openSecondLibrary: false)
        let accounts = try ModelContainer(
            for: Schema(versionedSchema: AccountSchemaV1.self), configurations: ModelConfiguration(url: folder.appendingPathComponent("accounts.store")))
        let context = ModelContext(accounts)
        try XCTUnwrap(context.fetch(FetchDescriptor<Account>(predicate: #Predicate { $0.username == "second" })).first)
            .libraryFileName = "../outside.store"
        try context.save()

        XCTAssertThrowsError(try AccountStore(dataDirectory: folder, threadPool: .singleton)) { error in
            XCTAssertTrue("\(error)".contains("“../outside.store” as the library of second"), "\(error)")
        }
        let (healthy, lines) = try check()
        XCTAssertFalse(healthy)
        XCTAssertTrue(lines.contains("accounts.store: CANNOT BE OPENED"), "\(lines)")
        XCTAssertFalse(lines.contains { $0.contains("outside") && $0.hasSuffix(": ok") }, "\(lines)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.deletingLastPathComponent().appendingPathComponent("outside.store").path))
        XCTAssertTrue(AccountStore.isLibraryFileName("libraries/\(UUID().uuidString).store"))
        for name in ["accounts.store", "libraries/x.store", "libraries/../../x.store", "/tmp/x.store", "libraries/\(UUID().uuidString).store/.."] {
            XCTAssertFalse(AccountStore.isLibraryFileName(name), name)
        }
    }

    func testALibraryFileNoAccountNamesIsChecked() async throws {
        let second = try await makeDataDirectory(openSecondLibrary: true)
        let stray = "libraries/left-behind.store"
        try FileManager.default.copyItem(at: folder.appendingPathComponent(second), to: folder.appendingPathComponent(stray))
        let (healthy, lines) = try check()
        XCTAssertTrue(healthy, "\(lines)")
        XCTAssertTrue(lines.contains("\(stray): ok"), "\(lines)")
    }

    /// Beside a running server, an image file written for an upload not yet committed (or kept for a
    /// read still under way) is named by no row for a moment: `check` reported it as damage and exited
    /// 1. Alone, the open that `check` makes removes such files first, so they were only ever reported
    /// beside a server. They are now a note, and the check still passes; a missing file still fails it.
    func testAFileNoRowNamesBesideAServerIsANoteNotDamage() async throws {
        _ = try await makeDataDirectory(openSecondLibrary: false)
        let library = folder.appendingPathComponent(AppSettings.firstLibraryFileName)
        // The server's container, open while the check runs.
        let server = try SnippetStore.openContainer(at: library)
        let external = URL(fileURLWithPath: library.path + ".external")
        try FileManager.default.createDirectory(at: external, withIntermediateDirectories: true)
        let upload = external.appendingPathComponent(UUID().uuidString)
        try Data(count: 200_000).write(to: upload)

        let (healthy, lines) = try check()
        XCTAssertTrue(healthy, "\(lines)")
        XCTAssertTrue(lines.contains("\(AppSettings.firstLibraryFileName): ok"), "\(lines)")
        XCTAssertTrue(lines.contains { $0.contains("1 image file no row names yet") }, "\(lines)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: upload.path), "the check removes nothing beside a server")

        let context = ModelContext(server)
        let snippet = try XCTUnwrap(try context.fetch(FetchDescriptor<Snippet>()).first)
        snippet.imageData = Data(count: 300_000)
        snippet.imageContentType = "image/png"
        try context.save()
        let named = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: external.path)
            .first { !$0.hasPrefix(".") && $0 != upload.lastPathComponent })
        try FileManager.default.removeItem(at: external.appendingPathComponent(named))
        let (healthyWithoutIt, linesWithoutIt) = try check()
        XCTAssertFalse(healthyWithoutIt, "a missing image is damage: \(linesWithoutIt)")
        XCTAssertTrue(linesWithoutIt.contains("\(AppSettings.firstLibraryFileName): PROBLEMS"), "\(linesWithoutIt)")
    }
}
