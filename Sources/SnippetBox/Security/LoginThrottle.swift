import Foundation
import NIOConcurrencyHelpers

/// Limits failed password checks over a sliding window: enough for a person who mistypes, far too
/// few for guessing.
///
/// Three counts: an account from one address (5), an address over all accounts (20), and an account
/// from every address (50). Counted by account alone, five wrong passwords from anywhere locked the
/// account, the administrator's included, for everyone, and kept it locked as long as they went on:
/// now one address's failures lock the account for that address only, and a locked account needs
/// guesses from ten addresses or more, while guessing from many addresses still stops at 50.
///
/// Attempts in flight count against the limit until their outcome is known (`finished`): checking
/// the count first and recording a failure only after the password check (a bcrypt hash, tens of
/// milliseconds) let attempts sent side by side all pass the check before any was recorded, and 30
/// guesses got through limits of 5 and 20. An attempt that would take the failures and the attempts
/// in flight past the limit is told to wait (`busy`) rather than refused, since those in flight may
/// yet succeed: sixteen clients logging in to one account at once all get in, one batch after another.
final class LoginThrottle: Sendable {
    let window: TimeInterval
    let failuresPerAccountFromAddress: Int
    let failuresPerAddress: Int
    let failuresPerAccount: Int
    private struct Counts {
        var failures: [String: [Date]] = [:]
        var inFlight: [String: Int] = [:]
        /// When failures no longer counting are next dropped for every key: each key's own are dropped
        /// when it is asked about, but one never asked about again (an address seen once) would stay.
        var nextPrune = Date.distantPast
    }
    private let counts = NIOLockedValueBox(Counts())

    init(window: TimeInterval = 15 * 60, failuresPerAccountFromAddress: Int = 5, failuresPerAddress: Int = 20,
         failuresPerAccount: Int = 50) {
        self.window = window
        self.failuresPerAccountFromAddress = failuresPerAccountFromAddress
        self.failuresPerAddress = failuresPerAddress
        self.failuresPerAccount = failuresPerAccount
    }

    /// One attempt let through, in flight until `finished`.
    struct Attempt: Sendable {
        fileprivate let pairKey: String
        fileprivate let addressKey: String
        fileprivate let accountKey: String
        fileprivate var keys: [String] { [pairKey, addressKey, accountKey] }
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
        // A NUL joins the pair: neither a normalized username nor an address holds one.
        let attempt = Attempt(pairKey: "pair:\(account)\u{0}\(address)", addressKey: "address:" + address, accountKey: "account:" + account)
        let limits = [failuresPerAccountFromAddress, failuresPerAddress, failuresPerAccount]
        return counts.withLockedValue { counts in
            if now >= counts.nextPrune {
                counts.failures = counts.failures.filter { _, dates in dates.last.map { now.timeIntervalSince($0) < window } ?? false }
                counts.nextPrune = now.addingTimeInterval(60)
            }
            var wait: TimeInterval?
            var busy = false
            for (key, limit) in zip(attempt.keys, limits) {
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
            for key in attempt.keys { counts.inFlight[key, default: 0] += 1 }
            return .allowed(attempt)
        }
    }

    /// The attempt's outcome: a failure counts in all three; a success forgets the failures of the
    /// account from that address, which the person has just shown to be theirs (not the address's,
    /// which other accounts share, nor the account's from everywhere, which others' guesses make).
    func finished(_ attempt: Attempt, succeeded: Bool, now: Date = .now) {
        counts.withLockedValue { counts in
            for key in attempt.keys {
                let left = counts.inFlight[key, default: 1] - 1
                counts.inFlight[key] = left > 0 ? left : nil
            }
            if succeeded {
                counts.failures[attempt.pairKey] = nil
            } else {
                for key in attempt.keys { counts.failures[key, default: []].append(now) }
            }
        }
    }

    /// How many accounts, addresses and pairs have failures kept (for tests).
    var keysCounted: Int { counts.withLockedValue { $0.failures.count } }

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
