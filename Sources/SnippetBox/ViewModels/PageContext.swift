import Foundation
import Vapor

/// What every page's layout shows: the title, the sidebar, the account menu and a flash message,
/// around the page's own content.
struct PageContext<Content: Encodable & Sendable>: Encodable, Sendable {
    let title: String
    /// The path prefix of every link (`BASE_PATH`), empty when served at the root.
    let base: String
    let flash: String?
    /// Rendered by `Request.renderPage` into `sidebarHTML`, which the layout shows; not handed to Leaf again.
    let sidebar: Sidebar
    var sidebarHTML = ""
    let content: Content
    /// The session's anti-forgery token, put in every form that changes data.
    let csrf: String
    let account: AccountBadge?
    /// Whether `account` is set, as a flag for the layout's condition: Leaf tests anything but a flag
    /// through its table of conversions, which it builds again for every test.
    let isLoggedIn: Bool

    private enum CodingKeys: String, CodingKey {
        case title, base, flash, sidebarHTML, content, csrf, account, isLoggedIn
    }

    init(_ req: Request, title: String, flash: String?, sidebar: Sidebar, content: Content) {
        self.title = title
        self.base = req.settings.basePath
        self.flash = flash
        self.sidebar = sidebar
        self.content = content
        self.csrf = req.csrfToken
        self.account = req.account.map { AccountBadge(username: $0.username, isAdmin: $0.isAdmin) }
        self.isLoggedIn = account != nil
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
struct Sidebar: Encodable, Hashable, Sendable {
    struct FolderLink: Encodable, Hashable, Sendable {
        let id: String
        let name: String
        @EncodedAsText var count: Int
        let isCurrent: Bool
    }

    struct TagLink: Encodable, Hashable, Sendable {
        let id: String
        let name: String
        @EncodedAsText var count: Int
        let color: String
        let textColor: String
        let isCurrent: Bool
    }

    @EncodedAsText var allCount: Int
    @EncodedAsText var favoritesCount: Int
    @EncodedAsText var unfiledCount: Int
    let folders: [FolderLink]
    let tags: [TagLink]
    let savedSearches: [SavedSearchLink]
    /// Which of All, Favorites and Unfiled is selected (none on folder and tag pages), as flags: Leaf
    /// compares text through its converter table, which it rebuilds for every comparison.
    let isAllCurrent: Bool
    let isFavoritesCurrent: Bool
    let isUnfiledCurrent: Bool
    let hasSavedSearches: Bool

    /// `current` is "all", "favorites", "unfiled", or anything else for folder and tag pages.
    init(allCount: Int, favoritesCount: Int, unfiledCount: Int, folders: [FolderLink], tags: [TagLink],
         savedSearches: [SavedSearchLink], current: String) {
        self.allCount = allCount
        self.favoritesCount = favoritesCount
        self.unfiledCount = unfiledCount
        self.folders = folders
        self.tags = tags
        self.savedSearches = savedSearches
        isAllCurrent = current == "all"
        isFavoritesCurrent = current == "favorites"
        isUnfiledCurrent = current == "unfiled"
        hasSavedSearches = !savedSearches.isEmpty
    }
}

/// A tag as a coloured chip.
struct TagChip: Encodable, Hashable, Sendable {
    let id: String
    let name: String
    let color: String
    let textColor: String
    /// The chip's colours as a `style` attribute, one lookup for Leaf instead of two.
    let style: String

    init(id: String, name: String, color: String, textColor: String) {
        self.id = id
        self.name = name
        self.color = color
        self.textColor = textColor
        style = "background: \(color); color: \(textColor)"
    }
}

/// A snippet in a list. Leaf costs a few microseconds per lookup, loop and condition, and a page
/// has 25 to 100 rows, so a row hands it few, ready-made values.
struct SnippetRow: Encodable, Hashable, Sendable {
    let id: String
    let title: String
    /// The title as HTML, the words a search matched marked (``MarkedText``).
    let titleHTML: String
    /// With a search, the excerpt of the code or notes around the matches, as HTML; empty otherwise.
    let matchHTML: String
    /// Language, folder (if any) and date of the last change, as the row shows them.
    let meta: String
    let tags: [TagChip]
    let isFavorite: Bool
    let isSelected: Bool
    let excerpt: String
    /// Flags for the template's conditions: a test of text or of a count goes through Leaf's converter
    /// table, rebuilt on every use, several times per row.
    let hasTags: Bool
    let hasMatch: Bool
    let hasExcerpt: Bool

    init(id: String, title: String, titleHTML: String, matchHTML: String, language: String,
         folder: String?, tags: [TagChip], updated: String, isFavorite: Bool, isSelected: Bool, excerpt: String) {
        self.id = id
        self.title = title
        self.titleHTML = titleHTML
        self.matchHTML = matchHTML
        meta = ([language] + (folder.map { [Formatting.isolated($0)] } ?? []) + [updated]).joined(separator: " · ")
        self.tags = tags
        self.isFavorite = isFavorite
        self.isSelected = isSelected
        self.excerpt = excerpt
        hasTags = !tags.isEmpty
        hasMatch = !matchHTML.isEmpty
        hasExcerpt = !excerpt.isEmpty
    }
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
    /// Rendered from `list-form.leaf` into `formHTML` (see `RenderedFragments`); not handed to Leaf again.
    let form: ListForm
    var formHTML = ""
    /// `rows` rendered from `snippet-rows.leaf` (see `RenderedFragments`); the rows are not handed to Leaf again.
    var rowsHTML = ""
    let pagination: Pagination
    let isSearch: Bool
    let hasRows: Bool
    var hasFilters: Bool { form.hasFilters }

    private enum CodingKeys: String, CodingKey {
        case heading, filterQuery, rowsHTML, selected, isStoreEmpty, folderOptions, formHTML, pagination, isSearch, hasRows, hasFilters
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(heading, forKey: .heading)
        try container.encode(filterQuery, forKey: .filterQuery)
        try container.encode(rowsHTML, forKey: .rowsHTML)
        try container.encodeIfPresent(selected, forKey: .selected)
        try container.encode(isStoreEmpty, forKey: .isStoreEmpty)
        try container.encode(folderOptions, forKey: .folderOptions)
        try container.encode(formHTML, forKey: .formHTML)
        try container.encode(pagination, forKey: .pagination)
        try container.encode(isSearch, forKey: .isSearch)
        try container.encode(hasRows, forKey: .hasRows)
        try container.encode(hasFilters, forKey: .hasFilters)
    }
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
struct Option: Encodable, Hashable, Sendable {
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
