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
        /// For emptying: which snippets the question counted (`contentsDigest`).
        let asked: String?
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
        req.flash("Restored \(Formatting.quoted(title)).")
        return req.redirect(to: "\(settings.basePath)/snippets/\(id.idString)")
    }

    @Sendable func confirmDeleteForever(req: Request) async throws -> View {
        let id = try req.modelID(naming: "snippet")
        let (sidebar, title) = try await req.store.read { context in
            let snippet = try Lookup.trashedSnippet(id, in: context)
            return (try Presenter(context: context).sidebar(current: ""), snippet.title)
        }
        let page = ConfirmPage(
            heading: "Delete \(Formatting.quoted(title)) for good?", explanation: "It cannot be restored afterwards.",
            action: "trash/\(id.idString)/delete", button: "Delete for good", asked: nil)
        return try await req.renderPage("trash-confirm", PageContext(req, title: page.heading, flash: nil, sidebar: sidebar, content: page))
    }

    @Sendable func deleteForever(req: Request) async throws -> Response {
        let id = try req.modelID(naming: "snippet")
        let title = try await req.store.write { context in
            let snippet = try Lookup.trashedSnippet(id, in: context)
            context.delete(snippet)
            return snippet.title
        }
        req.flash("Deleted \(Formatting.quoted(title)) for good.")
        return req.redirect(to: "\(settings.basePath)/trash")
    }

    @Sendable func confirmEmpty(req: Request) async throws -> Response {
        let (sidebar, trashed) = try await req.store.read { context in
            (try Presenter(context: context).sidebar(current: ""), try Self.trashed(in: context).map(\.uuid))
        }
        guard !trashed.isEmpty else {
            req.flash("The trash is empty.")
            return req.redirect(to: "\(settings.basePath)/trash")
        }
        let page = ConfirmPage(
            heading: "Empty the trash?",
            explanation: "\(Formatting.snippets(trashed.count)) in it \(trashed.count == 1 ? "is" : "are") deleted for good; "
                + "\(trashed.count == 1 ? "it" : "they") cannot be restored afterwards.",
            action: "trash/empty", button: "Delete \(Formatting.snippets(trashed.count)) for good",
            asked: Self.contentsDigest(trashed))
        // The flash: asked again because the trash changed.
        return try await req.renderPage("trash-confirm", PageContext(req, title: page.heading, flash: req.takeFlash(), sidebar: sidebar, content: page))
            .encodeResponse(for: req)
    }

    struct EmptyInput: Content {
        var asked: String?
    }

    /// Deletes for good exactly the snippets the question counted. If the trash holds others now
    /// (trashed, restored or imported since), or the form lacks the question's answer, nothing is
    /// deleted and the question is asked again. (A time of deletion would not do: an import keeps a
    /// trashed snippet's old date, so it would be emptied unasked.)
    @Sendable func empty(req: Request) async throws -> Response {
        guard let asked = (try? req.content.decode(EmptyInput.self))?.asked else {
            return req.redirect(to: "\(settings.basePath)/trash/empty")
        }
        let deleted = try await req.store.write { context -> Int? in
            let trashed = try Self.trashed(in: context)
            guard Self.contentsDigest(trashed.map(\.uuid)) == asked else { return nil }
            trashed.forEach(context.delete)
            return trashed.count
        }
        guard let deleted else {
            req.flash("The trash changed since you were asked, so nothing was deleted: look at it again before you empty it.")
            return req.redirect(to: "\(settings.basePath)/trash/empty")
        }
        req.flash("Deleted \(Formatting.snippets(deleted)) for good.")
        return req.redirect(to: "\(settings.basePath)/trash")
    }

    /// Names a set of snippets in a few characters: the same set, in any order, gives the same text.
    static func contentsDigest(_ ids: [UUID]) -> String {
        let listing = ids.map(\.idString).sorted().joined(separator: ",")
        return SHA256.hash(data: Data(listing.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    private static func trashed(in context: ModelContext) throws -> [Snippet] {
        try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.deletedAt != nil }))
    }

    /// Deletes the snippets that have been in the trash longer than the retention period.
    static func purgeExpired(in context: ModelContext, now: Date = .now) throws {
        let cutoff = now.addingTimeInterval(-Snippet.trashRetention)
        for snippet in try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.deletedAt != nil })) {
            if let deletedAt = snippet.deletedAt, deletedAt < cutoff { context.delete(snippet) }
        }
    }
}
