import Foundation
import NIOConcurrencyHelpers

/// Limits failed password checks, per account name and per client address, over a sliding window:
/// enough for a person who mistypes, far too few for guessing.
///
/// An attempt counts as a failure from the moment it is let through (`admit`) until it is known to
/// have succeeded (`succeeded`). Checking the count first and recording a failure only after the
/// password check (a bcrypt hash, tens of milliseconds) let attempts sent side by side all pass the
/// check before any was recorded: 30 guesses got through limits of 5 and 20.
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

    /// One attempt let through, counted as a failure until `succeeded` says otherwise.
    struct Attempt: Sendable {
        fileprivate let accountKey: String
        fileprivate let addressKey: String
        fileprivate let time: Date
    }

    enum Admission: Sendable {
        case allowed(Attempt)
        /// How long to wait before trying again.
        case refused(wait: TimeInterval)
    }

    /// Lets an attempt through, counting it, or says how long to wait: in one step, so that
    /// attempts made at the same moment are counted against each other.
    func admit(account: String, address: String, now: Date = .now) -> Admission {
        let accountKey = "account:" + account, addressKey = "address:" + address
        return failures.withLockedValue { table in
            var wait: TimeInterval?
            for (key, limit) in [(accountKey, failuresPerAccount), (addressKey, failuresPerAddress)] {
                let recent = (table[key] ?? []).filter { now.timeIntervalSince($0) < window }
                table[key] = recent.isEmpty ? nil : recent
                if recent.count >= limit, let oldest = recent.first {
                    wait = max(wait ?? 0, window - now.timeIntervalSince(oldest))
                }
            }
            if let wait { return .refused(wait: wait) }
            table[accountKey, default: []].append(now)
            table[addressKey, default: []].append(now)
            return .allowed(Attempt(accountKey: accountKey, addressKey: addressKey, time: now))
        }
    }

    /// The attempt's password was right: the account's failures are forgotten, and the attempt is
    /// no longer one of the address's.
    func succeeded(_ attempt: Attempt) {
        failures.withLockedValue { table in
            table.removeValue(forKey: attempt.accountKey)
            if var times = table[attempt.addressKey], let index = times.firstIndex(of: attempt.time) {
                times.remove(at: index)
                table[attempt.addressKey] = times.isEmpty ? nil : times
            }
        }
    }
}
