import Foundation
import ObjectGraph
import Vapor

/// The trash: deleted snippets stay here for 30 days, can be restored, and are purged after that
/// (by the hourly housekeeping, on each visit of the trash page, or on demand).
struct TrashController: RouteCollection {
    let settings: AppSettings

    func boot(routes: any RoutesBuilder) throws {
        let trash = routes.grouped("trash")
        trash.get(use: index)
        trash.post("empty", use: empty)
        trash.post(":id", "restore", use: restore)
        trash.post(":id", "delete", use: deleteForever)
    }

    struct TrashPage: Encodable, Sendable {
        struct Row: Encodable, Sendable {
            let id: String
            let title: String
            let language: String
            let deleted: String
            let daysLeft: Int
        }
        let rows: [Row]
    }

    @Sendable func index(req: Request) async throws -> View {
        let (sidebar, page) = try await req.store.write { context in
            try Self.purgeExpired(in: context)
            let snippets = try context.fetch(FetchDescriptor<Snippet>(
                predicate: #Predicate { $0.deletedAt != nil }, sortBy: [SortDescriptor(\.deletedAt, order: .reverse)]))
            let now = Date.now
            let rows = snippets.map { snippet in
                let deletedAt = snippet.deletedAt ?? now
                let left = Snippet.trashRetention - now.timeIntervalSince(deletedAt)
                return TrashPage.Row(
                    id: snippet.uuid.idString, title: snippet.title, language: snippet.language.displayName,
                    deleted: Formatting.displayDate(deletedAt), daysLeft: Int(min(max(0, (left / 86_400).rounded(.up)), Snippet.trashRetention / 86_400)))
            }
            return (try Presenter(context: context).sidebar(current: ""), TrashPage(rows: rows))
        }
        return try await req.renderPage("trash", PageContext(req, title: "Trash", flash: req.takeFlash(), sidebar: sidebar, content: page))
    }

    @Sendable func restore(req: Request) async throws -> Response {
        let id = try req.modelID(naming: "snippet")
        let title = try await req.store.write { context in
            let snippet = try Lookup.trashedSnippet(id, in: context)
            snippet.deletedAt = nil
            return snippet.title
        }
        req.flash("Restored “\(title)”.")
        return req.redirect(to: "\(settings.basePath)/snippets/\(id.idString)")
    }

    @Sendable func deleteForever(req: Request) async throws -> Response {
        let id = try req.modelID(naming: "snippet")
        let title = try await req.store.write { context in
            let snippet = try Lookup.trashedSnippet(id, in: context)
            context.delete(snippet)
            return snippet.title
        }
        req.flash("Deleted “\(title)” for good.")
        return req.redirect(to: "\(settings.basePath)/trash")
    }

    @Sendable func empty(req: Request) async throws -> Response {
        let count = try await req.store.write { context in
            let trashed = try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.deletedAt != nil }))
            trashed.forEach(context.delete)
            return trashed.count
        }
        req.flash(count == 0 ? "The trash was already empty." : "Deleted \(count) snippet\(count == 1 ? "" : "s") for good.")
        return req.redirect(to: "\(settings.basePath)/trash")
    }

    /// Deletes the snippets that have been in the trash longer than the retention period.
    static func purgeExpired(in context: ModelContext, now: Date = .now) throws {
        let cutoff = now.addingTimeInterval(-Snippet.trashRetention)
        for snippet in try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.deletedAt != nil })) {
            if let deletedAt = snippet.deletedAt, deletedAt < cutoff { context.delete(snippet) }
        }
    }
}
