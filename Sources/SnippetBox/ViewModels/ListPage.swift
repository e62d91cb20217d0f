import Foundation

/// A piece of a title or excerpt: plain text, or a word the search matched (shown marked).
struct Fragment: Encodable, Sendable {
    let text: String
    let isMatch: Bool
}

/// The list page's form, filled in with the current query, with counts beside each choice.
struct ListForm: Encodable, Sendable {
    struct Choice: Encodable, Sendable {
        let value: String
        let label: String
        let count: Int
        let isSelected: Bool
        var color: String = ""
    }

    let text: String
    let folders: [Choice]
    let tags: [Choice]
    let tagMode: String
    let languages: [Choice]
    let favoritesOnly: Bool
    let withImageOnly: Bool
    let createdFrom: String
    let createdTo: String
    let updatedFrom: String
    let updatedTo: String
    let sorts: [Option]
    let order: String
    let pageSizes: [Option]
    let hasFilters: Bool
}

struct Pagination: Encodable, Sendable {
    let page: Int
    let pageCount: Int
    let total: Int
    let first: Int
    let last: Int
    let previousQuery: String?
    let nextQuery: String?
}

struct SavedSearchLink: Encodable, Sendable {
    let id: String
    let name: String
    let query: String
}
