import Foundation
import NIOConcurrencyHelpers

/// Limits failed logins, per account name and per client address, over a sliding window: enough
/// for a person who mistypes, far too few for guessing.
final class LoginThrottle: Sendable {
    let window: TimeInterval
    let failuresPerAccount: Int
    let failuresPerAddress: Int
    private let failures = NIOLockedValueBox<[String: [Date]]>([:])

    init(window: TimeInterval = 15 * 60, failuresPerAccount: Int = 5, failuresPerAddress: Int = 20) {
        self.window = window
        self.failuresPerAccount = failuresPerAccount
        self.failuresPerAddress = failuresPerAddress
    }

    /// How long to wait before trying again, or nil when a try is allowed now.
    func waitTime(account: String, address: String, now: Date = .now) -> TimeInterval? {
        failures.withLockedValue { table in
            let checks = [("account:" + account, failuresPerAccount), ("address:" + address, failuresPerAddress)]
            var wait: TimeInterval?
            for (key, limit) in checks {
                let recent = (table[key] ?? []).filter { now.timeIntervalSince($0) < window }
                table[key] = recent.isEmpty ? nil : recent
                if recent.count >= limit, let oldest = recent.first {
                    wait = max(wait ?? 0, window - now.timeIntervalSince(oldest))
                }
            }
            return wait
        }
    }

    func recordFailure(account: String, address: String, now: Date = .now) {
        failures.withLockedValue { table in
            table["account:" + account, default: []].append(now)
            table["address:" + address, default: []].append(now)
        }
    }

    /// A successful login clears the account's count (not the address's).
    func recordSuccess(account: String) {
        _ = failures.withLockedValue { $0.removeValue(forKey: "account:" + account) }
    }
}
