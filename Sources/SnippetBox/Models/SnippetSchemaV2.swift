import Foundation
import ObjectGraph

/// The second version of SnippetBox's models, kept as it was stored so that a store of this version can
/// be carried forward by ``SnippetMigrationPlan``: a snippet can be in the trash (`deletedAt`). The app
/// uses the latest version (see the type aliases); indexes and methods live there, since a store gets
/// its indexes when it opens at that version.
public enum SnippetSchemaV2: VersionedSchema {
    public static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    public static var models: [any PersistentModel.Type] { [Snippet.self, Folder.self, Tag.self, SavedSearch.self] }

    @Model public final class Snippet {
        @Attribute(.unique) public var uuid: UUID
        @Attribute(.spotlight) public var title: String = ""
        @Attribute(.spotlight) public var code: String = ""
        @Attribute(.spotlight) public var notes: String = ""
        @Attribute(.spotlight) public var searchKeywords: String = ""
        public var language: CodingLanguage = CodingLanguage.plaintext
        public var isFavorite: Bool = false
        public var createdAt: Date = Date.now
        public var updatedAt: Date = Date.now
        @Attribute(.externalStorage) public var imageData: Data?
        public var imageContentType: String?
        public var folder: Folder?
        @Relationship(inverse: \Tag.snippets) public var tags: [Tag] = []
        public var deletedAt: Date?

        public init(title: String, code: String = "", notes: String = "", language: CodingLanguage = .plaintext) {
            self.uuid = UUID()
            self.title = title
            self.code = code
            self.notes = notes
            self.language = language
        }
    }

    @Model public final class Folder {
        @Attribute(.unique) public var uuid: UUID
        public var name: String
        public var createdAt: Date = Date.now
        @Relationship(deleteRule: .cascade, inverse: \Snippet.folder) public var snippets: [Snippet] = []

        public init(name: String) {
            self.uuid = UUID()
            self.name = name
        }
    }

    @Model public final class Tag {
        @Attribute(.unique) public var uuid: UUID
        @Attribute(.unique) public var normalizedName: String
        public var name: String
        public var color: ColorData
        public var snippets: [Snippet] = []

        public init(name: String, color: ColorData) {
            self.uuid = UUID()
            self.name = name
            self.normalizedName = name.lowercased()
            self.color = color
        }
    }

    @Model public final class SavedSearch {
        @Attribute(.unique) public var uuid: UUID
        public var name: String
        public var query: String
        public var createdAt: Date = Date.now

        public init(name: String, query: String) {
            self.uuid = UUID()
            self.name = name
            self.query = query
        }
    }
}
