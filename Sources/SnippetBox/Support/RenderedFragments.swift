import NIOConcurrencyHelpers
import Vapor

/// Rendered HTML of the parts every page repeats unchanged between writes: the sidebar, the list
/// page's filter form and its rows, each rendered by Leaf from its own template (`sidebar.leaf`,
/// `list-form.leaf`, `snippet-rows.leaf`).
///
/// Leaf spends a few microseconds on each lookup, condition and loop iteration: the sidebar's links and
/// the form's 67 choices cost about 2 ms a page at 100,000 snippets, and Leaf was the largest part of a
/// page of 100 rows in `perf`. What they show changes only when the library does (counts, a row's
/// title) or the selection does. So their HTML is kept, keyed by everything it shows: the view model
/// itself (counts, rows and selection included), the base path, the list's query and the session's form
/// token. A page after a write has new counts or rows, hence a new key, and renders afresh; no
/// invalidation is needed, and a stale fragment cannot be served.
final class RenderedFragments: Sendable {
    private struct Key: Hashable, @unchecked Sendable {
        let template: String
        let context: AnyHashable
    }

    private struct Entries {
        var html: [Key: String] = [:]
        var bytes = 0
    }

    private let cache = NIOLockedValueBox(Entries())
    /// Enough for many sessions, selections and list pages; beyond either bound the cache starts over.
    private let capacity: Int
    /// The HTML kept, in UTF-8 bytes: a page of 100 rows is about 40 KB.
    private let maximumBytes: Int
    /// Off when templates are reread on every request (RELOAD_TEMPLATES=1), so that an edited template shows.
    let isEnabled: Bool

    init(capacity: Int = 1_000, maximumBytes: Int = 16 << 20, isEnabled: Bool = true) {
        self.capacity = capacity
        self.maximumBytes = maximumBytes
        self.isEnabled = isEnabled
    }

    /// The HTML of `template` rendered with `context`, from the cache or from Leaf.
    func html<Context: Encodable & Hashable & Sendable>(_ template: String, _ context: Context, for req: Request) async throws -> String {
        let key = Key(template: template, context: AnyHashable(context))
        if isEnabled, let cached = cache.withLockedValue({ $0.html[key] }) { return cached }
        let view = try await req.view.render(template, context)
        let html = String(buffer: view.data)
        if isEnabled {
            let size = html.utf8.count
            cache.withLockedValue { entries in
                if entries.html.count >= capacity || entries.bytes + size > maximumBytes { entries = Entries() }
                if let replaced = entries.html.updateValue(html, forKey: key) { entries.bytes -= replaced.utf8.count }
                entries.bytes += size
            }
        }
        return html
    }

    var count: Int { cache.withLockedValue { $0.html.count } }
    var bytes: Int { cache.withLockedValue { $0.bytes } }
}

// The fragments below hash only what tells one apart from another cheaply (counts, selections, keys
// and lengths), and compare everything (`==` is synthesized): two fragments that differ only in what
// is left out of the hash (a folder renamed) are told apart by comparison. Hashing every name, link
// and excerpt was about 2% of a list page's server time, for a key looked up on every page.

/// What `sidebar.leaf` shows.
struct SidebarFragment: Encodable, Hashable, Sendable {
    let base: String
    let csrf: String
    let sidebar: Sidebar

    func hash(into hasher: inout Hasher) {
        hasher.combine(base)
        hasher.combine(csrf)
        hasher.combine(sidebar.allCount)
        hasher.combine(sidebar.favoritesCount)
        hasher.combine(sidebar.unfiledCount)
        hasher.combine(sidebar.isAllCurrent)
        hasher.combine(sidebar.isFavoritesCurrent)
        hasher.combine(sidebar.isUnfiledCurrent)
        hasher.combine(sidebar.folders.count)
        for folder in sidebar.folders {
            hasher.combine(folder.count)
            hasher.combine(folder.isCurrent)
        }
        hasher.combine(sidebar.tags.count)
        for tag in sidebar.tags {
            hasher.combine(tag.count)
            hasher.combine(tag.isCurrent)
        }
        hasher.combine(sidebar.savedSearches.count)
    }
}

/// What `snippet-rows.leaf` shows: the rows of a list page, with the links that keep its query.
struct SnippetRowsFragment: Encodable, Hashable, Sendable {
    let base: String
    let filterQuery: String
    let rows: [SnippetRow]

    func hash(into hasher: inout Hasher) {
        hasher.combine(base)
        hasher.combine(filterQuery)
        hasher.combine(rows.count)
        for row in rows {
            hasher.combine(row.id)
            hasher.combine(row.title.utf8.count)
            hasher.combine(row.matchHTML.utf8.count)
            hasher.combine(row.tags.count)
            hasher.combine(row.isFavorite)
            hasher.combine(row.isSelected)
        }
    }
}

/// What `list-form.leaf` shows.
struct ListFormFragment: Encodable, Hashable, Sendable {
    let base: String
    let form: ListForm

    func hash(into hasher: inout Hasher) {
        hasher.combine(base)
        hasher.combine(form.text)
        for choices in [form.folders, form.tags, form.languages] {
            hasher.combine(choices.count)
            for choice in choices {
                hasher.combine(choice.count)
                hasher.combine(choice.isSelected)
            }
        }
        for options in [form.tagModes, form.sorts, form.orders, form.pageSizes] {
            hasher.combine(options.firstIndex { $0.isSelected })
        }
        hasher.combine(form.favoritesOnly)
        hasher.combine(form.withImageOnly)
        hasher.combine(form.createdFrom)
        hasher.combine(form.createdTo)
        hasher.combine(form.updatedFrom)
        hasher.combine(form.updatedTo)
    }
}

extension Application {
    private struct RenderedFragmentsKey: StorageKey {
        typealias Value = RenderedFragments
    }

    /// Set by `configure`.
    var renderedFragments: RenderedFragments {
        get { storage[RenderedFragmentsKey.self] ?? RenderedFragments(isEnabled: false) }
        set { storage[RenderedFragmentsKey.self] = newValue }
    }
}

extension Request {
    /// Renders a page of the library: its sidebar first (kept as HTML while it stays the same), then
    /// the page's template around it.
    func renderPage<Content>(_ template: String, _ context: PageContext<Content>) async throws -> View {
        var context = context
        context.sidebarHTML = try await application.renderedFragments.html(
            "sidebar", SidebarFragment(base: context.base, csrf: context.csrf, sidebar: context.sidebar), for: self)
        return try await view.render(template, context)
    }
}
