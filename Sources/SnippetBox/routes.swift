import Foundation
import ObjectGraph
import Vapor

/// Every route, under the base path.
func routes(_ app: Application, settings: AppSettings) throws {
    let root: any RoutesBuilder = settings.basePath.isEmpty
        ? app.routes
        : app.routes.grouped(settings.basePath.split(separator: "/").map { PathComponent(stringLiteral: String($0)) })

    root.get { req in req.redirect(to: "\(settings.basePath)/snippets") }
    root.post("examples") { req async throws -> Response in
        try await req.store.write { context in
            guard try context.fetchCount(FetchDescriptor<Snippet>()) == 0 else { return }
            try ExampleSnippets.insert(into: context)
        }
        req.flash("Added a few example snippets.")
        return req.redirect(to: "\(settings.basePath)/snippets")
    }
    root.get("static", "**", use: StaticFiles(publicDirectory: app.directory.publicDirectory).serve)

    try root.register(collection: SnippetController(settings: settings))
    try root.register(collection: FolderController(settings: settings))
    try root.register(collection: TagController(settings: settings))
    try root.register(collection: SavedSearchController(settings: settings))
}
