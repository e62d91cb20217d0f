import Foundation
import ObjectGraph
import Vapor

/// Everything the list page's GET form can ask for, read from the URL so that every state of the
/// list can be bookmarked and shared: a text search, filters that combine, an order and a page.
struct ListQuery: Sendable, Equatable {
    enum TagMode: String, Sendable, CaseIterable {
        case any, all, none

        /// How the form offers the mode: "Match any of them".
        var label: String { "\(rawValue) of them" }
    }
    enum SortKey: String, Sendable, CaseIterable { case updated, created, title, language }

    static let pageSizes = [10, 25, 50, 100]

    var text = ""
    /// A folder's UUID, or "unfiled".
    var folder: String?
    var tags: [String] = []
    var tagMode: TagMode = .any
    var language: CodingLanguage?
    var favoritesOnly = false
    var withImageOnly = false
    var createdFrom: Date?
    var createdTo: Date?
    var updatedFrom: Date?
    var updatedTo: Date?
    var sort: SortKey = .updated
    var ascending = false
    var pageSize = 25
    var page = 1

    init() {}

    init(query: URLQueryContainer) {
        let fields = (try? query.decode(Fields.self)) ?? Fields()
        func value(_ key: Fields.Key) -> String? { fields.values[key] }
        text = String((value(.q) ?? "").prefix(500))
        // Ids in the form the pages write them (upper case): the form's choices are compared with them
        // as text, and a link with a lower-case id filtered the list while its menu showed no folder,
        // so that applying the form again dropped the folder.
        folder = value(.folder).flatMap { $0 == "unfiled" ? $0 : UUID(uuidString: $0)?.idString }
        tags = fields.tags.compactMap { UUID(uuidString: $0)?.idString }
        tagMode = value(.tagMode).flatMap(TagMode.init(rawValue:)) ?? .any
        language = value(.language).flatMap(CodingLanguage.init(rawValue:))
        favoritesOnly = value(.favorites) == "1"
        withImageOnly = value(.image) == "1"
        createdFrom = value(.createdFrom).flatMap(Self.day)
        createdTo = value(.createdTo).flatMap(Self.day).map { $0.addingTimeInterval(86_400) }
        updatedFrom = value(.updatedFrom).flatMap(Self.day)
        updatedTo = value(.updatedTo).flatMap(Self.day).map { $0.addingTimeInterval(86_400) }
        sort = value(.sort).flatMap(SortKey.init(rawValue:)) ?? .updated
        ascending = value(.order) == "asc"
        pageSize = value(.size).flatMap(Int.init).flatMap { Self.pageSizes.contains($0) ? $0 : nil } ?? 25
        page = max(1, min(value(.page).flatMap(Int.init) ?? 1, 1_000_000))
    }

    /// The query string's fields, decoded in one pass: Vapor parses the whole query string for each
    /// `get(_:at:)`, and fifteen of them were 2.6% of the server's time under load. A field that is
    /// not a plain value (`q[]=x`) or is empty counts as absent, as it did one field at a time.
    private struct Fields: Decodable {
        enum Key: String, CodingKey, CaseIterable {
            case q, folder, tag, tagMode, language, favorites, image
            case createdFrom, createdTo, updatedFrom, updatedTo, sort, order, size, page
        }

        var values: [Key: String] = [:]
        /// `tag=a&tag=b`, or a single `tag=a`.
        var tags: [String] = []

