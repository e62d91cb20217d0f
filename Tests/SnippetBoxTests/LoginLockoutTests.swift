import Foundation
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

/// Logging in with a wrong password, from the address it is sent from.
class LoginAttemptsTestCase: AppTestCase {
    /// A login through the form, from a new anonymous session, with `X-Forwarded-For` if given.
    func attemptLogin(_ username: String, password: String, forwardedFor: String? = nil) async throws -> HTTPStatus {
        var headers = HTTPHeaders()
        if let forwardedFor { headers.add(name: "X-Forwarded-For", value: forwardedFor) }
        var anonymous = TestSession()
        try await app.test(.GET, "/login", headers: headers) { response async throws in anonymous = TestSession(startedBy: response) }
        for (name, value) in anonymous.headers { headers.replaceOrAdd(name: name, value: value) }
        var status = HTTPStatus.ok
        try await app.test(.POST, "/login", headers: headers, beforeRequest: { req async throws in
            try req.content.encode(["username": username, "password": password, "csrf": anonymous.csrf], as: .urlEncodedForm)
        }, afterResponse: { response async throws in status = response.status })
        return status
    }
}

/// Behind a proxy that writes `X-Forwarded-For` (`TRUST_X_FORWARDED_FOR=true`).
final class LoginLockoutBehindAProxyTests: LoginAttemptsTestCase {
    override var trustsForwardedFor: Bool { true }

    /// Five wrong passwords from anywhere locked the account, the administrator's too, for everyone.
    func testAnAddressThatGuessesLocksTheAccountForItselfOnly() async throws {
        for _ in 0..<5 {
            expectStatus(.unauthorized, try await attemptLogin("tester", password: "a wrong guess", forwardedFor: "203.0.113.5"))
        }
        expectStatus(.tooManyRequests, try await attemptLogin("tester", password: Self.password, forwardedFor: "203.0.113.5"))
        expectStatus(.seeOther, try await attemptLogin("tester", password: Self.password, forwardedFor: "198.51.100.7"))
    }

    /// The last address is the one the proxy added; those before it are whatever the client sent.
    func testTheProxysAddressIsTheLastOne() async throws {
        for index in 0..<5 {
            expectStatus(.unauthorized, try await attemptLogin(
                "tester", password: "a wrong guess", forwardedFor: "10.9.9.\(index), 203.0.113.5"))
        }
        expectStatus(.tooManyRequests, try await attemptLogin("tester", password: Self.password, forwardedFor: "10.9.9.77, 203.0.113.5"))
    }
}

/// Without a trusted proxy, `X-Forwarded-For` is the client's to write and counts for nothing.
final class LoginLockoutWithoutAProxyTests: LoginAttemptsTestCase {
    func testAForwardedForHeaderDoesNotGetAroundTheLimit() async throws {
        for index in 0..<5 {
            expectStatus(.unauthorized, try await attemptLogin("tester", password: "a wrong guess", forwardedFor: "203.0.113.\(index)"))
        }
        expectStatus(.tooManyRequests, try await attemptLogin("tester", password: Self.password, forwardedFor: "198.51.100.7"))
    }
}

final class LoginThrottleTests: XCTestCase {
    private func fail(_ throttle: LoginThrottle, account: String, address: String, times: Int = 1) {
        for _ in 0..<times {
            guard case .allowed(let attempt) = throttle.admit(account: account, address: address) else {
                return XCTFail("\(account) from \(address) was not let through")
            }
            throttle.finished(attempt, succeeded: false)
        }
    }

    func testOneAddressLocksAnAccountForItselfOnly() {
        let throttle = LoginThrottle()
        fail(throttle, account: "admin", address: "10.0.0.1", times: 5)
        guard case .refused = throttle.admit(account: "admin", address: "10.0.0.1") else {
            return XCTFail("a sixth guess from the same address was let through")
        }
        guard case .allowed = throttle.admit(account: "admin", address: "10.0.0.2") else {
            return XCTFail("another address was locked out by the first one's guesses")
        }
    }

    func testGuessesFromManyAddressesStopAtTheAccountsLimit() {
        let throttle = LoginThrottle()
        for index in 0..<10 { fail(throttle, account: "admin", address: "10.0.1.\(index)", times: 5) }
        guard case .refused = throttle.admit(account: "admin", address: "10.0.2.1") else {
            return XCTFail("fifty guesses from ten addresses and a new address was let through")
        }
        guard case .allowed = throttle.admit(account: "someone else", address: "10.0.2.1") else {
            return XCTFail("the account's limit locked another account")
        }
    }

    func testOneAddressStopsAtItsLimitOverAllAccounts() {
        let throttle = LoginThrottle()
        for index in 0..<5 { fail(throttle, account: "user \(index)", address: "10.0.3.1", times: 4) }
        guard case .refused = throttle.admit(account: "user 9", address: "10.0.3.1") else {
            return XCTFail("twenty failures from one address and it could go on with another account")
        }
    }

    func testARightPasswordForgetsThatAddresssFailuresForTheAccount() {
        let throttle = LoginThrottle()
        fail(throttle, account: "admin", address: "10.0.4.1", times: 4)
        guard case .allowed(let attempt) = throttle.admit(account: "admin", address: "10.0.4.1") else {
            return XCTFail("the right password was not let through")
        }
        throttle.finished(attempt, succeeded: true)
        fail(throttle, account: "admin", address: "10.0.4.1", times: 4)
        guard case .allowed = throttle.admit(account: "admin", address: "10.0.4.1") else {
            return XCTFail("the failures before the right password still counted")
        }
    }

    func testFailuresThatNoLongerCountAreDropped() {
        let throttle = LoginThrottle(window: 60)
        let start = Date()
        for index in 0..<500 {
            guard case .allowed(let attempt) = throttle.admit(account: "user \(index)", address: "10.1.\(index / 256).\(index % 256)", now: start) else {
                return XCTFail("attempt \(index) was not let through")
            }
            throttle.finished(attempt, succeeded: false, now: start)
        }
        XCTAssertEqual(throttle.keysCounted, 1500, "each address, account and pair")
        _ = throttle.admit(account: "someone", address: "10.2.0.1", now: start.addingTimeInterval(121))
        XCTAssertEqual(throttle.keysCounted, 0, "addresses seen once stayed after their window")
    }
}
