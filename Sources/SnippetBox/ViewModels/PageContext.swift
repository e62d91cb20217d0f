import Foundation
import Vapor

/// What every page's layout shows: the title, the sidebar, the account menu and a flash message,
/// around the page's own content.
struct PageContext<Content: Encodable & Sendable>: Encodable, Sendable {
    let title: String
    /// The path prefix of every link (`BASE_PATH`), empty when served at the root.
    let base: String
    let flash: String?
    let sidebar: Sidebar
    let content: Content
    /// The session's anti-forgery token, put in every form that changes data.
    let csrf: String
    let account: AccountBadge?

    init(_ req: Request, title: String, flash: String?, sidebar: Sidebar, content: Content) {
        self.title = title
        self.base = req.settings.basePath
        self.flash = flash
        self.sidebar = sidebar
        self.content = content
        self.csrf = req.csrfToken
        self.account = req.account.map { AccountBadge(username: $0.username, isAdmin: $0.isAdmin) }
    }
}

/// A page outside the library (login, first set-up): no sidebar, no account menu.
struct PlainPageContext<Content: Encodable & Sendable>: Encodable, Sendable {
    let title: String
    let base: String
    let csrf: String
    let content: Content

    init(_ req: Request, title: String, content: Content) {
        self.title = title
        self.base = req.settings.basePath
        self.csrf = req.csrfToken
        self.content = content
    }
}

/// Who is logged in, for the top bar.
struct AccountBadge: Encodable, Sendable {
    let username: String
    let isAdmin: Bool
}

/// The navigation shown on every page, with counts.
struct Sidebar: Encodable, Sendable {
    struct FolderLink: Encodable, Sendable {
        let id: String
        let name: String
        let count: Int
        let isCurrent: Bool
    }

    struct TagLink: Encodable, Sendable {
        let id: String
        let name: String
        let count: Int
        let color: String
        let textColor: String
        let isCurrent: Bool
    }

    let allCount: Int
    let favoritesCount: Int
    let unfiledCount: Int
    let folders: [FolderLink]
    let tags: [TagLink]
    let savedSearches: [SavedSearchLink]
    /// Which entry is selected: "all", "favorites", "unfiled", or none for folder and tag pages.
    let current: String
}

/// A tag as a coloured chip.
struct TagChip: Encodable, Sendable {
    let id: String
    let name: String
    let color: String
    let textColor: String
}

/// A snippet in a list.
struct SnippetRow: Encodable, Sendable {
    let id: String
    let title: String
    /// The title split around the words a search matched (one plain fragment otherwise).
    let titleFragments: [Fragment]
    /// With a search, the excerpt of the code or notes around the matches.
    let matchFragments: [Fragment]
    let language: String
    let folder: String?
    let tags: [TagChip]
    let updated: String
    let isFavorite: Bool
    let isSelected: Bool
    let excerpt: String
}

/// One page of the list, with the snippet shown beside it, if any.
struct SnippetListPage: Encodable, Sendable {
    let heading: String
    /// The query string that keeps the current filter, for links from the list (starts with "?" or is empty).
    let filterQuery: String
    let rows: [SnippetRow]
    let selected: SnippetDetail?
    let isStoreEmpty: Bool
    let folderOptions: [Option]
    let form: ListForm
    let pagination: Pagination
    let isSearch: Bool
}

/// A snippet in full.
struct SnippetDetail: Encodable, Sendable {
    let id: String
    let title: String
    let language: String
    let languageName: String
    let folder: String?
    let folderID: String?
    let tags: [TagChip]
    let created: String
    let updated: String
    let createdISO: String
    let updatedISO: String
    /// The highlighted code, one escaped HTML string per line.
    let lines: [String]
    let lineCount: Int
    /// The code as text, for the copy button.
    let code: String
    /// Notes rendered from Markdown and sanitized; empty when there are none.
    let notesHTML: String
    let hasImage: Bool
    let imageVersion: String
    let isFavorite: Bool
    let downloadName: String
}

/// An entry of a `<select>`.
struct Option: Encodable, Sendable {
    let value: String
    let label: String
    let isSelected: Bool
}

/// A tag checkbox on the snippet form.
struct TagOption: Encodable, Sendable {
    let id: String
    let name: String
    let color: String
    let isChecked: Bool
}
