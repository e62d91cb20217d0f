import Foundation
import ObjectGraph
import Vapor

/// Turns models into the plain values pages render. Runs inside a store closure, with its context.
struct Presenter {
    let context: ModelContext
    private let markdown = MarkdownRenderer()

    func chip(_ tag: Tag) -> TagChip {
        TagChip(id: tag.uuid.idString, name: tag.name, color: tag.color.hex, textColor: tag.color.contrastingTextHex)
    }

    func row(_ snippet: Snippet, selectedID: UUID?, excerpts: [String: [TextFragment]] = [:]) -> SnippetRow {
        let match = excerpts["code"] ?? excerpts["notes"] ?? excerpts["searchKeywords"]
        return SnippetRow(
            id: snippet.uuid.idString,
            title: snippet.title,
            titleHTML: excerpts["title"].map(MarkedText.html) ?? MarkedText.html(plain: snippet.title),
            matchHTML: match.map(MarkedText.html) ?? "",
            language: snippet.language.displayName,
            folder: snippet.folder?.name,
            tags: TitleOrder.sorted(snippet.tags, byName: \.name).map(chip),
            updated: Formatting.displayDate(snippet.updatedAt),
            isFavorite: snippet.isFavorite,
            isSelected: snippet.uuid == selectedID,
            excerpt: Formatting.excerpt(snippet.notes.isEmpty ? snippet.code : snippet.notes))
    }

    func detail(_ snippet: Snippet) -> SnippetDetail {
        let highlighted = SyntaxHighlighter.highlight(snippet.code, as: snippet.language)
        return SnippetDetail(
            id: snippet.uuid.idString,
            title: snippet.title,
            language: snippet.language.rawValue,
            languageName: snippet.language.displayName,
            folder: snippet.folder?.name,
            folderID: snippet.folder?.uuid.idString,
            tags: TitleOrder.sorted(snippet.tags, byName: \.name).map(chip),
            created: Formatting.displayDate(snippet.createdAt),
            updated: Formatting.displayDate(snippet.updatedAt),
            createdISO: Formatting.isoDate(snippet.createdAt),
            updatedISO: Formatting.isoDate(snippet.updatedAt),
            lines: highlighted.lines,
            lineCount: highlighted.lines.count,
            code: snippet.code,
            notesHTML: markdown.render(snippet.notes),
            hasImage: snippet.imageContentType != nil,
            imageVersion: String(Formatting.wholeMilliseconds(snippet.updatedAt)),
            isFavorite: snippet.isFavorite,
            downloadName: Formatting.downloadName(title: snippet.title, language: snippet.language))
    }

