import Foundation
import Vapor

/// Logging in and out, the first run's set-up page, changing one's password, and the
/// administrator's list of accounts.
struct AccountController {
    let settings: AppSettings
    let throttle = LoginThrottle()

    /// Pages anyone may reach: the set-up page (only while there is no account) and the login page.
    func bootPublic(routes: any RoutesBuilder) {
        routes.get("setup", use: setupForm)
        routes.post("setup", use: setup)
        routes.get("login", use: loginForm)
        routes.post("login", use: logIn)
    }

    func bootProtected(routes: any RoutesBuilder) {
        routes.post("logout", use: logOut)
        routes.get("account", use: accountPage)
        routes.post("account", "password", use: changePassword)
        let admin = routes.grouped(RequireAdminMiddleware()).grouped("users")
        admin.get(use: usersPage)
        admin.post(use: addUser)
        admin.post(":id", "delete", use: removeUser)
    }

    // MARK: First run

    struct SetupPage: Encodable, Sendable {
        var username = "admin"
        var errors: [String: String] = [:]
    }

    struct CredentialsInput: Content {
        var username: String?
        var password: String?
        var confirmation: String?
        var next: String?
        var isAdmin: String?
    }

    @Sendable func setupForm(req: Request) async throws -> Response {
        guard req.application.accounts.isEmpty else { return req.redirect(to: "\(settings.basePath)/login") }
        return try await req.view.render("setup", PlainPageContext(req, title: "Welcome", content: SetupPage()))
            .encodeResponse(for: req)
    }

    @Sendable func setup(req: Request) async throws -> Response {
        guard req.application.accounts.isEmpty else {
            throw Abort(.forbidden, reason: "SnippetBox is already set up; log in instead.")
        }
        let input = try req.content.decode(CredentialsInput.self)
        let username = input.username ?? ""
        let password = input.password ?? ""
        if let problem = AccountStore.problem(username: username, password: password, confirmation: input.confirmation ?? "") {
            let page = SetupPage(username: username, errors: [problem.field: problem.message])
            return try await req.view.render("setup", PlainPageContext(req, title: "Welcome", content: page))
                .encodeResponse(status: .unprocessableEntity, for: req)
        }
        let hash = try await req.password.async.hash(password)
        let account: AccountInfo
        do {
            account = try await req.application.accounts.create(username: username, passwordHash: hash, isAdmin: true, asFirstAccount: true)
        } catch let refusal as AccountError {
            // Another set-up, sent at the same moment, made the first account while this one hashed.
            throw Abort(.forbidden, reason: refusal.message)
        }
        try await req.logIn(account)
        req.flash("Welcome, \(account.username). This is your snippet box.")
        return req.redirect(to: "\(settings.basePath)/snippets")
    }

    // MARK: Login

    struct LoginPage: Encodable, Sendable {
        var username = ""
        var next = ""
        var error: String?
    }

    @Sendable func loginForm(req: Request) async throws -> Response {
        if req.application.accounts.isEmpty { return req.redirect(to: "\(settings.basePath)/setup") }
        if req.sessionAccount() != nil { return req.redirect(to: "\(settings.basePath)/snippets") }
        let next = (try? req.query.get(String.self, at: "next")).flatMap(safeNext) ?? ""
        return try await req.view.render("login", PlainPageContext(req, title: "Log in", content: LoginPage(next: next)))
            .encodeResponse(for: req)
    }

    @Sendable func logIn(req: Request) async throws -> Response {
        let input = try req.content.decode(CredentialsInput.self)
        let username = AccountStore.normalize(input.username ?? "")
        let next = input.next.flatMap(safeNext) ?? ""
        let attempt: LoginThrottle.Attempt
        switch await admitPasswordCheck(of: username, from: req) {
        case .success(let admitted):
            attempt = admitted
        case .failure(let refusal):
            let page = LoginPage(username: username, next: next, error: refusal.message)
            return try await req.view.render("login", PlainPageContext(req, title: "Log in", content: page))
                .encodeResponse(status: .tooManyRequests, for: req)
        }
        let password = input.password ?? ""
        let account = req.application.accounts.account(username: username)
        // Hash even for an unknown name, so that the answer's timing does not tell which names exist.
        let hash = account?.passwordHash ?? Self.unknownAccountHash
        let matches = await Self.verify(password, against: hash, on: req)
        throttle.finished(attempt, succeeded: account != nil && matches)
        guard let account, matches else {
            let page = LoginPage(username: username, next: next, error: "That username and password do not match.")
            return try await req.view.render("login", PlainPageContext(req, title: "Log in", content: page))
                .encodeResponse(status: .unauthorized, for: req)
        }
        try await req.logIn(account)
        return req.redirect(to: next.isEmpty ? "\(settings.basePath)/snippets" : next)
    }

