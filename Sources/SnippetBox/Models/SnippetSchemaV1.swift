import Foundation
import ObjectGraph

/// The first version of SnippetBox's models, kept as it was so that a store of this version can be
/// carried forward by ``SnippetMigrationPlan``. The app uses the latest version (see the type aliases).
public enum SnippetSchemaV1: VersionedSchema {
    public static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    public static var models: [any PersistentModel.Type] { [Snippet.self, Folder.self, Tag.self, SavedSearch.self] }

    /// A piece of code worth keeping, with notes, a language, tags and an optional screenshot.
    @Model public final class Snippet {
        @Attribute(.unique) public var uuid: UUID = UUID()
        @Attribute(.spotlight) public var title: String = ""
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

        public init(title: String, code: String = "", notes: String = "", language: CodingLanguage = .plaintext) {
            self.title = title
            self.code = code
            self.notes = notes
            self.language = language
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
        /// Names the folder in URLs.
        @Attribute(.unique) public var uuid: UUID = UUID()
        public var name: String
        public var createdAt: Date = Date.now
        @Relationship(deleteRule: .cascade, inverse: \Snippet.folder) public var snippets: [Snippet] = []

        public init(name: String) {
            self.name = name
        }
    }

    /// A coloured label; a snippet has many, a tag many snippets. Names are unique without regard to case.
    @Model public final class Tag {
        /// Names the tag in URLs.
        @Attribute(.unique) public var uuid: UUID = UUID()
        /// The name in lower case, which carries the uniqueness: "Swift" and "swift" are one tag.
        @Attribute(.unique) public private(set) var normalizedName: String
        public private(set) var name: String
        public var color: ColorData
        public var snippets: [Snippet] = []

        public init(name: String, color: ColorData) {
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
        @Attribute(.unique) public var uuid: UUID = UUID()
        public var name: String
        /// The list page's query string, without the leading "?".
        public var query: String
        public var createdAt: Date = Date.now

        public init(name: String, query: String) {
            self.name = name
            self.query = query
        }
    }
}
