import Foundation
import ObjectGraph
import Vapor

/// Runs a list query: the page of snippets (ranked by relevance when searching), the total, and the
/// counts beside each folder, tag and language choice, each computed for the current query without
/// that choice's own filter.
struct SnippetList {
    let query: ListQuery
    let context: ModelContext
    /// The form's folder and tag choices, which the page's sidebar lists too.
    let foldersAndTags: FoldersAndTags

    struct Results {
        let heading: String
        let snippets: [(snippet: Snippet, excerpts: [String: [TextFragment]])]
        let form: ListForm
        let pagination: Pagination
    }

    func load() throws -> Results {
        let (folderKey, folderName) = try query.folderKey(in: foldersAndTags)
        let predicate = query.predicate(folderKey: folderKey)
        let offset = (query.page - 1) * query.pageSize
        var snippets: [(snippet: Snippet, excerpts: [String: [TextFragment]])]
        let total: Int
        var hasTermsToFind = true
        if query.isSearch {
            let results = try context.search(
                Snippet.self, for: query.text, where: predicate, weights: Self.searchWeights,
                limit: query.pageSize, offset: offset, relationshipKeyPathsForPrefetching: [\.folder, \.tags])
            snippets = results.hits.map { ($0.model, $0.excerpts) }
            total = results.totalCount
            hasTermsToFind = results.hasTermsToFind
        } else {
            var descriptor = FetchDescriptor<Snippet>(predicate: predicate, sortBy: query.sortDescriptors)
            descriptor.fetchLimit = query.pageSize
            descriptor.fetchOffset = offset
            descriptor.relationshipKeyPathsForPrefetching = [\.folder, \.tags]
            snippets = try context.fetch(descriptor).map { ($0, [:]) }
            total = try context.fetchCount(FetchDescriptor<Snippet>(predicate: predicate))
        }
        return Results(
            heading: heading(folderName: folderName, total: total, hasTermsToFind: hasTermsToFind),
            snippets: snippets, form: try form(), pagination: pagination(total: total))
    }

    /// How much a word counts in each field when ranking a search.
    /// (Made at each call: key paths are not Sendable, so a dictionary of them cannot be a static.)
    static var searchWeights: [PartialKeyPath<Snippet>: Double] { [\.title: 10, \.searchKeywords: 4, \.notes: 2, \.code: 1] }

    /// Every snippet of the list, on any page, up to `limit` of them.
    func allSnippets(limit: Int) throws -> [Snippet] {
        let (folderKey, _) = try query.folderKey(in: foldersAndTags)
        let predicate = query.predicate(folderKey: folderKey)
        if query.isSearch {
            return try context.search(Snippet.self, for: query.text, where: predicate, weights: Self.searchWeights, limit: limit, offset: 0)
                .hits.map(\.model)
        }
        var descriptor = FetchDescriptor<Snippet>(predicate: predicate, sortBy: query.sortDescriptors)
        descriptor.fetchLimit = limit
        return try context.fetch(descriptor)
    }

    private func heading(folderName: String?, total: Int, hasTermsToFind: Bool) -> String {
        if query.isSearch, !hasTermsToFind {
            return "Nothing to search for in \(Formatting.quoted(query.text)): a -word only leaves out snippets that have it; add a word to find"
        }
        if query.isSearch { return "\(total) result\(total == 1 ? "" : "s") for \(Formatting.quoted(query.text))" }
        if query.hasFilters {
            if query.favoritesOnly && !otherFilters(except: "favorites") { return "Favorites" }
            if query.folder == "unfiled" && !otherFilters(except: "folder") { return "Unfiled" }
            if let folderName, !otherFilters(except: "folder") { return Formatting.isolated(folderName) }
            if query.tags.count == 1, !otherFilters(except: "tag"), let id = UUID(uuidString: query.tags[0]),
               let tag = foldersAndTags.tag(id) {
                return "Tagged \(Formatting.quoted(tag.name))"
            }
            return "\(total) matching snippet\(total == 1 ? "" : "s")"
        }
        return "All snippets"
    }

    private func otherFilters(except kept: String) -> Bool {
        var rest = query
        switch kept {
        case "favorites": rest.favoritesOnly = false
        case "folder": rest.folder = nil
        default: rest.tags = []
        }
        return rest.hasFilters
    }

