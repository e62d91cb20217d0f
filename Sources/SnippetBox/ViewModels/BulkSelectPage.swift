import Foundation

/// The "Select…" page: the list's current page as checkboxes, and what to do with those checked.
struct BulkSelectPage: Encodable, Sendable {
    struct Row: Encodable, Sendable {
        let id: String
        let title: String
        let meta: String
    }

    let heading: String
    /// The list's query (starts with "?" or is empty): the form goes back to the same list.
    let filterQuery: String
    let rows: [Row]
    /// How many snippets the list holds, on every page.
    let total: String
    /// Whether the form offers every snippet of the list (it holds more than this page, and not
    /// more than can change at once), or says the list is too long for that.
    let offersWholeList: Bool
    let wholeListIsTooLong: Bool
    let moveOptions: [Option]
    let addTagOptions: [Option]
    let removeTagOptions: [Option]
}
