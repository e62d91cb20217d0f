import Foundation

/// The list page's form, filled in with the current query, with counts beside each choice.
struct ListForm: Encodable, Hashable, Sendable {
    struct Choice: Encodable, Hashable, Sendable {
        let value: String
        let label: String
        @EncodedAsText var count: Int
        let isSelected: Bool
        var color: String = ""
    }

    let text: String
    let folders: [Choice]
    let tags: [Choice]
    let tagModes: [Option]
    let languages: [Choice]
    let favoritesOnly: Bool
    let withImageOnly: Bool
    let createdFrom: String
    let createdTo: String
    let updatedFrom: String
    let updatedTo: String
    let sorts: [Option]
    let orders: [Option]
    let pageSizes: [Option]
    let hasFilters: Bool
}

struct Pagination: Encodable, Sendable {
    @EncodedAsText var page: Int
    @EncodedAsText var pageCount: Int
    @EncodedAsText var total: Int
    @EncodedAsText var first: Int
    @EncodedAsText var last: Int
    let previousQuery: String?
    let nextQuery: String?
    /// Whether there is anything to page through, and a page before or after this one, as flags for
    /// the template's conditions (see `EncodedAsText`).
    let hasResults: Bool
    let hasPrevious: Bool
    let hasNext: Bool
    /// A page after the last: it shows none of the results, and says so rather than "29–29 of 29".
    let isPastEnd: Bool
}

struct SavedSearchLink: Encodable, Hashable, Sendable {
    let id: String
    let name: String
    let query: String
}
