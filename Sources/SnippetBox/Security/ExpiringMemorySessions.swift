import Foundation
import NIOConcurrencyHelpers
import Vapor

/// Sessions kept in memory, like Vapor's `.memory` driver, but not forever.
///
/// Vapor's driver keeps every session for the life of the process, and every visit without a cookie
/// makes one (the login form's anti-forgery token lives in it): a client fetching `/login` in a loop
/// grew the server without bound. It also copied its whole table on every write, so each request got
/// slower as sessions piled up. Here a session unused for a while is forgotten (an anonymous one after
/// an hour, a logged-in one after 30 days), and at most `capacity` are kept: past it, the expired go
/// first, then those not logged in, then the longest unused.
final class ExpiringMemorySessions: SessionDriver, Sendable {
    private struct Entry {
        var data: SessionData
        var lastUsed: TimeInterval
        var isLoggedIn: Bool { data["account"] != nil }
    }

    let capacity: Int
    let idleLifetime: TimeInterval
    let anonymousIdleLifetime: TimeInterval
    private let clock: @Sendable () -> TimeInterval
    private let entries = NIOLockedValueBox<[SessionID: Entry]>([:])

    init(capacity: Int = 10_000, idleLifetime: TimeInterval = 30 * 86_400, anonymousIdleLifetime: TimeInterval = 3_600,
         clock: @escaping @Sendable () -> TimeInterval = { Date().timeIntervalSince1970 }) {
        self.capacity = max(1, capacity)
        self.idleLifetime = idleLifetime
        self.anonymousIdleLifetime = anonymousIdleLifetime
        self.clock = clock
    }

    var count: Int { entries.withLockedValue { $0.count } }

    // MARK: The store, without a request (what the tests drive)

    func create(_ data: SessionData) -> SessionID {
        let id = SessionID(string: [UInt8].random(count: 32).base64String())
        let now = clock()
        entries.withLockedValue { entries in
            if entries.count >= capacity { makeRoom(in: &entries, at: now) }
            entries[id] = Entry(data: data, lastUsed: now)
        }
        return id
    }

    func read(_ id: SessionID) -> SessionData? {
        let now = clock()
        return entries.withLockedValue { entries in
            guard let index = entries.index(forKey: id) else { return nil }
            if isExpired(entries.values[index], at: now) {
                entries.remove(at: index)
                return nil
            }
            entries.values[index].lastUsed = now
            return entries.values[index].data
        }
    }

    /// Updates a session that is still kept, and only such a one. Vapor writes a request's copy of its
    /// session back when the request ends: a request that began before a logout wrote the session
    /// back after it and made it again, so the logged-out cookie was signed in once more (fifth bug
    /// hunt). A session deleted, expired or dropped stays gone; its request's answer still names the
    /// id, which now leads nowhere.
    func update(_ id: SessionID, to data: SessionData) {
        let now = clock()
        entries.withLockedValue { entries in
            guard entries[id] != nil else { return }
            entries[id] = Entry(data: data, lastUsed: now)
        }
    }

    func delete(_ id: SessionID) {
        _ = entries.withLockedValue { $0.removeValue(forKey: id) }
    }

    private func isExpired(_ entry: Entry, at now: TimeInterval) -> Bool {
        now - entry.lastUsed > (entry.isLoggedIn ? idleLifetime : anonymousIdleLifetime)
    }

    /// Brings the table down to nine tenths of the capacity, so that the sort runs once per many new
    /// sessions rather than on each.
    private func makeRoom(in entries: inout [SessionID: Entry], at now: TimeInterval) {
        entries = entries.filter { !isExpired($0.value, at: now) }
        let target = capacity * 9 / 10
        guard entries.count > target else { return }
        let leastWanted = entries.sorted { first, second in
            if first.value.isLoggedIn != second.value.isLoggedIn { return !first.value.isLoggedIn }
            return first.value.lastUsed < second.value.lastUsed
        }
        for (id, _) in leastWanted.prefix(entries.count - target) { entries[id] = nil }
    }

    // MARK: SessionDriver

    func createSession(_ data: SessionData, for request: Request) -> EventLoopFuture<SessionID> {
        request.eventLoop.makeSucceededFuture(create(data))
    }

    func readSession(_ sessionID: SessionID, for request: Request) -> EventLoopFuture<SessionData?> {
        request.eventLoop.makeSucceededFuture(read(sessionID))
    }

    func updateSession(_ sessionID: SessionID, to data: SessionData, for request: Request) -> EventLoopFuture<SessionID> {
        update(sessionID, to: data)
        return request.eventLoop.makeSucceededFuture(sessionID)
    }

    func deleteSession(_ sessionID: SessionID, for request: Request) -> EventLoopFuture<Void> {
        delete(sessionID)
        return request.eventLoop.makeSucceededFuture(())
    }
}
