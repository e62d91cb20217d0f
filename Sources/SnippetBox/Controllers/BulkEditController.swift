import Foundation
import ObjectGraph
import Vapor

/// Changes to many snippets at once: star or unstar them, move them to a folder, add or remove a tag,
/// or put them in the trash. "Select…" on the list opens its current page as a list of checkboxes with
/// the choice of what to do, a plain form that needs no JavaScript; the list page itself is unchanged.
/// (No snippet manager on the web had this: tagging or moving twenty snippets meant twenty edits.)
struct BulkEditController: RouteCollection {
    let settings: AppSettings

    /// More than a page holds (100 at most): a form naming more was not made by this page.
    static let maximumSelection = 200
    /// The most snippets "all in this list" changes at once: one save, under the library's write
    /// lock, that other requests wait for.
    static let maximumWholeList = 5_000

    func boot(routes: any RoutesBuilder) throws {
        routes.get("snippets", "select", use: selectPage)
        routes.post("snippets", "bulk", use: apply)
    }

    /// What to do with the checked snippets: the form's `action` value.
    enum Action: Equatable {
        case favorite, unfavorite, trash
        /// Into a folder, or out of any (nil).
        case move(UUID?)
        case addTag(UUID)
        case removeTag(UUID)

        init?(_ value: String) {
            let parts = value.split(separator: ":", maxSplits: 1).map(String.init)
            switch (parts.first, parts.count == 2 ? parts[1] : nil) {
            case ("favorite", nil): self = .favorite
            case ("unfavorite", nil): self = .unfavorite
            case ("trash", nil): self = .trash
            case ("move", "unfiled"): self = .move(nil)
            case ("move", let id?): guard let id = UUID(uuidString: id) else { return nil }; self = .move(id)
            case ("tag", let id?): guard let id = UUID(uuidString: id) else { return nil }; self = .addTag(id)
            case ("untag", let id?): guard let id = UUID(uuidString: id) else { return nil }; self = .removeTag(id)
            default: return nil
            }
        }
    }

    // MARK: The page

    @Sendable func selectPage(req: Request) async throws -> View {
        let query = ListQuery(query: req.query)
        let (sidebar, page) = try await req.store.read { context in
            let foldersAndTags = try FoldersAndTags(context: context)
            let presenter = Presenter(context: context)
            // A list naming a folder or tag deleted since shows what it still can: the choice is the
            // list page's to explain, and this page only offers its snippets.
            let withoutGone = query.withoutDeletedChoices(in: foldersAndTags)
            let shown = withoutGone?.query ?? query
            let results = try SnippetList(query: shown, context: context, foldersAndTags: foldersAndTags).load()
            let rows = results.snippets.map { presenter.row($0.snippet, selectedID: nil, excerpts: [:]) }
                .map { BulkSelectPage.Row(id: $0.id, title: $0.title, meta: $0.meta) }
            let folders = foldersAndTags.folders.map { Option(value: "move:\($0.uuid.idString)", label: $0.name, isSelected: false) }
            let tags = foldersAndTags.tags.map { (id: $0.uuid.idString, name: $0.name) }
            let total = results.pagination.total
            let page = BulkSelectPage(
                heading: results.heading, filterQuery: shown.queryString(), rows: rows,
                // Not for a list naming a folder or tag that is gone: the page shows a wider list than
                // the one asked for, and "all" of it was not what the user chose.
                total: String(total), offersWholeList: withoutGone == nil && total > rows.count && total <= Self.maximumWholeList,
                wholeListIsTooLong: withoutGone == nil && total > Self.maximumWholeList,
                moveOptions: [Option(value: "move:unfiled", label: "Unfiled", isSelected: false)] + folders,
                addTagOptions: tags.map { Option(value: "tag:\($0.id)", label: $0.name, isSelected: false) },
                removeTagOptions: tags.map { Option(value: "untag:\($0.id)", label: $0.name, isSelected: false) })
            return (try presenter.sidebar(current: shown.sidebarKey, foldersAndTags: foldersAndTags), page)
        }
        return try await req.renderPage("snippet-select", PageContext(
            req, title: "Select snippets", flash: req.takeFlash(), sidebar: sidebar, content: page))
    }

    // MARK: The change

    struct BulkInput: Content {
        var ids: [String]?
        var action: String?
        /// "all": every snippet of the list, not only those checked.
        var scope: String?
    }

