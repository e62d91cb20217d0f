import Foundation
import ObjectGraph
@testable import SnippetBox
import XCTest

/// Libraries open on first use, one store per account, each under its own lock.
final class LibrariesTests: AppTestCase {
    private var slow: AccountInfo!
    private var quick: AccountInfo!

    override func setUp() async throws {
        try await super.setUp()
        slow = try await addAccount("slow")
        quick = try await addAccount("quick")
    }

    /// While one account's library opens (slowly: a migration, or a large library read ahead),
    /// another account's opens and is used. Under one lock for all, it waited.
    func testAnotherAccountsLibraryOpensWhileOneIsOpening() throws {
        let slowFile = try XCTUnwrap(slow).libraryFileName
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let libraries = Libraries(dataDirectory: dataDirectory, threadPool: app.threadPool) { url, threadPool in
            if url.path.hasSuffix("/" + slowFile) {
                entered.signal()
                release.wait()
            }
            return try SnippetStore(url: url, threadPool: threadPool)
        }
        let slowOpened = DispatchSemaphore(value: 0), quickOpened = DispatchSemaphore(value: 0)
        let (slow, quick) = (try XCTUnwrap(slow), try XCTUnwrap(quick))
        // Threads of their own: one waits on purpose, and the dispatch queues' few threads are the
        // stores' too (they read ahead in the background).
        Thread {
            _ = try? libraries.store(for: slow)
            slowOpened.signal()
        }.start()
        guard entered.wait(timeout: .now() + 10) == .success else {
            release.signal()
            return XCTFail("the slow account's library never began to open")
        }
        Thread {
            _ = try? libraries.store(for: quick)
            quickOpened.signal()
        }.start()
        let quickWaited = quickOpened.wait(timeout: .now() + 10) == .timedOut
        release.signal()
        slowOpened.wait()

        if quickWaited { quickOpened.wait() }
        XCTAssertFalse(quickWaited, "the quick account's library waited for the slow one's")
        // Each is opened once and kept.
        XCTAssertTrue(try libraries.store(for: slow) === libraries.store(for: slow))
        XCTAssertFalse(try libraries.store(for: slow) === libraries.store(for: quick))
    }

    /// Two requests of one account that find its library closed open it once.
    func testAnAccountsLibraryOpensOnceWhenAskedForTwiceAtOnce() throws {
        let opened = NSLock()
        nonisolated(unsafe) var openings = 0
        let libraries = Libraries(dataDirectory: dataDirectory, threadPool: app.threadPool) { url, threadPool in
            opened.withLock { openings += 1 }
            Thread.sleep(forTimeInterval: 0.05)
            return try SnippetStore(url: url, threadPool: threadPool)
        }
        let account = try XCTUnwrap(slow)
        let done = DispatchSemaphore(value: 0)
        let stores = NSLock()
        nonisolated(unsafe) var found: [ObjectIdentifier] = []
        for _ in 0..<4 {
            Thread {
                if let store = try? libraries.store(for: account) { stores.withLock { found.append(ObjectIdentifier(store)) } }
                done.signal()
            }.start()
        }
        for _ in 0..<4 { done.wait() }
        XCTAssertEqual(openings, 1)
        XCTAssertEqual(found.count, 4)
        XCTAssertEqual(Set(found).count, 1)
    }

    /// A library that cannot be opened (a failed migration, a disk error) is tried once per request,
    /// on the thread pool, and the page says the server failed. The route tried it again itself, on
    /// its event loop, where a slow failure (a migration giving up) held up every connection of the loop.
    func testALibraryThatCannotBeOpenedIsTriedOncePerRequestAndThePageSaysSo() async throws {
        let opened = NSLock()
        nonisolated(unsafe) var openings = 0
        app.libraries = Libraries(dataDirectory: dataDirectory, threadPool: app.threadPool) { _, _ in
            opened.withLock { openings += 1 }
            throw SwiftDataError(.migrationFailure, "the library's migration gave up")
        }
        try await send(.GET, "/snippets") { response async throws in
            XCTAssertEqual(response.status, .internalServerError)
            XCTAssertTrue(response.body.string.contains("Something went wrong on the server"), response.body.string)
        }
        XCTAssertEqual(opened.withLock { openings }, 1)
        try await send(.GET, "/snippets/new") { response async throws in
            XCTAssertEqual(response.status, .internalServerError)
        }
        XCTAssertEqual(opened.withLock { openings }, 2, "tried again by the next request, once")
    }
}
