import Foundation
import Vapor

/// Who is logged in: the session holds the account's id and when it logged in; the account itself
/// comes from `AccountStore`'s memory copy.
extension Request {
    private struct AccountKey: StorageKey {
        typealias Value = AccountInfo
    }

    /// The logged-in account, set by `RequireAccountMiddleware` (nil on public routes).
    var account: AccountInfo? {
        get { storage[AccountKey.self] }
        set { storage[AccountKey.self] = newValue }
    }

    /// The account the session belongs to, if it is still valid: the account exists and its
    /// password has not changed since the session logged in.
    ///
    /// The session keeps the time of the password change its login checked against
    /// (`passwordStamp`) and is valid while that is still the account's. Comparing the login's time
    /// with the change's, both in whole seconds, kept a session that logged in during the second of
    /// a change, or that checked the old password while the change was being saved. (Sessions live in
    /// memory, so none from before the stamp outlives the restart that brought it.)
    func sessionAccount() -> AccountInfo? {
        guard let idText = session.data["account"], let id = UUID(uuidString: idText),
              let account = application.accounts.account(id: id),
              let stamp = session.data["passwordStamp"].flatMap(Double.init) else { return nil }
        // Within half a millisecond: a change moves the time on by at least one
        // (`AccountStore.changePasswordHash`), and a date read back may differ in its last bits.
        return stamp >= account.passwordChangedAt.timeIntervalSince1970 - 0.0005 ? account : nil
    }

    /// Starts a new session for the account (a new id, so that a session id planted before login is
    /// worth nothing afterwards).
    func logIn(_ account: AccountInfo) async throws {
        if let old = session.id {
            try await application.sessions.driver.deleteSession(old, for: self).get()
            session.id = nil
        }
        session.data["csrf"] = nil
        // Made now, once for the whole session: requests in flight side by side then all agree on it.
        _ = csrfToken
        session.data["account"] = account.id.idString
        // `account` is as it was when its password was checked (see `sessionAccount`).
        session.data["passwordStamp"] = String(account.passwordChangedAt.timeIntervalSince1970)
        self.account = account
    }

    func logOut() {
        session.destroy()
        account = nil
    }
}

/// Lets only logged-in people through. Before the first account exists every page leads to the
/// set-up page; afterwards an anonymous GET is sent to the login page (and comes back after), and
/// an anonymous POST is refused.
struct RequireAccountMiddleware: AsyncMiddleware {
    let basePath: String

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        if let account = request.sessionAccount() {
            request.account = account
            request.openedLibrary = await request.application.libraries.openInBackground(for: account)
            let response = try await next.respond(to: request)
            // A signed-in page is kept by no cache: after logging out on a shared computer, Back
            // showed the library from the browser's cache. (An image sets its own, private policy.)
            if !response.headers.contains(name: .cacheControl) {
                response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
            }
            return response
        }
        if request.application.accounts.isEmpty {
            return request.redirect(to: "\(basePath)/setup")
        }
        guard request.method == .GET || request.method == .HEAD else {
            throw Abort(.unauthorized, reason: "Log in first; nothing was changed.")
        }
        let next = request.url.path + (request.url.query.map { "?" + $0 } ?? "")
        return request.redirect(to: "\(basePath)/login?next=\(next.urlQueryEscaped)")
    }
}

/// Pages only an administrator sees.
struct RequireAdminMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard request.account?.isAdmin == true else {
            throw Abort(.forbidden, reason: "Only an administrator can do that.")
        }
        return try await next.respond(to: request)
    }
}
