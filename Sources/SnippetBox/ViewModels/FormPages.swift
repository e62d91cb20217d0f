import Foundation

/// The snippet form, new or edit, with the user's values and a message per invalid field.
struct SnippetFormPage: Encodable, Sendable {
    let isNew: Bool
    let id: String?
    let action: String
    let values: SnippetFormValues
    let errors: [String: String]
    let languages: [Option]
    let folders: [Option]
    let tags: [TagOption]
    let hasImage: Bool
    let maxUploadMB: Int
    /// Set when this form comes back because someone else saved the snippet meanwhile.
    var conflict: String? = nil
}

struct SnippetFormValues: Encodable, Sendable {
    var title: String = ""
    var code: String = ""
    var notes: String = ""
    var language: String = CodingLanguage.plaintext.rawValue
    var folder: String = ""
    var newFolder: String = ""
    var newTags: String = ""
    var isFavorite: Bool = false
    /// The edited snippet's version when the form was opened: a save on an older version than the
    /// stored one is a conflicting edit (another tab or person saved in between).
    var version: String = ""
    /// "1" or "0": whether the edited snippet was a favourite when the form was opened, so that a
    /// save changes the favourite only where the form's checkbox was changed ("" on a new snippet).
    var wasFavorite: String = ""
}

struct ConfirmDeleteSnippetPage: Encodable, Sendable {
    let id: String
    let title: String
}

struct FoldersPage: Encodable, Sendable {
    struct Row: Encodable, Sendable {
        let id: String
        let name: String
        let count: Int
    }
    let rows: [Row]
    let newName: String
    let error: String?
}

struct FolderEditPage: Encodable, Sendable {
    let id: String
    let name: String
    let error: String?
}

struct FolderDeletePage: Encodable, Sendable {
    let id: String
    let name: String
    let count: Int
}

struct TagsPage: Encodable, Sendable {
    struct Row: Encodable, Sendable {
        let id: String
        let name: String
        let count: Int
        let color: String
        let textColor: String
    }
    let rows: [Row]
    let newName: String
    let newColor: String
    let error: String?
}

struct TagEditPage: Encodable, Sendable {
    let id: String
    let name: String
    let color: String
    let error: String?
    let mergeTargets: [Option]
}

struct TagDeletePage: Encodable, Sendable {
    let id: String
    let name: String
    let count: Int
}

struct ErrorPage: Encodable, Sendable {
    let status: Int
    let heading: String
    let message: String
}
