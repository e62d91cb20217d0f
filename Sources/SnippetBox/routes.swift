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
    let checked = root.grouped(app.sessions.middleware, forms, CSRFMiddleware())
    accounts.bootPublic(routes: checked)

    let signedIn = root.grouped(app.sessions.middleware, RequireAccountMiddleware(basePath: settings.basePath))
    let library = signedIn.grouped(forms, CSRFMiddleware())
    let imports = signedIn.grouped(TextInputMiddleware(maxMultipartBytes: DataController.importLimit.value), CSRFMiddleware())
    library.get { req in req.redirect(to: "\(settings.basePath)/snippets") }
    library.post("examples") { req async throws -> Response in
        try await req.store.write { context in
            guard try context.fetchCount(FetchDescriptor<Snippet>()) == 0 else { return }
            try ExampleSnippets.insert(into: context)
        }
        req.flash("Added a few example snippets.")
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
