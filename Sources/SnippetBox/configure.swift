import Foundation
import Leaf
import ObjectGraph
import Vapor

/// Sets SnippetBox up on a Vapor application: its settings, its store, Leaf views, static files,
/// sessions for flash messages, error pages, and routes.
public func configure(_ app: Application, settings: AppSettings) throws {
    app.appSettings = settings
    app.http.server.configuration.hostname = settings.host
    app.http.server.configuration.port = settings.port
    app.routes.defaultMaxBodySize = "1mb"

    // Templates and static files live at the top of the project, not in Vapor's default Resources/.
    app.directory.viewsDirectory = app.directory.workingDirectory + "Views/"
    app.directory.publicDirectory = app.directory.workingDirectory + "Public/"
    app.views.use(.leaf)
    app.leaf.cache.isEnabled = app.environment.isRelease

    app.middleware = Middlewares()
    app.middleware.use(RouteLoggingMiddleware(logLevel: .info))
    app.middleware.use(ErrorPageMiddleware(basePath: settings.basePath))
    app.middleware.use(app.sessions.middleware)
    app.sessions.use(.memory)

    app.snippetStore = try SnippetStore(settings: settings, threadPool: app.threadPool)
    try routes(app, settings: settings)
}
