import Foundation
import ObjectGraph

/// The current version of SnippetBox's models. Version 2 put snippets in a trash (`deletedAt`);
/// version 3 sorts titles as people read them, through ``Snippet/titleSortKey``.
public enum SnippetSchemaV3: VersionedSchema {
    public static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    public static var models: [any PersistentModel.Type] { [Snippet.self, Folder.self, Tag.self, SavedSearch.self] }

    /// A piece of code worth keeping, with notes, a language, tags and an optional screenshot.
    @Model public final class Snippet {
        // What the list page filters, counts and sorts by, each behind "in the library" (deletedAt is
        // nil), so that a page of 100,000 snippets reads index entries instead of rows holding code.
        // Indexes are not part of the stored schema: a store gets them when it opens, without a migration.
        // The creation-date index also holds the update date, so a "created in 2021" filter sorts the
        // newest-updated first from the index alone. So do the language, folder and favourite indexes:
        // the newest 25 Swift snippets are then the index's first 25 entries, where SQLite otherwise
        // sorted all 3,000 of them (13 ms at 100,000 snippets).
        // The language and folder indexes also carry the other filters' columns and the creation date,
        // so that filters combined (a folder and a language, sorted by creation) are tested and sorted
        // in the index, and only the page's own rows are read: each row read from the table cost about
        // 2 µs, and such a page read thousands (6.5 ms -> 0.4 ms in SQLite at 100,000 snippets). Ties in
        // the update date are then put in key order by a sort of each tie, not of the whole match. The
        // favourite index stays narrow: one snippet in ten is a favourite, so it never narrows a
        // combination most, and SQLite took the update-date index over a wide one for favourites alone.
        // The last index starts with the row's key: a search's count, facets and ranking join every hit
        // to its snippet by key for these columns, and read this narrow copy instead of the wide rows.
        // The creation-date index holds the folder, language and favourite after the dates, so that the
        // counts beside the filters of a creation-date range are read from it: looking up each row of
        // a year's snippets for its folder took 45 ms a count at 100,000 snippets, against 6 ms. (The
        // update-date index stays narrow: a wider one sorted ties in the update date for deep pages,
        // 2 -> 13 ms, and an update-date range is already counted from the folder and language indexes.)
        // The folder and language indexes end with the image's content type, for "has an image": it is
        // the last column of the row, after the code, so reading it from the row walks the code's
        // overflow pages (0.2 s a count at 100,000 snippets, 6 ms from these indexes). SQLite keeps
        // walking the folder or language index for the order of a count per folder or language, so the
        // column must be in that index; one of its own was not taken.
        #Index<Snippet>(
            [\.deletedAt, \.updatedAt], [\.deletedAt, \.createdAt, \.updatedAt, \.folder, \.language, \.isFavorite],
            [\.deletedAt, \.titleSortKey],
            [\.deletedAt, \.language, \.updatedAt, \.folder, \.isFavorite, \.createdAt, \.imageContentType],
            [\.deletedAt, \.folder, \.updatedAt, \.language, \.isFavorite, \.createdAt, \.imageContentType],
            [\.deletedAt, \.isFavorite, \.updatedAt],
            [\.persistentModelID, \.deletedAt, \.folder, \.language, \.isFavorite])

        /// Names the snippet in URLs. Set in `init`, not as the property's initial value: Swift
        /// evaluates initial values in every initializer, `init(backingData:)` too, so each fetched
        /// model made a UUID only to drop it, and on Linux `UUID()` opens and reads /dev/urandom
        /// (3 µs, a tenth of the list page's CPU time under load). The same holds in SwiftData.
        @Attribute(.unique) public var uuid: UUID
        /// Changed through ``retitle(_:)``, which keeps ``titleSortKey`` with it.
        @Attribute(.spotlight) public private(set) var title: String = ""
        /// The title as the list sorts it (see ``TitleOrder``): SQLite compares text byte by byte, so
        /// sorting the title itself put "Zed" before "apple" and "Step 10" before "Step 9". Stored, and
        /// indexed, so that a page of titles at 100,000 snippets is read from the index in order.
        public private(set) var titleSortKey: String = ""
        @Attribute(.spotlight) public var code: String = ""
        /// Markdown, rendered on the server and sanitized.
        @Attribute(.spotlight) public var notes: String = ""
        /// The names of the snippet's tags and folder, so that a search finds them too. Kept up to date
        /// by ``refreshSearchKeywords()`` whenever they change.
        @Attribute(.spotlight) public var searchKeywords: String = ""
        public var language: CodingLanguage = CodingLanguage.plaintext
        public var isFavorite: Bool = false
        public var createdAt: Date = Date.now
        public var updatedAt: Date = Date.now
        @Attribute(.externalStorage) public var imageData: Data?
        /// The image's MIME type, checked from its bytes when uploaded.
        public var imageContentType: String?
        public var folder: Folder?
        @Relationship(inverse: \Tag.snippets) public var tags: [Tag] = []
        /// When the snippet went to the trash; nil while it is in the library. Trashed snippets are
        /// purged 30 days later.
        public var deletedAt: Date?