        init() {}

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Key.self)
            for key in Key.allCases where key != .tag && container.contains(key) {
                if let value = try? container.decode(String.self, forKey: key), !value.isEmpty { values[key] = value }
            }
            if container.contains(.tag) {
                tags = (try? container.decode([String].self, forKey: .tag))
                    ?? (try? container.decode(String.self, forKey: .tag)).map { $0.isEmpty ? [] : [$0] } ?? []
            }
        }
    }

    /// `yyyy-MM-dd` as the start of that day in UTC (what a date input sends).
    static func day(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.date(from: text)
    }

    static func dayString(_ date: Date?) -> String {
        guard let date else { return "" }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: date)
    }

    /// Whether the search box holds anything to search for (letters or digits).
    var isSearch: Bool { text.unicodeScalars.contains { CharacterSet.alphanumerics.contains($0) } }

    /// True when something narrows the list beyond "all snippets".
    var hasFilters: Bool {
        isSearch || folder != nil || !tags.isEmpty || language != nil || favoritesOnly || withImageOnly
            || createdFrom != nil || createdTo != nil || updatedFrom != nil || updatedTo != nil
    }

    /// The query string of this state ("" for the defaults), optionally with some parts changed.
    func queryString(page: Int? = nil, dropping: Set<String> = []) -> String {
        var items: [(String, String)] = []
        if !text.isEmpty { items.append(("q", text)) }
        if let folder { items.append(("folder", folder)) }
        for tag in tags { items.append(("tag", tag)) }
        if !tags.isEmpty && tagMode != .any { items.append(("tagMode", tagMode.rawValue)) }
        if let language { items.append(("language", language.rawValue)) }
        if favoritesOnly { items.append(("favorites", "1")) }
        if withImageOnly { items.append(("image", "1")) }
        if createdFrom != nil { items.append(("createdFrom", Self.dayString(createdFrom))) }
        if let createdTo { items.append(("createdTo", Self.dayString(createdTo.addingTimeInterval(-86_400)))) }
        if updatedFrom != nil { items.append(("updatedFrom", Self.dayString(updatedFrom))) }
        if let updatedTo { items.append(("updatedTo", Self.dayString(updatedTo.addingTimeInterval(-86_400)))) }
        if sort != .updated { items.append(("sort", sort.rawValue)) }
        if ascending { items.append(("order", "asc")) }
        if pageSize != 25 { items.append(("size", String(pageSize))) }
        let chosenPage = page ?? self.page
        if chosenPage > 1 { items.append(("page", String(chosenPage))) }
        let kept = items.filter { !dropping.contains($0.0) }
        return kept.isEmpty ? "" : "?" + kept.map { "\($0.0)=\($0.1.urlQueryEscaped)" }.joined(separator: "&")
    }

    /// The sidebar entry to highlight.
    var sidebarKey: String {
        let onlyOne = [folder != nil, !tags.isEmpty, favoritesOnly].filter { $0 }.count == 1 && !isSearch && language == nil
        guard onlyOne || !hasFilters else { return "" }
        if favoritesOnly { return "favorites" }
        if folder == "unfiled" { return "unfiled" }
        if let folder { return "folder:\(folder)" }
        if tags.count == 1 { return "tag:\(tags[0])" }
        return "all"
    }

    // MARK: The query

    /// One predicate per filter in use, combined: only the filters asked for reach SQL. Snippets in
    /// the trash are never listed.
    func predicate(folderKey: PersistentIdentifier?) -> Predicate<Snippet> {
        var parts: [Predicate<Snippet>] = [Snippet.inLibrary]
        if folder == "unfiled" {
            parts.append(#Predicate { $0.folder == nil })
        } else if let folderID = folderKey {
            parts.append(#Predicate { $0.folder?.persistentModelID == folderID })
        }
        let tagIDs = tags.compactMap(UUID.init(uuidString:))
        if !tagIDs.isEmpty {
            switch tagMode {
            case .any:
                parts.append(#Predicate { $0.tags.contains { tagIDs.contains($0.uuid) } })
            case .all:
                // One test per tag, not a count of the matching tags: SQLite stops at a snippet's first
                // missing tag, where it counted every tag of every snippet it walked (5.3 -> 4.4 ms for
                // two tags at 100,000 snippets). A snippet holds a tag at most once, so both agree.
                // In the URL's order, repeats dropped: the SQL must be the same text on every request,
                // as the store keeps counts by it (a Set's order differs from one instance to the next).
                var seen = Set<UUID>()
                for tagID in tagIDs where seen.insert(tagID).inserted {
                    parts.append(#Predicate { $0.tags.contains { $0.uuid == tagID } })
                }
            case .none:
                parts.append(#Predicate { !$0.tags.contains { tagIDs.contains($0.uuid) } })
            }
        }
        if let language {
            parts.append(#Predicate { $0.language == language })
        }
        if favoritesOnly {
            parts.append(#Predicate { $0.isFavorite })
        }
        if withImageOnly {
            parts.append(#Predicate { $0.imageContentType != nil })
        }
        // A range with both bounds is one part: each part's matching snippets are read once, as a
        // set (see `prepareCounts`), and "created since 2021" alone is most of the library, where
        // the range is one stretch of the date index (a first visit of 2021: 26-31 ms, two reads).
        switch (createdFrom, createdTo) {
        case let (from?, to?): parts.append(#Predicate { $0.createdAt >= from && $0.createdAt < to })
        case let (from?, nil): parts.append(#Predicate { $0.createdAt >= from })
        case let (nil, to?): parts.append(#Predicate { $0.createdAt < to })
        case (nil, nil): break
        }
        switch (updatedFrom, updatedTo) {
        case let (from?, to?): parts.append(#Predicate { $0.updatedAt >= from && $0.updatedAt < to })
        case let (from?, nil): parts.append(#Predicate { $0.updatedAt >= from })
        case let (nil, to?): parts.append(#Predicate { $0.updatedAt < to })
        case (nil, nil): break
        }
        return Predicates.all(parts)
    }

    var sortDescriptors: [SortDescriptor<Snippet>] {
        let order: SortOrder = ascending ? .forward : .reverse
        switch sort {
        case .updated: return [SortDescriptor(\.updatedAt, order: order)]
        case .created: return [SortDescriptor(\.createdAt, order: order)]
        case .title: return [SortDescriptor(\.titleSortKey, order: order)]
        case .language: return [SortDescriptor(\.language.rawValue, order: order), SortDescriptor(\.titleSortKey)]
        }
    }

    /// This query without the folder and tags it names that are not in the library (deleted since the
    /// link was made or the search saved), and a sentence saying so; nil if all are there.
    /// Looked up by the list page before it runs the query: the folder's gone made a saved search a
    /// 404 page, and a tag's made one asking for all of its tags find nothing.
    func withoutDeletedChoices(in library: FoldersAndTags) -> (query: ListQuery, notice: String)? {
        var kept = self
        if let folder, let id = UUID(uuidString: folder), library.folder(id) == nil {
            kept.folder = nil
        }
        kept.tags = tags.filter { tag in UUID(uuidString: tag).map { library.tag($0) != nil } ?? false }
        let goneTags = tags.count - kept.tags.count
        let goneFolder = kept.folder != folder
        guard goneFolder || goneTags > 0 else { return nil }
        // The results change, so the list starts again at its first page.
        kept.page = 1
        let tagWords = goneTags == 1 ? "a tag" : "\(goneTags) tags"
        let subject = switch (goneFolder, goneTags) {
        case (true, 0): "The folder"
        case (true, _): "The folder and \(tagWords)"
        case (false, 1): "A tag"
        case (false, _): tagWords
        }
        let isOne = (goneFolder ? 1 : 0) + goneTags == 1
        // Not "deleted": an id that was never this library's (another account's) is answered the same.
        return (kept, "\(subject) this list named \(isOne ? "is" : "are") not in your library, so the list is not narrowed to \(isOne ? "it" : "them").")
    }

    /// The folder the query names; throws "not found" for a folder that is gone.
    func folderKey(in library: FoldersAndTags) throws -> (key: PersistentIdentifier?, name: String?) {
        guard let folder, folder != "unfiled", let id = UUID(uuidString: folder) else { return (nil, nil) }
        guard let model = library.folder(id) else { throw Abort(.notFound, reason: "There is no such folder.") }
        return (model.persistentModelID, model.name)
    }
}

extension String {
    /// The string percent-encoded for a URL's query: every character but letters, digits and `-._~`.
    var urlQueryEscaped: String {
        // Most values (a page number, a language, an identifier) need no escaping: told from their
        // bytes. Foundation's encoding, and the set it took (made again on every call), cost 10 µs,
        // 1% of a list page, for its "next page" link.
        if utf8.allSatisfy(Self.isUnreservedASCII) { return self }
        return addingPercentEncoding(withAllowedCharacters: Self.urlQueryAllowed) ?? self
    }

    private static let urlQueryAllowed = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-._~"))

    private static func isUnreservedASCII(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}
