import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// Accounts against a determined visitor: guessing passwords side by side or through the account
/// page, passwords bcrypt would cut short, sessions around a password change, names that look like
/// others, and removing an account whatever its name holds.
final class AccountHardeningTests: AppTestCase {
    private func changePassword(current: String, to new: String, as session: TestSession? = nil) async throws -> (HTTPStatus, String) {
        var result: (HTTPStatus, String) = (.ok, "")
        try await send(.POST, "/account/password", as: session, beforeRequest: { req async throws in
            try req.content.encode(["current": current, "password": new, "confirmation": new], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            result = (response.status, response.body.string)
        })
        return result
    }

    /// The account page's "current password" could be guessed without limit by anyone holding a
    /// session (a browser left open).
    func testTheCurrentPasswordIsGuessedUnderTheLoginsLimits() async throws {
        for guess in 1...5 {
            let (status, body) = try await changePassword(current: "guess number \(guess)", to: "a new password")
            expectStatus(.unprocessableEntity, status)
            XCTAssertTrue(body.contains("That is not your current password."))
        }
        let (status, body) = try await changePassword(current: Self.password, to: "a new password")
        expectStatus(.tooManyRequests, status)
        XCTAssertTrue(body.contains("Too many failed attempts"), body)
    }

    /// Attempts let through side by side count against each other: checking the count first and
    /// recording a failure after the password check let every one of them through. Those that would
    /// pass the limit with the ones in flight wait, since those may yet succeed.
    func testAttemptsMadeAtOnceCountAgainstEachOther() {
        let throttle = LoginThrottle(failuresPerAddress: 20, failuresPerAccount: 5)
        var admitted: [LoginThrottle.Attempt] = []
        var waiting = 0
        for index in 0..<30 {
            // All asked before any result is known, as requests in flight are.
            switch throttle.admit(account: "target", address: "10.0.0.\(index % 2)") {
            case .allowed(let attempt): admitted.append(attempt)
            case .busy: waiting += 1
            case .refused: XCTFail("refused with no failure recorded yet")
            }
        }
        XCTAssertEqual(admitted.count, 5, "no more in flight than the limit")
        XCTAssertEqual(waiting, 25)
        // The five fail: the account is refused, not merely busy, for the window.
        for attempt in admitted { throttle.finished(attempt, succeeded: false) }
        guard case .refused(let wait) = throttle.admit(account: "target", address: "10.0.0.9") else {
            return XCTFail("five failures and a sixth attempt was not refused")
        }
        XCTAssertGreaterThan(wait, 14 * 60)

        // Right passwords free the way for those waiting, and are no failures of their address.
        for index in 0..<25 {
            guard case .allowed(let attempt) = throttle.admit(account: "busy \(index % 3)", address: "10.0.0.7") else {
                return XCTFail("refused at \(index)")
            }
            throttle.finished(attempt, succeeded: true)
        }
        guard case .allowed = throttle.admit(account: "someone", address: "10.0.0.7") else {
            return XCTFail("successful logins counted as the address's failures")
        }
    }

    /// Clients logging in to one account at once all get in: attempts beyond the limit in flight
    /// wait for those ahead rather than being refused as failures.
    func testManyRightLoginsAtOnceAllGetIn() async throws {
        let app: Application = try XCTUnwrap(self.app)
        let password = Self.password
        let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    var anonymous = TestSession()
                    try await app.test(.GET, "/login") { response async throws in anonymous = TestSession(startedBy: response) }
                    var status = HTTPStatus.ok
                    try await app.test(.POST, "/login", headers: anonymous.headers, beforeRequest: { req async throws in
                        try req.content.encode(["username": "tester", "password": password, "csrf": anonymous.csrf], as: .urlEncodedForm)
                    }, afterResponse: { response async throws in status = response.status })
                    return status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(statuses.filter { $0 == .seeOther }.count, 16, "\(statuses)")
    }

    /// bcrypt reads a password up to its first NUL: "pass\0word" was "pass", and "pass\0XXXXXXXX"
    /// logged in.
    func testAPasswordWithANULIsRefusedAndNeverMatches() async throws {
        let (status, body) = try await changePassword(current: Self.password, to: "pass\u{0}word-secret")
        expectStatus(.unprocessableEntity, status)
        XCTAssertTrue(body.contains("control characters such as NUL"), body)
        var anonymous = TestSession()
        try await send(.GET, "/login", as: anonymous) { anonymous = TestSession(startedBy: $0) }
        try await send(.POST, "/login", as: anonymous, beforeRequest: { req async throws in
            try req.content.encode(["username": "tester", "password": Self.password + "\u{0}and more"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .unauthorized)
        })
    }

    /// A session that logged in during the second of a password change outlived it: both times
    /// were kept in whole seconds, rounded up.
    func testASessionFromJustBeforeAPasswordChangeEndsWithIt() async throws {
        let justBefore = try await logIn("tester")
        let (status, _) = try await changePassword(current: Self.password, to: "a new password")
        expectStatus(.seeOther, status)
        try await send(.GET, "/snippets", as: justBefore) { response async throws in
            XCTAssertEqual(response.status, .seeOther, "the session from before the change is over")
        }
        let after = try await logIn("tester", password: "a new password")
        try await send(.GET, "/snippets", as: after) { response async throws in
            XCTAssertEqual(response.status, .ok)
        }
    }

    /// Signed-in pages were cacheable: after logging out, Back showed them from the browser's cache.
    func testSignedInPagesAreNotKeptInCaches() async throws {
        try await createSnippet(SnippetUpload(title: "Private", image: File(data: ByteBuffer(data: tinyPNG), filename: "a.png")))
        let id = try withContext { try XCTUnwrap($0.fetch(FetchDescriptor<Snippet>()).first).uuid.uuidString }
        for path in ["/snippets", "/snippets/\(id)", "/snippets/\(id)/edit", "/account", "/trash", "/snippets/\(id)/raw"] {
            try await send(.GET, path) { response async throws in
                XCTAssertEqual(response.headers.first(name: .cacheControl), "no-store", path)
            }
        }
        try await send(.GET, "/snippets/\(id)/image") { response async throws in
            XCTAssertEqual(response.headers.first(name: .cacheControl), "private, max-age=86400", "an image keeps its own")
        }
    }

    /// Names that read as another's were accepted: full-width letters, invisible marks.
    func testLookAlikeUsernamesAreRefused() async throws {
        try await addAccount("bob")
        for name in ["ｂｏｂ", "bob\u{FE0E}", "b\u{34F}ob", "e" + String(repeating: "\u{301}", count: 60)] {
            try await send(.POST, "/users", beforeRequest: { req async throws in
                try req.content.encode(["username": name, "password": "bob's password"], as: .urlEncodedForm)
            }, afterResponse: { response async throws in
                XCTAssertEqual(response.status, .unprocessableEntity, name.debugDescription)
            })
        }
        XCTAssertEqual(app.accounts.all.map(\.username).sorted(), ["bob", "tester"])
    }

    /// An account whose name makes too long a file name (one letter with 300 combining marks, made
    /// before names were counted in scalars) was removed with a 500 that said nothing changed, and
    /// left its library in libraries/, named by no account.
    func testRemovingAnAccountWithAnyNameMovesItsLibraryAside() async throws {
        let name = "e" + String(repeating: "\u{301}", count: 300)
        let account = try await addAccount(name, password: "odd one's password")
        let odd = try await logIn(name, password: "odd one's password")
        try await send(.POST, "/snippets", as: odd, beforeRequest: { req async throws in
            try req.content.encode(SnippetUpload(title: "Odd's"), as: .formData)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        try await send(.POST, "/users/\(account.id.uuidString)/delete") { response async throws in
            XCTAssertEqual(response.status, .seeOther, response.body.string)
        }
        XCTAssertNil(app.accounts.account(id: account.id))
        let removed = try FileManager.default.contentsOfDirectory(atPath: dataDirectory.appendingPathComponent("removed").path)
        XCTAssertEqual(removed.count, 1)
        let folder = try XCTUnwrap(removed.first)
        XCTAssertTrue(folder.contains(account.id.idString), folder)
        let moved = try FileManager.default.contentsOfDirectory(atPath: dataDirectory.appendingPathComponent("removed/\(folder)").path)
        XCTAssertTrue(moved.contains { $0.hasSuffix(".store") }, "\(moved)")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory.appendingPathComponent("libraries").path)) ?? []
        XCTAssertTrue(left.isEmpty, "nothing of it is left in libraries/: \(left)")
    }
}

/// Changes to the accounts sent at the same moment.
final class AccountChangesAtOnceTests: AppTestCase {
    /// Two administrators removing each other at once were both removed; with no account left, the
    /// set-up page then offered the server to anyone.
    func testTwoAdministratorsRemovingEachOtherLeaveOne() async throws {
        for round in 0..<3 {
            let other = try await addAccount("second\(round)", isAdmin: true)
            let otherSession = try await logIn("second\(round)")
            let tester = try XCTUnwrap(app.accounts.account(username: "tester"))
            let app: Application = try XCTUnwrap(self.app)
            let removals = [(session, other.id), (otherSession, tester.id)]
            let statuses = try await withThrowingTaskGroup(of: HTTPStatus.self) { group in
                for (remover, target) in removals {
                    group.addTask {
                        var status = HTTPStatus.ok
                        try await app.test(.POST, "/users/\(target.uuidString)/delete", headers: remover.headers) { response async throws in
                            status = response.status
                        }
                        return status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(statuses.filter { $0 == .seeOther }.count, 1, "round \(round): \(statuses)")
            XCTAssertTrue(app.accounts.all.contains(where: \.isAdmin), "round \(round): no administrator left")
            try await app.test(.GET, "/setup") { response async throws in
                XCTAssertEqual(response.status, .seeOther, "the set-up page reopened")
            }
            // Whoever is left carries on as the administrator of the next round.
            let survivor = try XCTUnwrap(app.accounts.all.first(where: \.isAdmin))
            if survivor.username != "tester" {
                return
            }
        }
    }

    func testARemovalIsCheckedAgainstTheAccountsAsTheyAreThen() async throws {
        let tester = try XCTUnwrap(app.accounts.account(username: "tester"))
        let helper = try await addAccount("helper", isAdmin: false)
        do {
            try await app.accounts.remove(tester.id, by: helper.id) {}
            XCTFail("a removal by an account that is not an administrator went ahead")
        } catch let error as AccountError {
            XCTAssertTrue(error.message.contains("no longer an administrator"), error.message)
        }
        let second = try await addAccount("second", isAdmin: true)
        try await app.accounts.remove(second.id, by: tester.id) {}
        do {
            try await app.accounts.remove(second.id, by: tester.id) {}
            XCTFail("an account removed already was removed again")
        } catch let error as AccountError {
            XCTAssertTrue(error.message.contains("removed meanwhile"), error.message)
        }
        XCTAssertEqual(app.accounts.all.map(\.username), ["helper", "tester"])
    }
}