    @Sendable func apply(req: Request) async throws -> Response {
        let input = try req.content.decode(BulkInput.self)
        let listQuery = ListQuery(query: req.query).queryString()
        let back = "\(settings.basePath)/snippets\(listQuery)"
        guard let action = Action(input.action ?? "") else {
            throw Abort(.badRequest, reason: "Choose what to do with the checked snippets.")
        }
        if input.scope == "all" {
            let query = ListQuery(query: req.query)
            let outcome = try await req.store.write { context in try Self.applyToWholeList(action, query: query, in: context) }
            req.flash(outcome)
            return req.redirect(to: back)
        }
        let given = input.ids ?? []
        guard given.count <= Self.maximumSelection else {
            throw Abort(.badRequest, reason: "At most \(Self.maximumSelection) snippets can be changed at once.")
        }
        let ids = Array(Set(given.compactMap(UUID.init(uuidString:))))
        guard !ids.isEmpty else {
            req.flash("Check the snippets to change first, then choose what to do with them.")
            return req.redirect(to: "\(settings.basePath)/snippets/select\(listQuery)")
        }
        let outcome = try await req.store.write { context in try Self.apply(action, to: ids, in: context) }
        req.flash(outcome)
        return req.redirect(to: back)
    }

    /// Applies `action` to the snippets of `ids` in the library and out of the trash; returns the
    /// sentence that says what was done. A snippet deleted meanwhile (or an id that was never the
    /// library's) is left out and counted; a folder or tag deleted meanwhile changes nothing.
    static func apply(_ action: Action, to ids: [UUID], in context: ModelContext) throws -> String {
        let snippets = try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { ids.contains($0.uuid) && $0.deletedAt == nil }))
        let missing = ids.count - snippets.count
        let count = Formatting.snippets(snippets.count)
        let done: String
        switch action {
        case .favorite:
            // Starring is not an edit (as on the snippet's page): the edit forms open elsewhere stay current.
            for snippet in snippets { snippet.isFavorite = true }
            done = "Added \(count) to favorites."
        case .unfavorite:
            for snippet in snippets { snippet.isFavorite = false }
            done = "Removed \(count) from favorites."
        case .trash:
            let now = Date.now
            for snippet in snippets { snippet.deletedAt = now }
            done = "Moved \(count) to the trash."
        case .move(let folderID):
            var folder: Folder?
            if let folderID {
                guard let found = try Lookup.folder(folderID, in: context) else { return "That folder was deleted meanwhile, so nothing was moved." }
                folder = found
            }
            // A move is an edit, as on the snippet's page: an edit form opened before sees a new version.
            edit(snippets) { $0.folder = folder }
            done = "Moved \(count) to \(folder.map { Formatting.quoted($0.name) } ?? "Unfiled")."
        case .addTag(let tagID):
            guard let tag = try Lookup.tag(tagID, in: context) else { return "That tag was deleted meanwhile, so nothing was tagged." }
            edit(snippets.filter { !$0.tags.contains(tag) }) { $0.tags.append(tag) }
            done = "Tagged \(count) \(Formatting.quoted(tag.name))."
        case .removeTag(let tagID):
            guard let tag = try Lookup.tag(tagID, in: context) else { return "That tag was deleted meanwhile, so no snippet had it." }
            edit(snippets.filter { $0.tags.contains(tag) }) { snippet in snippet.tags.removeAll { $0 == tag } }
            done = "Removed the tag \(Formatting.quoted(tag.name)) from \(count)."
        }
        guard missing > 0 else { return done }
        return done + " \(missing == 1 ? "1 checked snippet was" : "\(missing) checked snippets were") not in the library (deleted meanwhile?) and left out."
    }

    /// Applies `action` to every snippet of the list `query` names, as it is now (on any page), or
    /// says why not: more than `limit` of them.
    static func applyToWholeList(_ action: Action, query: ListQuery, in context: ModelContext, limit: Int = maximumWholeList) throws -> String {
        let foldersAndTags = try FoldersAndTags(context: context)
        // A list naming a folder or tag that is gone (deleted since the form was shown, or another
        // account's) would be the wider list without it, up to the whole library: nothing changes.
        if query.withoutDeletedChoices(in: foldersAndTags) != nil {
            return "Nothing was changed: a folder or tag this list named is not in your library any more (deleted meanwhile?), "
                + "so the list is not the one you chose."
        }
        let snippets = try SnippetList(query: query, context: context, foldersAndTags: foldersAndTags).allSnippets(limit: limit + 1)
        guard snippets.count <= limit else {
            return "This list holds more than \(limit) snippets, too many to change at once: narrow it, or check snippets page by page. Nothing was changed."
        }
        guard !snippets.isEmpty else { return "This list holds no snippets now, so nothing was changed." }
        return try apply(action, to: snippets.map(\.uuid), in: context)
    }

    /// An edit of each snippet: it gets a new version, and its search keywords (its folder's and tags'
    /// names) follow.
    private static func edit(_ snippets: [Snippet], _ change: (Snippet) -> Void) {
        let now = Date.now
        for snippet in snippets {
            change(snippet)
            snippet.updatedAt = now
            snippet.refreshSearchKeywords()
        }
    }
}
