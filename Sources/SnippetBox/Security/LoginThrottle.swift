import Foundation
import NIOConcurrencyHelpers

/// Limits failed password checks, per account name and per client address, over a sliding window:
/// enough for a person who mistypes, far too few for guessing.
///
/// Attempts in flight count against the limit until their outcome is known (`finished`): checking
/// the count first and recording a failure only after the password check (a bcrypt hash, tens of
/// milliseconds) let attempts sent side by side all pass the check before any was recorded, and 30
/// guesses got through limits of 5 and 20. An attempt that would take the failures and the attempts
/// in flight past the limit is told to wait (`busy`) rather than refused, since those in flight may
/// yet succeed: sixteen clients logging in to one account at once all get in, one batch after another.
final class LoginThrottle: Sendable {
    let window: TimeInterval
    let failuresPerAccount: Int
    let failuresPerAddress: Int
    private struct Counts {
        var failures: [String: [Date]] = [:]
        var inFlight: [String: Int] = [:]
    }
    private let counts = NIOLockedValueBox(Counts())

    init(window: TimeInterval = 15 * 60, failuresPerAccount: Int = 5, failuresPerAddress: Int = 20) {
        self.window = window
        self.failuresPerAccount = failuresPerAccount
        self.failuresPerAddress = failuresPerAddress
    }

    /// One attempt let through, in flight until `finished`.
    struct Attempt: Sendable {
        fileprivate let accountKey: String
        fileprivate let addressKey: String
    }

    enum Admission: Sendable {
        case allowed(Attempt)
        /// Attempts in flight could still take the count to the limit: ask again in a moment.
        case busy
        /// How long to wait before trying again.
        case refused(wait: TimeInterval)
    }

    /// Lets an attempt through, counting it as in flight, or says to wait: in one step, so that
    /// attempts made at the same moment are counted against each other.
    func admit(account: String, address: String, now: Date = .now) -> Admission {
        let accountKey = "account:" + account, addressKey = "address:" + address
        return counts.withLockedValue { counts in
            var wait: TimeInterval?
            var busy = false
            for (key, limit) in [(accountKey, failuresPerAccount), (addressKey, failuresPerAddress)] {
                let recent = (counts.failures[key] ?? []).filter { now.timeIntervalSince($0) < window }
                counts.failures[key] = recent.isEmpty ? nil : recent
                if recent.count >= limit, let oldest = recent.first {
                    wait = max(wait ?? 0, window - now.timeIntervalSince(oldest))
                } else if recent.count + counts.inFlight[key, default: 0] >= limit {
                    busy = true
                }
            }
            if let wait { return .refused(wait: wait) }
            if busy { return .busy }
            counts.inFlight[accountKey, default: 0] += 1
            counts.inFlight[addressKey, default: 0] += 1
            return .allowed(Attempt(accountKey: accountKey, addressKey: addressKey))
        }
    }

    /// The attempt's outcome: a failure counts against its account and address; a success forgets
    /// the account's failures (not the address's).
    func finished(_ attempt: Attempt, succeeded: Bool, now: Date = .now) {
        counts.withLockedValue { counts in
            for key in [attempt.accountKey, attempt.addressKey] {
                let left = counts.inFlight[key, default: 1] - 1
                counts.inFlight[key] = left > 0 ? left : nil
            }
            if succeeded {
                counts.failures[attempt.accountKey] = nil
            } else {
                counts.failures[attempt.accountKey, default: []].append(now)
                counts.failures[attempt.addressKey, default: []].append(now)
            }
        }
    }

    /// `admit`, waiting while it says `busy` (for attempts in flight to finish), for up to `patience`.
    func admitWhenFree(account: String, address: String, patience: Duration = .seconds(10)) async -> Admission {
        let clock = ContinuousClock()
        let deadline = clock.now + patience
        while true {
            let admission = admit(account: account, address: address)
            guard case .busy = admission, clock.now < deadline else { return admission }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