    /// Why a password check was not let through: the message the form shows, with a 429.
    struct PasswordCheckRefusal: Error {
        let message: String
    }

    /// Asks the throttle to let a check of `username`'s password from this request's address through,
    /// waiting a while when too many are in flight (the login and the password change share its limits).
    private func admitPasswordCheck(of username: String, from req: Request) async -> Result<LoginThrottle.Attempt, PasswordCheckRefusal> {
        switch await throttle.admitWhenFree(account: username, address: req.clientAddress(trustingForwardedFor: settings.trustForwardedFor)) {
        case .allowed(let attempt): .success(attempt)
        case .refused(let wait): .failure(PasswordCheckRefusal(message: Self.tooManyAttempts(wait)))
        case .busy: .failure(PasswordCheckRefusal(message: Self.tooManyAtOnce))
        }
    }

    /// Whether `password` is the one `hash` was made from. bcrypt reads a password up to its first NUL
    /// byte and no further than 72 bytes, so a password with a NUL, which no new password may hold, is
    /// never right: "pass\0anything" matched "pass\0word".
    private static func verify(_ password: String, against hash: String, on req: Request) async -> Bool {
        guard AccountStore.passwordBytes.contains(password.utf8.count), !password.utf8.contains(0) else { return false }
        return (try? await req.password.async.verify(password, created: hash)) ?? false
    }

    private static let tooManyAtOnce = "Too many attempts at once for this account. Try again in a minute."

    private static func tooManyAttempts(_ wait: TimeInterval) -> String {
        let minutes = Int((wait / 60).rounded(.up))
        return "Too many failed attempts. Try again in \(minutes) minute\(minutes == 1 ? "" : "s")."
    }

    /// A bcrypt hash of a random password nobody knows, checked against when the name is unknown.
    private static let unknownAccountHash = (try? Bcrypt.hash(UUID().idString, cost: 12)) ?? ""