    private func counts<Key>(_ body: (Predicate<Snippet>, String?) throws -> Key, without change: (inout ListQuery) -> Void) throws -> Key {
        var facet = query
        change(&facet)
        let key = try facet.folderKey(in: foldersAndTags).key
        return try body(facet.predicate(folderKey: key), query.isSearch ? query.text : nil)
    }

    private func form() throws -> ListForm {
        let folderCounts = try counts({ try context.counts(of: \Snippet.folder, where: $0, matching: $1) }, without: { $0.folder = nil })
        let tagCounts = try counts({ try context.counts(ofEach: \Snippet.tags, where: $0, matching: $1) }, without: { $0.tags = [] })
        let languageCounts = try counts({ try context.counts(of: \Snippet.language, where: $0, matching: $1) }, without: { $0.language = nil })

        let (folders, tags) = (foldersAndTags.folders, foldersAndTags.tags)
        var folderChoices = [ListForm.Choice(value: "", label: "Any folder", count: folderCounts.values.reduce(0, +), isSelected: query.folder == nil)]
        folderChoices.append(ListForm.Choice(value: "unfiled", label: "Unfiled", count: folderCounts[nil] ?? 0, isSelected: query.folder == "unfiled"))
        folderChoices += folders.map {
            ListForm.Choice(value: $0.uuid.idString, label: $0.name, count: folderCounts[$0.persistentModelID] ?? 0,
                            isSelected: query.folder == $0.uuid.idString)
        }
        let tagChoices = tags.map {
            ListForm.Choice(value: $0.uuid.idString, label: $0.name, count: tagCounts[$0.persistentModelID] ?? 0,
                            isSelected: query.tags.contains($0.uuid.idString), color: $0.color.hex)
        }
        let languageChoices = [ListForm.Choice(value: "", label: "Any language", count: languageCounts.values.reduce(0, +), isSelected: query.language == nil)]
            + CodingLanguage.allCasesByName.compactMap { language in
                let count = languageCounts[language] ?? 0
                guard count > 0 || query.language == language else { return nil }
                return ListForm.Choice(value: language.rawValue, label: language.displayName, count: count, isSelected: query.language == language)
            }
        return ListForm(
            text: query.text, folders: folderChoices, tags: tagChoices, tagModes: ListQuery.TagMode.allCases.map {
                Option(value: $0.rawValue, label: $0.label, isSelected: query.tagMode == $0)
            },
            languages: languageChoices, favoritesOnly: query.favoritesOnly, withImageOnly: query.withImageOnly,
            createdFrom: ListQuery.dayString(query.createdFrom),
            createdTo: ListQuery.dayString(query.createdTo?.addingTimeInterval(-86_400)),
            updatedFrom: ListQuery.dayString(query.updatedFrom),
            updatedTo: ListQuery.dayString(query.updatedTo?.addingTimeInterval(-86_400)),
            sorts: ListQuery.SortKey.allCases.map { Option(value: $0.rawValue, label: $0.rawValue.capitalized, isSelected: query.sort == $0) },
            orders: [Option(value: "desc", label: "Descending", isSelected: !query.ascending),
                     Option(value: "asc", label: "Ascending", isSelected: query.ascending)],
            pageSizes: ListQuery.pageSizes.map { Option(value: String($0), label: String($0), isSelected: query.pageSize == $0) },
            hasFilters: query.hasFilters)
    }

    private func pagination(total: Int) -> Pagination {
        let pageCount = max(1, (total + query.pageSize - 1) / query.pageSize)
        let first = total == 0 ? 0 : (query.page - 1) * query.pageSize + 1
        // Past the end (an old link after deletes, a typed URL), the way back is to the last page,
        // not to the page before this one, which is past the end too.
        let isPastEnd = total > 0 && query.page > pageCount
        let previousQuery = query.page > 1 ? query.queryString(page: min(query.page - 1, pageCount)) : nil
        let nextQuery = query.page < pageCount ? query.queryString(page: query.page + 1) : nil
        return Pagination(
            page: query.page, pageCount: pageCount, total: total,
            first: min(first, total), last: min(query.page * query.pageSize, total),
            previousQuery: previousQuery, nextQuery: nextQuery,
            hasResults: total > 0, hasPrevious: previousQuery != nil, hasNext: nextQuery != nil, isPastEnd: isPastEnd)
    }
}
