import Foundation
@testable import ObjectGraph
import XCTest

/// `ModelContainer.readAheadStoreFiles()`: a store that is out of the OS's file cache (after a reboot,
/// or pushed out by other files) is read back into it when asked, in large reads, rather than a page
/// at a time by the queries that need it.
final class ReadAheadTests: StoreTestCase {
    func testReadAheadPutsAStoreThatIsOutOfTheFileCacheBackIntoIt() throws {
        #if os(Linux)
        let container = try makeContainer(Photo.self)
        let context = ModelContext(container)
        for index in 0..<1_000 {
            context.insert(Photo(caption: String(repeating: String(index % 10), count: 8_000)))
        }
        try context.save()
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: storeURL.path)[.size] as? Int)
        XCTAssertGreaterThan(size, 1 << 20, "the rows reached the database file, not only its log")

        try FileCache.evict(storeURL.path)
        let evicted = try FileCache.residentShare(of: storeURL.path)
        guard evicted < 0.5 else {
            throw XCTSkip("this file system keeps \(evicted) of a file cached after it was told to drop it: a read ahead cannot be seen")
        }
        XCTAssertTrue(container.readAheadStoreFiles())
        // The kernel may finish the reads after the advice returns.
        var resident = try FileCache.residentShare(of: storeURL.path)
        let deadline = Date.now.addingTimeInterval(5)
        while resident < 0.95, Date.now < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            resident = try FileCache.residentShare(of: storeURL.path)
        }
        XCTAssertGreaterThanOrEqual(resident, 0.95, "cached after the read ahead (\(evicted) before it)")
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Photo>()), 1_000)
        #endif
    }

    /// Reading ahead closed a descriptor of the database file, which drops every POSIX lock the
    /// process holds on it, SQLite's among them: another process then took itself for the store's
    /// last user and deleted the write-ahead log still in use (`snippetbox check` beside the server
    /// lost its saves, or left the store malformed).
    func testReadingAheadKeepsTheLocksThatTellOtherProcessesTheStoreIsInUse() throws {
        #if os(Linux)
        let container = try makeContainer(Photo.self)
        let context = ModelContext(container)
        context.insert(Photo(caption: "before"))
        try context.save()
        let log = storeURL.path + "-wal"
        XCTAssertTrue(FileManager.default.fileExists(atPath: log), "the save is in the write-ahead log")
        XCTAssertTrue(container.readAheadStoreFiles())
        XCTAssertTrue(container.readAheadStoreFiles(), "and again, with the descriptor kept")

        // Another process opens the store and closes it: with this one's locks in place, it is not
        // the last user, and leaves the log alone.
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        shell.arguments = ["sqlite3", storeURL.path, "SELECT count(*) FROM sqlite_master;"]
        shell.standardOutput = FileHandle.nullDevice
        try shell.run()
        shell.waitUntilExit()
        XCTAssertEqual(shell.terminationStatus, 0, "the sqlite3 shell ran (the test command installs it)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: log), "the other process did not take the log away")

        context.insert(Photo(caption: "after"))
        try context.save()
        XCTAssertEqual(try ModelContext(try makeContainer(Photo.self)).fetchCount(FetchDescriptor<Photo>()), 2)
        #endif
    }

    func testAStoreInMemoryHasNoFileToReadAhead() throws {
        let container = try ModelContainer(for: Schema([Photo.self]), configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        XCTAssertFalse(container.readAheadStoreFiles())
    }
}

#if os(Linux)
/// What the OS's file cache holds of a file, and dropping it from there.
private enum FileCache {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Writes out the file's dirty pages (the cache drops only clean ones), then drops them all.
    static func evict(_ path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw Failure(description: "cannot open \(path)") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0, posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED) == 0 else {
            throw Failure(description: "cannot drop \(path) from the file cache")
        }
    }

    /// The share of the file's pages in the file cache (`mincore` of a map of the file).
    static func residentShare(of path: String) throws -> Double {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw Failure(description: "cannot open \(path)") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size > 0 else { throw Failure(description: "cannot read the size of \(path)") }
        let size = Int(status.st_size)
        guard let map = mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0), map != MAP_FAILED else {
            throw Failure(description: "cannot map \(path)")
        }
        defer { munmap(map, size) }
        let pageSize = sysconf(Int32(_SC_PAGESIZE))
        var pages = [UInt8](repeating: 0, count: (size + pageSize - 1) / pageSize)
        guard mincore(map, size, &pages) == 0 else { throw Failure(description: "mincore failed for \(path)") }
        return Double(pages.filter { $0 & 1 != 0 }.count) / Double(pages.count)
    }
}
#endif
