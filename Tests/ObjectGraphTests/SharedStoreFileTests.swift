import Foundation
import ObjectGraph
import XCTest

/// Several containers on one store file (an app and its extension, a server and a maintenance
/// command), as SQLite allows: a save meets another's lock and waits for it.
final class SharedStoreFileTests: StoreTestCase {
    /// Each save began with SQLite's default of not waiting for a lock: two containers saving at once
    /// had most of their saves refused with "database is locked" (200 to 300 of 400 in the bug hunt's runs).
    func testTwoContainersSavingAtOnceBothSaveEverything() throws {
        let containers = [try makeContainer(Note.self), try makeContainer(Note.self)]
        let savesEach = 150
        let failures = LockedFailures()
        DispatchQueue.concurrentPerform(iterations: containers.count) { index in
            let context = ModelContext(containers[index])
            for number in 0..<savesEach {
                context.insert(Note(title: "\(index)-\(number)"))
                do {
                    try context.save()
                } catch {
                    failures.append("\(error)")
                    context.rollback()
                }
            }
        }
        XCTAssertEqual(failures.all, [], "\(failures.all.count) saves refused")
        XCTAssertEqual(try ModelContext(containers[0]).fetchCount(FetchDescriptor<Note>()), containers.count * savesEach)
        XCTAssertEqual(try ModelContext(containers[1]).fetchCount(FetchDescriptor<Note>()), containers.count * savesEach)
    }

    /// A container opened while another writes waited for nothing either: its open failed.
    func testAContainerOpensWhileAnotherSaves() throws {
        let writer = try makeContainer(Note.self)
        let stop = LockedFailures()
        let writing = Thread {
            let context = ModelContext(writer)
            var number = 0
            while stop.all.isEmpty {
                context.insert(Note(title: "w\(number)", body: String(repeating: "x", count: 10_000)))
                try? context.save()
                number += 1
            }
        }
        writing.start()
        defer { stop.append("done") }
        for _ in 0..<20 {
            let opened = try makeContainer(Note.self)
            _ = try ModelContext(opened).fetchCount(FetchDescriptor<Note>())
        }
    }
}

/// Errors collected from several threads.
private final class LockedFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []

    func append(_ message: String) { lock.withLock { messages.append(message) } }
    var all: [String] { lock.withLock { messages } }
}
