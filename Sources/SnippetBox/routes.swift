import Foundation
import ObjectGraph
import Vapor

/// Every route, under the base path. Static files, the login page and the first run's set-up page
/// are public; everything else needs a logged-in account. Every request that changes data needs
/// the session's CSRF token.
func routes(_ app: Application, settings: AppSettings) throws {
    let root: any RoutesBuilder = settings.basePath.isEmpty
        ? app.routes
        : app.routes.grouped(settings.basePath.split(separator: "/").map { PathComponent(stringLiteral: String($0)) })
    root.get("static", "**", use: StaticFiles(publicDirectory: app.directory.publicDirectory).serve)

    let accounts = AccountController(settings: settings)
    // Sessions on pages only: a stylesheet fetched beside a page must not write back a stale copy of
    // the session the page is changing.
    let forms = TextInputMiddleware(maxMultipartBytes: SnippetController.uploadLimit(settings).value)
    let sessionCookieEnding = SessionCookieEnding(
        cookieName: app.sessions.configuration.cookieName, path: settings.basePath.isEmpty ? "/" : settings.basePath,
        isSecure: settings.secureCookies)
    let checked = root.grouped(sessionCookieEnding, app.sessions.middleware, forms, CSRFMiddleware())
    accounts.bootPublic(routes: checked)

    let signedIn = root.grouped(sessionCookieEnding, app.sessions.middleware, RequireAccountMiddleware(basePath: settings.basePath))
    let library = signedIn.grouped(forms, CSRFMiddleware())
    let imports = signedIn.grouped(TextInputMiddleware(maxMultipartBytes: DataController.importLimit.value), CSRFMiddleware())
    library.get { req in req.redirect(to: "\(settings.basePath)/snippets") }
    library.post("examples") { req async throws -> Response in
        let added = try await req.store.write { context -> Bool in
            guard try context.fetchCount(FetchDescriptor<Snippet>()) == 0 else { return false }
            try ExampleSnippets.insert(into: context)
            return true
        }
        // A second click, or the button in another tab, adds nothing: it said it had.
        req.flash(added ? "Added a few example snippets." : "The library is not empty, so no examples were added.")
        return req.redirect(to: "\(settings.basePath)/snippets")
    }
    accounts.bootProtected(routes: library)
    try library.register(collection: SnippetController(settings: settings))
    try library.register(collection: BulkEditController(settings: settings))
    try library.register(collection: FolderController(settings: settings))
    try library.register(collection: TagController(settings: settings))
    try library.register(collection: SavedSearchController(settings: settings))
    try library.register(collection: TrashController(settings: settings))
    DataController(settings: settings).boot(pages: library, imports: imports)
}