    /// Where to go after logging in: only a path of this site, never another origin. No whitespace
    /// or control character at all: browsers drop tabs and line breaks anywhere in a URL (and spaces
    /// and controls at its ends), so "/\t/evil.example" would take the visitor to another site.
    private func safeNext(_ next: String) -> String? {
        let base = settings.basePath
        guard next.hasPrefix(base + "/"), !next.hasPrefix("//"), !next.contains("\\"),
              !next.contains("://"), next.count <= 2_000,
              !next.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.isControlCharacter })
        else { return nil }
        return next
    }

    @Sendable func logOut(req: Request) async throws -> Response {
        req.logOut()
        return req.redirect(to: "\(settings.basePath)/login")
    }

    // MARK: One's own account

    struct AccountPage: Encodable, Sendable {
        let username: String
        let isAdmin: Bool
        var errors: [String: String] = [:]
    }

    struct PasswordInput: Content {
        var current: String?
        var password: String?
        var confirmation: String?
    }

    @Sendable func accountPage(req: Request) async throws -> View {
        try await renderAccountPage(req, errors: [:])
    }

    private func renderAccountPage(_ req: Request, errors: [String: String]) async throws -> View {
        guard let account = req.account else { throw Abort(.unauthorized) }
        let sidebar = try await req.store.read { try Presenter(context: $0).sidebar(current: "") }
        let page = AccountPage(username: account.username, isAdmin: account.isAdmin, errors: errors)
        return try await req.renderPage("account", PageContext(req, title: "Account", flash: req.takeFlash(), sidebar: sidebar, content: page))
    }

    @Sendable func changePassword(req: Request) async throws -> Response {
        guard let account = req.account else { throw Abort(.unauthorized) }
        let input = try req.content.decode(PasswordInput.self)
        // The current password is checked under the login's limits: a session left open in a browser
        // was a way to guess it without any.
        let attempt: LoginThrottle.Attempt
        switch await admitPasswordCheck(of: account.username, from: req) {
        case .success(let admitted):
            attempt = admitted
        case .failure(let refusal):
            return try await renderAccountPage(req, errors: ["current": refusal.message])
                .encodeResponse(status: .tooManyRequests, for: req)
        }
        let currentMatches = await Self.verify(input.current ?? "", against: account.passwordHash, on: req)
        throttle.finished(attempt, succeeded: currentMatches)
        var errors: [String: String] = [:]
        if !currentMatches {
            errors["current"] = "That is not your current password."
        } else if let problem = AccountStore.problem(username: nil, password: input.password ?? "", confirmation: input.confirmation ?? "") {
            errors[problem.field] = problem.message
        }
        guard errors.isEmpty, let password = input.password else {
            return try await renderAccountPage(req, errors: errors).encodeResponse(status: .unprocessableEntity, for: req)
        }
        let hash = try await req.password.async.hash(password)
        try await req.application.accounts.changePasswordHash(of: account.id, to: hash)
        // Other sessions of this account end; this one starts afresh.
        if let updated = req.application.accounts.account(id: account.id) { try await req.logIn(updated) }
        req.flash("Your password was changed; other sessions were logged out.")
        return req.redirect(to: "\(settings.basePath)/account")
    }

    // MARK: Administration

    struct UsersPage: Encodable, Sendable {
        struct Row: Encodable, Sendable {
            let id: String
            let username: String
            let isAdmin: Bool
            let created: String
            let isYou: Bool
        }
        let rows: [Row]
        var newUsername = ""
        var errors: [String: String] = [:]
    }

    @Sendable func usersPage(req: Request) async throws -> View {
        try await renderUsersPage(req, newUsername: "", errors: [:])
    }

    private func renderUsersPage(_ req: Request, newUsername: String, errors: [String: String]) async throws -> View {
        let you = req.account?.id
        let rows = req.application.accounts.all.map { account in
            UsersPage.Row(id: account.id.idString, username: account.username, isAdmin: account.isAdmin,
                          created: Formatting.displayDate(account.createdAt), isYou: account.id == you)
        }
        let sidebar = try await req.store.read { try Presenter(context: $0).sidebar(current: "") }
        return try await req.renderPage("users", PageContext(
            req, title: "Users", flash: req.takeFlash(), sidebar: sidebar,
            content: UsersPage(rows: rows, newUsername: newUsername, errors: errors)))
    }

    @Sendable func addUser(req: Request) async throws -> Response {
        let input = try req.content.decode(CredentialsInput.self)
        let username = input.username ?? ""
        let password = input.password ?? ""
        var errors: [String: String] = [:]
        if let problem = AccountStore.problem(username: username, password: password, confirmation: nil) {
            errors[problem.field] = problem.message
        } else if req.application.accounts.account(username: username) != nil {
            errors["username"] = "There is already an account named \(Formatting.quoted(AccountStore.normalize(username)))."
        }
        guard errors.isEmpty else {
            return try await renderUsersPage(req, newUsername: username, errors: errors)
                .encodeResponse(status: .unprocessableEntity, for: req)
        }
        let hash = try await req.password.async.hash(password)
        let account = try await req.application.accounts.create(username: username, passwordHash: hash, isAdmin: input.isAdmin == "on" || input.isAdmin == "1")
        req.flash("Added \(account.username).")
        return req.redirect(to: "\(settings.basePath)/users")
    }

    @Sendable func removeUser(req: Request) async throws -> Response {
        let id = try req.modelID(naming: "account")
        guard let account = req.application.accounts.account(id: id) else {
            throw Abort(.notFound, reason: "There is no such account.")
        }
        guard account.id != req.account?.id else {
            throw Abort(.badRequest, reason: "You cannot remove your own account.")
        }
        guard let removerID = req.account?.id else { throw Abort(.unauthorized) }
        // The library first: should moving it fail, the account is still there, as the error page
        // says ("nothing was changed"); removed first, it left a library that no account named.
        let libraries = req.application.libraries
        do {
            try await req.application.accounts.remove(account.id, by: removerID) { try libraries.retire(account) }
        } catch let refusal as AccountError {
            throw Abort(.conflict, reason: refusal.message)
        }
        req.flash("Removed \(account.username); their library was moved to removed/ in the data directory.")
        return req.redirect(to: "\(settings.basePath)/users")
    }
}

private extension Request {
    /// The address the login limits count by: the connection's, or behind a trusted proxy the last
    /// one in `X-Forwarded-For`, which that proxy added (those before it are the client's to write).
    func clientAddress(trustingForwardedFor trusted: Bool) -> String {
        if trusted, let forwarded = headers[canonicalForm: "X-Forwarded-For"].last.map(String.init),
           !forwarded.isEmpty, forwarded.utf8.count <= 64 {
            return forwarded
        }
        return remoteAddress?.ipAddress ?? "unknown"
    }
}
