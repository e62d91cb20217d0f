import NIOConcurrencyHelpers
import Vapor

/// Rendered HTML of the parts every page repeats unchanged between writes: the sidebar, and the list
/// page's filter form, each rendered by Leaf from its own template (`sidebar.leaf`, `list-form.leaf`).
///
/// Leaf spends a few microseconds on each lookup, condition and loop iteration, and the sidebar's
/// links and the form's 67 choices cost about 2 ms a page at 100,000 snippets, while what they show
/// changes only when the library does (counts) or the selection does. So their HTML is kept, keyed by
/// everything it shows: the view model itself (counts and selection included), the base path and the
/// session's form token. A page after a write has new counts, hence a new key, and renders afresh; no
/// invalidation is needed, and a stale fragment cannot be served.
final class RenderedFragments: Sendable {
    private struct Key: Hashable, @unchecked Sendable {
        let template: String
        let context: AnyHashable
    }

    private let cache = NIOLockedValueBox<[Key: String]>([:])
    /// Enough for many sessions and selections; beyond it the cache starts over.
    private let capacity: Int
    /// Off when templates are reread on every request (RELOAD_TEMPLATES=1), so that an edited template shows.
    private let isEnabled: Bool

    init(capacity: Int = 1_000, isEnabled: Bool = true) {
        self.capacity = capacity
        self.isEnabled = isEnabled
    }

    /// The HTML of `template` rendered with `context`, from the cache or from Leaf.
    func html<Context: Encodable & Hashable & Sendable>(_ template: String, _ context: Context, for req: Request) async throws -> String {
        let key = Key(template: template, context: AnyHashable(context))
        if isEnabled, let cached = cache.withLockedValue({ $0[key] }) { return cached }
        let view = try await req.view.render(template, context)
        let html = String(buffer: view.data)
        if isEnabled {
            cache.withLockedValue { entries in
                if entries.count >= capacity { entries.removeAll() }
                entries[key] = html
            }
        }
        return html
    }

    var count: Int { cache.withLockedValue { $0.count } }
}

/// What `sidebar.leaf` shows.
struct SidebarFragment: Encodable, Hashable, Sendable {
    let base: String
    let csrf: String
    let sidebar: Sidebar
}

/// What `list-form.leaf` shows.
struct ListFormFragment: Encodable, Hashable, Sendable {
    let base: String
    let form: ListForm
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
