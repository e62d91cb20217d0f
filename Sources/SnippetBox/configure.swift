import Foundation
import Leaf
import LeafKit
import ObjectGraph
import Vapor

/// Sets SnippetBox up on a Vapor application: its settings, its stores, Leaf views, static files,
/// sessions, security headers, error pages, and routes.
public func configure(_ app: Application, settings: AppSettings) throws {
    app.appSettings = settings
    app.http.server.configuration.hostname = settings.host
    app.http.server.configuration.port = settings.port
    app.routes.defaultMaxBodySize = "1mb"

    // Templates and static files live at the top of the project, not in Vapor's default Resources/.
    app.directory.viewsDirectory = app.directory.workingDirectory + "Views/"
    app.directory.publicDirectory = app.directory.workingDirectory + "Public/"
    // Started from another folder, the server would run and answer every page with a 500 ("No
    // template found"): it refuses to start instead, and says where it looked.
    guard FileManager.default.fileExists(atPath: app.directory.viewsDirectory + "base.leaf") else {
        throw MissingTemplatesError(viewsDirectory: app.directory.viewsDirectory)
    }
    useLeafViews(app)
    // Templates are parsed once and kept (snippetbox runs in production unless told otherwise):
    // reading and parsing them took a sixth of every page. RELOAD_TEMPLATES=1 rereads them while
    // editing, and so does `--env development`, where Leaf's renderer bypasses its cache whatever
    // this says: said here too, so that the templates are not prepared at boot for a cache that keeps
    // none (each was then logged as broken) and the fragments rendered from them are reread as well.
    app.leaf.cache.isEnabled = Environment.get("RELOAD_TEMPLATES") != "1" && app.environment != .development
    app.renderedFragments = RenderedFragments(isEnabled: app.leaf.cache.isEnabled)

    app.passwords.use(.bcrypt(cost: settings.passwordHashCost))
    let sessions = ExpiringMemorySessions(capacity: settings.sessionLimit)
    app.sessions.use { _ in sessions }
    let cookiePath = settings.basePath.isEmpty ? "/" : settings.basePath
    app.sessions.configuration = SessionsConfiguration(cookieName: "snippetbox-session") { id in
        HTTPCookies.Value(string: id.string, path: cookiePath, isSecure: settings.secureCookies, isHTTPOnly: true, sameSite: .lax)
    }

    app.middleware = Middlewares()
    app.middleware.use(SecurityHeadersMiddleware())
    app.middleware.use(RequestLogging(level: .info))
    app.middleware.use(ErrorPageMiddleware(basePath: settings.basePath))
    app.middleware.use(URLLengthLimitMiddleware())

    app.accounts = try AccountStore(dataDirectory: settings.dataDirectory, threadPool: app.threadPool)
    app.libraries = Libraries(dataDirectory: settings.dataDirectory, threadPool: app.threadPool)
    app.lifecycle.use(Housekeeping())
    app.lifecycle.use(TemplatePreparation())
    try routes(app, settings: settings)
}

/// Creates the `admin` account from `ADMIN_PASSWORD` when there is no account yet (a first start
/// without a browser, or a scripted install).
public func createAdminFromSettings(_ app: Application) async throws {
    guard let password = app.appSettings.adminPassword, app.accounts.isEmpty else { return }
    let hash = try await app.password.async.hash(password)
    let account = try await app.accounts.create(username: "admin", passwordHash: hash, isAdmin: true)
    app.logger.notice("Created the account \(account.username) from ADMIN_PASSWORD.")
}

/// The templates are not where SnippetBox looks for them: `Views/` under the working directory.
public struct MissingTemplatesError: Error, CustomStringConvertible {
    public let viewsDirectory: String
    public var description: String {
        "its templates are not in \(viewsDirectory): start snippetbox from the folder that holds Views/ and Public/ "
            + "(the repository's root)"
    }
}

/// Renders views with Leaf (`app.views.use(.leaf)`), with Leaf's configuration and template sources
/// made once.
///
/// Left unset, Leaf makes them again every time it is asked for them, and `req.view` asks twice
/// (for the application's renderer, then the request's): each time a `NIOLeafFiles` standardized
/// the views directory's path twice, about 2% of a list page's server time. These are the values
/// Leaf makes by default.
private func useLeafViews(_ app: Application) {
    let viewsDirectory = app.directory.viewsDirectory
    app.leaf.configuration = LeafConfiguration(rootDirectory: viewsDirectory)
    app.leaf.sources = .singleSource(NIOLeafFiles(
        fileio: app.fileio, limits: .default, sandboxDirectory: viewsDirectory, viewDirectory: viewsDirectory))
    app.views.use(.leaf)
}
