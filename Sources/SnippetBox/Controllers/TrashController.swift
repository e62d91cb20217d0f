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
        // Deleting for good cannot be undone: each asks first, on a page of its own (no script needed).
        trash.get("empty", use: confirmEmpty)
        trash.post("empty", use: empty)
        trash.post(":id", "restore", use: restore)
        trash.get(":id", "delete", use: confirmDeleteForever)
        trash.post(":id", "delete", use: deleteForever)
    }

    /// A question before deleting for good: what goes, and the form that does it.
    struct ConfirmPage: Encodable, Sendable {
        let heading: String
        let explanation: String
        let action: String
        let button: String
        /// For emptying: the newest deletion the page showed (`Formatting.wholeMilliseconds`).
        let through: Int?
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

    @Sendable func confirmDeleteForever(req: Request) async throws -> View {
        let id = try req.modelID(naming: "snippet")
        let (sidebar, title) = try await req.store.read { context in
            let snippet = try Lookup.trashedSnippet(id, in: context)
            return (try Presenter(context: context).sidebar(current: ""), snippet.title)
        }
        let page = ConfirmPage(
            heading: "Delete “\(title)” for good?", explanation: "It cannot be restored afterwards.",
            action: "trash/\(id.idString)/delete", button: "Delete for good", through: nil)
        return try await req.renderPage("trash-confirm", PageContext(req, title: page.heading, flash: nil, sidebar: sidebar, content: page))
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

    @Sendable func confirmEmpty(req: Request) async throws -> Response {
        let (sidebar, trashed) = try await req.store.read { context in
            (try Presenter(context: context).sidebar(current: ""), try Self.trashed(in: context).compactMap(\.deletedAt))
        }
        guard let newest = trashed.max() else {
            req.flash("The trash is empty.")
            return req.redirect(to: "\(settings.basePath)/trash")
        }
        let page = ConfirmPage(
            heading: "Empty the trash?",
            explanation: "\(Self.snippets(trashed.count)) in it \(trashed.count == 1 ? "is" : "are") deleted for good; "
                + "\(trashed.count == 1 ? "it" : "they") cannot be restored afterwards.",
            action: "trash/empty", button: "Delete \(Self.snippets(trashed.count)) for good",
            through: Formatting.wholeMilliseconds(newest))
        return try await req.renderPage("trash-confirm", PageContext(req, title: page.heading, flash: nil, sidebar: sidebar, content: page))
            .encodeResponse(for: req)
    }

    struct EmptyInput: Content {
        var through: Int?
    }

    /// Deletes for good what the confirmation showed: snippets trashed after it was shown stay (the
    /// question was about the others), and a form without the question's answer deletes nothing.
    @Sendable func empty(req: Request) async throws -> Response {
        // Without the answer (no body, or not a number), ask again rather than refuse.
        guard let through = (try? req.content.decode(EmptyInput.self))?.through else {
            return req.redirect(to: "\(settings.basePath)/trash/empty")
        }
        let (deleted, kept) = try await req.store.write { context in
            let trashed = try Self.trashed(in: context)
            let shown = trashed.filter { Formatting.wholeMilliseconds($0.deletedAt ?? .distantFuture) <= through }
            shown.forEach(context.delete)
            return (shown.count, trashed.count - shown.count)
        }
        var message = deleted == 0 ? "Nothing was deleted: the snippets you saw had left the trash." : "Deleted \(Self.snippets(deleted)) for good."
        if kept > 0 {
            message += " \(Self.snippets(kept)) trashed after you opened the question \(kept == 1 ? "is" : "are") still in the trash."
        }
        req.flash(message)
        return req.redirect(to: "\(settings.basePath)/trash")
    }

    private static func trashed(in context: ModelContext) throws -> [Snippet] {
        try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.deletedAt != nil }))
    }

    private static func snippets(_ count: Int) -> String {
        count == 1 ? "1 snippet" : "\(count) snippets"
    }

    /// Deletes the snippets that have been in the trash longer than the retention period.
    static func purgeExpired(in context: ModelContext, now: Date = .now) throws {
        let cutoff = now.addingTimeInterval(-Snippet.trashRetention)
        for snippet in try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.deletedAt != nil })) {
            if let deletedAt = snippet.deletedAt, deletedAt < cutoff { context.delete(snippet) }
        }
    }
}