    /// The sidebar, with its counts from grouped queries (one for folders, one for tags). A page that
    /// also lists the folders and tags elsewhere passes those it fetched.
    func sidebar(current: String, foldersAndTags: FoldersAndTags? = nil) throws -> Sidebar {
        let listed = try foldersAndTags ?? FoldersAndTags(context: context)
        let (folders, tags) = (listed.folders, listed.tags)
        let perFolder = try context.counts(of: \Snippet.folder, where: Snippet.inLibrary)
        let perTag = try context.counts(ofEach: \Snippet.tags, where: Snippet.inLibrary)
        return Sidebar(
            allCount: perFolder.values.reduce(0, +),
            favoritesCount: try context.fetchCount(FetchDescriptor(predicate: #Predicate<Snippet> { $0.isFavorite && $0.deletedAt == nil })),
            unfiledCount: perFolder[nil] ?? 0,
            folders: folders.map { folder in
                Sidebar.FolderLink(
                    id: folder.uuid.idString, name: folder.name, count: perFolder[folder.persistentModelID] ?? 0,
                    isCurrent: current == "folder:\(folder.uuid.idString)")
            },
            tags: tags.map { tag in
                Sidebar.TagLink(
                    id: tag.uuid.idString, name: tag.name, count: perTag[tag.persistentModelID] ?? 0,
                    color: tag.color.hex, textColor: tag.color.contrastingTextHex,
                    isCurrent: current == "tag:\(tag.uuid.idString)")
            },
            savedSearches: TitleOrder.sorted(try context.fetch(FetchDescriptor<SavedSearch>()), byName: \.name).map {
                SavedSearchLink(id: $0.uuid.idString, name: $0.name, query: $0.query)
            },
            current: current)
    }

    /// The folders a snippet can be moved to; a page that fetched them already passes them.
    func folderOptions(selected: String?, includeNone: Bool = true, folders fetched: [Folder]? = nil) throws -> [Option] {
        let folders = try fetched ?? TitleOrder.sorted(context.fetch(FetchDescriptor<Folder>()), byName: \.name)
        let none = includeNone ? [Option(value: "", label: "Unfiled", isSelected: (selected ?? "").isEmpty)] : []
        return none + folders.map {
            Option(value: $0.uuid.idString, label: $0.name, isSelected: $0.uuid.idString == selected)
        }
    }

    func languageOptions(selected: String) -> [Option] {
        CodingLanguage.allCasesByName.map {
            Option(value: $0.rawValue, label: $0.displayName, isSelected: $0.rawValue == selected)
        }
    }

    func tagOptions(checked: Set<String>) throws -> [TagOption] {
        TitleOrder.sorted(try context.fetch(FetchDescriptor<Tag>()), byName: \.name).map {
            TagOption(id: $0.uuid.idString, name: $0.name, color: $0.color.hex, isChecked: checked.contains($0.uuid.idString))
        }
    }
}

/// Lookups by the UUIDs that name models in URLs.
enum Lookup {
    /// The snippet with this id, if it is in the library (not in the trash).
    static func snippet(_ id: UUID, in context: ModelContext) throws -> Snippet? {
        try context.fetch(FetchDescriptor(predicate: #Predicate<Snippet> { $0.uuid == id && $0.deletedAt == nil })).first
    }

    static func trashedSnippet(_ id: UUID, in context: ModelContext) throws -> Snippet {
        guard let snippet = try context.fetch(FetchDescriptor(predicate: #Predicate<Snippet> { $0.uuid == id && $0.deletedAt != nil })).first else {
            throw Abort(.notFound, reason: "There is no such snippet in the trash.")
        }
        return snippet
    }

    static func folder(_ id: UUID, in context: ModelContext) throws -> Folder? {
        try context.fetch(FetchDescriptor(predicate: #Predicate<Folder> { $0.uuid == id })).first
    }

    static func tag(_ id: UUID, in context: ModelContext) throws -> Tag? {
        try context.fetch(FetchDescriptor(predicate: #Predicate<Tag> { $0.uuid == id })).first
    }

    /// The snippet, folder or tag a URL names, or "not found".
    static func existingSnippet(_ id: UUID, in context: ModelContext) throws -> Snippet {
        guard let snippet = try snippet(id, in: context) else { throw Abort(.notFound, reason: "There is no such snippet.") }
        return snippet
    }

    static func existingFolder(_ id: UUID, in context: ModelContext) throws -> Folder {
        guard let folder = try folder(id, in: context) else { throw Abort(.notFound, reason: "There is no such folder.") }
        return folder
    }

    static func existingTag(_ id: UUID, in context: ModelContext) throws -> Tag {
        guard let tag = try tag(id, in: context) else { throw Abort(.notFound, reason: "There is no such tag.") }
        return tag
    }

    /// The tag whose name is `name` but for case, spaces around it and Unicode normalization: "Résumé"
    /// typed with a combining accent is the tag typed with a precomposed one. The store compares the
    /// normalized names byte for byte, which finds most; Swift's `==`, which compares Strings by
    /// canonical equivalence, finds the rest among all tags (a library has hundreds at most).
    static func tag(named name: String, in context: ModelContext) throws -> Tag? {
        let normalized = Tag.normalize(name)
        if let tag = try context.fetch(FetchDescriptor(predicate: #Predicate<Tag> { $0.normalizedName == normalized })).first {
            return tag
        }
        return try context.fetch(FetchDescriptor<Tag>()).first { $0.normalizedName == normalized }
    }

    /// The folder named `name` but for case and Unicode normalization (by Swift's `==`, as
    /// `tag(named:)`), other than the one `excluding` names: folder names are unique in that sense.
    static func folder(named name: String, excluding: UUID? = nil, in context: ModelContext) throws -> Folder? {
        let lowered = name.lowercased()
        return try context.fetch(FetchDescriptor<Folder>()).first { $0.name.lowercased() == lowered && $0.uuid != excluding }
    }
}

/// The library's folders and tags, each sorted by name in ``TitleOrder``, fetched once for a page
/// that lists them both in its sidebar and in its filter form.
struct FoldersAndTags {
    let folders: [Folder]
    let tags: [Tag]
    private let foldersByID: [UUID: Folder]
    private let tagsByID: [UUID: Tag]

    init(context: ModelContext) throws {
        folders = TitleOrder.sorted(try context.fetch(FetchDescriptor<Folder>()), byName: \.name)
        tags = TitleOrder.sorted(try context.fetch(FetchDescriptor<Tag>()), byName: \.name)
        foldersByID = Dictionary(folders.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        tagsByID = Dictionary(tags.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The library's folder or tag of that id, from those read already: a list page's query names
    /// them, and looking each up again cost a query apiece.
    func folder(_ id: UUID) -> Folder? { foldersByID[id] }
    func tag(_ id: UUID) -> Tag? { tagsByID[id] }
}
