import Foundation
import NIOConcurrencyHelpers
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// Sessions live in memory; visits without a cookie must not pile them up, and logged-in people
/// must keep theirs.
final class SessionTests: AppTestCase {
    override var sessionLimit: Int { 20 }

    func testVisitsWithoutACookieDoNotPileUpSessions() async throws {
        let sessions = try XCTUnwrap(app.sessions.driver as? ExpiringMemorySessions)
        for _ in 0..<60 {
            try await app.test(.GET, "/login") { response async throws in
                XCTAssertEqual(response.status, .ok)
                XCTAssertNotNil(response.headers.setCookie?["snippetbox-session"], "each visit starts a session")
            }
        }
        XCTAssertLessThanOrEqual(sessions.count, 20)
        try await send(.GET, "/snippets") { response async throws in
            XCTAssertEqual(response.status, .ok, "the logged-in session outlived the anonymous ones")
        }
    }

    private final class TestClock: Sendable {
        let time = NIOLockedValueBox<TimeInterval>(1_000_000)
        func advance(by seconds: TimeInterval) { time.withLockedValue { $0 += seconds } }
        var now: TimeInterval { time.withLockedValue { $0 } }
    }

    private func loggedIn() -> SessionData { SessionData(initialData: ["account": UUID().uuidString, "csrf": "token"]) }
    private func anonymous() -> SessionData { SessionData(initialData: ["csrf": "token"]) }

    /// A request that read its session before a logout wrote it back afterwards and made it again.
    func testADeletedSessionIsNotMadeAgainByAnUpdate() {
        let sessions = ExpiringMemorySessions(capacity: 100)
        let id = sessions.create(loggedIn())
        let copyOfASlowRequest = sessions.read(id)
        sessions.delete(id)
        sessions.update(id, to: copyOfASlowRequest ?? loggedIn())
        XCTAssertNil(sessions.read(id), "logged out stays logged out")
        XCTAssertEqual(sessions.count, 0)
        // A session still kept is updated as before.
        let kept = sessions.create(anonymous())
        sessions.update(kept, to: loggedIn())
        XCTAssertNotNil(sessions.read(kept)?["account"])
    }

    func testIdleSessionsExpire() {
        let clock = TestClock()
        let sessions = ExpiringMemorySessions(capacity: 100, clock: { clock.now })
        let visitor = sessions.create(anonymous())
        let member = sessions.create(loggedIn())
        clock.advance(by: 3_000)
        XCTAssertNotNil(sessions.read(visitor), "used within the hour")
        clock.advance(by: 3_601)
        XCTAssertNil(sessions.read(visitor), "an anonymous session is forgotten after an idle hour")
        XCTAssertNotNil(sessions.read(member))
        clock.advance(by: 29 * 86_400)
        XCTAssertNotNil(sessions.read(member), "each use starts its 30 days again")
        clock.advance(by: 30 * 86_400 + 1)
        XCTAssertNil(sessions.read(member), "a logged-in session is forgotten after 30 idle days")
        XCTAssertEqual(sessions.count, 0)
    }

    func testPastTheCapacityAnonymousSessionsGoFirstThenTheLongestUnused() {
        let clock = TestClock()
        let sessions = ExpiringMemorySessions(capacity: 10, clock: { clock.now })
        let members = (0..<5).map { _ in
            clock.advance(by: 1)
            return sessions.create(loggedIn())
        }
        for _ in 0..<50 {
            clock.advance(by: 1)
            _ = sessions.create(anonymous())
        }
        XCTAssertLessThanOrEqual(sessions.count, 10)
        XCTAssertTrue(members.allSatisfy { sessions.read($0) != nil }, "logged-in sessions stay while anonymous ones can go")

        let newest = (0..<12).map { _ in
            clock.advance(by: 1)
            return sessions.create(loggedIn())
        }
        XCTAssertLessThanOrEqual(sessions.count, 10)
        XCTAssertNotNil(sessions.read(newest[11]))
        XCTAssertNil(sessions.read(members[0]), "then the longest unused go")

        sessions.update(newest[11], to: anonymous())
        XCTAssertEqual(sessions.read(newest[11])?["account"], nil)
        sessions.delete(newest[11])
        XCTAssertNil(sessions.read(newest[11]))
    }
}