        public init(title: String, code: String = "", notes: String = "", language: CodingLanguage = .plaintext) {
            self.uuid = UUID()
            self.title = title
            self.titleSortKey = TitleOrder.sortKey(title)
            self.code = code
            self.notes = notes
            self.language = language
        }

        /// Changes the title and the key the list sorts it by together.
        public func retitle(_ newTitle: String) {
            title = newTitle
            refreshTitleSortKey()
        }

        /// Computes ``titleSortKey`` from the title, for the snippets of a store migrated from version 2.
        func refreshTitleSortKey() {
            let key = TitleOrder.sortKey(title)
            if key != titleSortKey { titleSortKey = key }
        }

        /// Copies the current tag and folder names into ``searchKeywords``.
        public func refreshSearchKeywords() {
            let words = tags.map(\.name).sorted() + [folder?.name].compactMap { $0 }
            let keywords = words.joined(separator: " ")
            if keywords != searchKeywords { searchKeywords = keywords }
        }
    }

    /// A folder holds many snippets; deleting it deletes them, unless they are moved out first.
    @Model public final class Folder {
        /// Names the folder in URLs. Set in `init`, for the reason given at ``Snippet/uuid``.
        @Attribute(.unique) public var uuid: UUID
        public var name: String
        public var createdAt: Date = Date.now
        @Relationship(deleteRule: .cascade, inverse: \Snippet.folder) public var snippets: [Snippet] = []

        public init(name: String) {
            self.uuid = UUID()
            self.name = name
        }
    }

    /// A coloured label; a snippet has many, a tag many snippets. Names are unique without regard to case.
    @Model public final class Tag {
        /// Names the tag in URLs. Set in `init`, for the reason given at ``Snippet/uuid``.
        @Attribute(.unique) public var uuid: UUID
        /// The name in lower case, which carries the uniqueness: "Swift" and "swift" are one tag.
        @Attribute(.unique) public private(set) var normalizedName: String
        public private(set) var name: String
        public var color: ColorData
        public var snippets: [Snippet] = []

        public init(name: String, color: ColorData) {
            self.uuid = UUID()
            self.name = name
            self.normalizedName = Tag.normalize(name)
            self.color = color
        }

        /// Changes the name and the key its uniqueness is checked on together.
        public func rename(to newName: String) {
            name = newName
            normalizedName = Tag.normalize(newName)
        }

        public static func normalize(_ name: String) -> String {
            name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        }
    }

    /// A named search: the query string of the list page, shown in the sidebar.
    @Model public final class SavedSearch {
        /// Set in `init`, for the reason given at ``Snippet/uuid``.
        @Attribute(.unique) public var uuid: UUID
        public var name: String
        /// The list page's query string, without the leading "?".
        public var query: String
        public var createdAt: Date = Date.now

        public init(name: String, query: String) {
            self.uuid = UUID()
            self.name = name
            self.query = query
        }
    }
}

public typealias SavedSearch = SnippetSchemaV3.SavedSearch
public typealias Snippet = SnippetSchemaV3.Snippet
public typealias Folder = SnippetSchemaV3.Folder
public typealias Tag = SnippetSchemaV3.Tag

extension SnippetSchemaV3.Snippet {
    /// Snippets in the library, not in the trash.
    public static var inLibrary: Predicate<Snippet> { #Predicate { $0.deletedAt == nil } }

    /// Identifies the saved state an edit form was opened on: the time of the last save, to the
    /// full precision it is stored with.
    var editVersion: String { String(updatedAt.timeIntervalSince1970) }

    /// How long the trash keeps a snippet.
    public static let trashRetention: TimeInterval = 30 * 86_400
}

/// How a store of any earlier version reaches the current one.
public enum SnippetMigrationPlan: SchemaMigrationPlan {
    public static var schemas: [any VersionedSchema.Type] { [SnippetSchemaV1.self, SnippetSchemaV2.self, SnippetSchemaV3.self] }
    public static var stages: [MigrationStage] {
        [
            .lightweight(fromVersion: SnippetSchemaV1.self, toVersion: SnippetSchemaV2.self),
            // The new column starts empty; each snippet's key is then computed from its title.
            .custom(
                fromVersion: SnippetSchemaV2.self, toVersion: SnippetSchemaV3.self, willMigrate: nil,
                didMigrate: { context in try TitleOrder.fillSortKeys(in: context.container) }),
        ]
    }
}
