import Foundation
import ObjectGraph
import Vapor

/// What the snippet form posts (as multipart, for the image).
struct SnippetFormInput: Content {
    var title: String?
    var language: String?
    var folder: String?
    var newFolder: String?
    var tags: [String]?
    var newTags: String?
    var code: String?
    var notes: String?
    var image: File?
    var removeImage: String?
    var isFavorite: String?
    /// The version of the snippet the form was opened on (see `SnippetFormValues.version`).
    var version: String?
    /// Whether the snippet was a favourite when the form was opened (see `SnippetFormValues.wasFavorite`).
    var wasFavorite: String?
}

/// The form's input, checked: either valid values ready to apply, or a message for each invalid field.
struct ValidatedSnippetForm: Sendable {
    static let maxTitleLength = 200
    static let maxNameLength = 100
    static let maxCodeCharacters = 1_000_000
    static let maxNotesCharacters = 200_000

    var values: SnippetFormValues
    var checkedTags: Set<String>
    var language: CodingLanguage = .plaintext
    var newTagNames: [String] = []
    var image: (data: Data, contentType: String)?
    var removeImage = false
    var errors: [String: String] = [:]

    init(_ input: SnippetFormInput, maxUploadBytes: Int) {
        values = SnippetFormValues(
            title: (input.title ?? "").trimmingCharacters(in: .whitespacesAndNewlines),
            code: (input.code ?? "").replacingOccurrences(of: "\r\n", with: "\n"),
            notes: (input.notes ?? "").replacingOccurrences(of: "\r\n", with: "\n"),
            language: input.language ?? CodingLanguage.plaintext.rawValue,
            folder: input.folder ?? "",
            newFolder: (input.newFolder ?? "").trimmingCharacters(in: .whitespacesAndNewlines),
            newTags: input.newTags ?? "",
            isFavorite: input.isFavorite != nil,
            version: input.version ?? "",
            wasFavorite: input.wasFavorite ?? "")
        checkedTags = Set(input.tags ?? [])
        removeImage = input.removeImage != nil

        if values.title.isEmpty {
            errors["title"] = "Give the snippet a title."
        } else if values.title.limitLength > Self.maxTitleLength {
            errors["title"] = "Keep the title to \(Self.maxTitleLength) characters or fewer."
        } else if Self.hasControlCharacters(values.title) {
            // The edit form's title is one line, which browsers keep without its line breaks: a title
            // holding one changed at every later save.
            errors["title"] = "A title is one line: no line breaks, tabs or other control characters."
        }
        if let language = CodingLanguage(rawValue: values.language) {
            self.language = language
        } else {
            errors["language"] = "Choose a language from the list."
        }
        if !values.folder.isEmpty && UUID(uuidString: values.folder) == nil {
            errors["folder"] = "Choose a folder from the list."
        }
        if values.newFolder.limitLength > Self.maxNameLength {
            errors["newFolder"] = "Keep folder names to \(Self.maxNameLength) characters or fewer."
        } else if Self.hasControlCharacters(values.newFolder) {
            errors["newFolder"] = Self.controlCharacterMessage
        }
        newTagNames = values.newTags.split(separator: ",").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
        if let long = newTagNames.first(where: { $0.limitLength > Self.maxNameLength }) {
            errors["newTags"] = "Tag names must be \(Self.maxNameLength) characters or fewer (“\(Formatting.isolated(long.prefix(20)))…” is not)."
        } else if newTagNames.contains(where: Self.hasControlCharacters) {
            errors["newTags"] = Self.controlCharacterMessage
        }
        if values.code.limitLength > Self.maxCodeCharacters {
            errors["code"] = "The code is longer than \(Self.maxCodeCharacters) characters."
        }
        if values.notes.limitLength > Self.maxNotesCharacters {
            errors["notes"] = "The notes are longer than \(Self.maxNotesCharacters) characters."
        }
        for (field, text) in [("title", values.title), ("code", values.code), ("notes", values.notes)] where text.contains("\0") {
            errors[field] = "This field contains a NUL character, which a snippet cannot hold."
        }
        if let file = input.image, file.data.readableBytes > 0 {
            let data = Data(buffer: file.data)
            if data.count > maxUploadBytes {
                errors["image"] = "The image is larger than \(maxUploadBytes / (1024 * 1024)) MB."
            } else if let kind = ImageKind(sniffing: data) {
                image = (data, kind.contentType)
            } else {
                errors["image"] = "Only PNG, JPEG, GIF and WebP images can be attached; this file is none of those."
            }
        }
        // A form sent back cannot keep a file (the browser empties the file input), and a save after
        // fixing the title stored no image without a word (fifth bug hunt).
        if image != nil, !errors.isEmpty {
            errors["image"] = "Choose the image again: a form sent back with a problem does not keep its file."
        }
    }

    var isValid: Bool { errors.isEmpty }

    /// The folder the form chose was deleted after the form was opened (in another tab, by another
    /// device): the form comes back with the text kept and the folder to choose again.
    struct ChosenFolderGone: Error {
        static let message = "The folder you chose was deleted meanwhile: choose another, or none."
    }

    /// The snippet the form edits is not in the library (deleted after the form was opened, or never
    /// this account's): "not found", with the form and the text sent kept, to copy or to save once
    /// the snippet is restored from the trash.
    struct EditedSnippetGone: Error {
        static let message = "This snippet is not in your library: it was deleted after you opened this form (it may be in the trash), so your changes were not saved. Your version is below: copy it, or restore the snippet from the trash and save again."
    }

    /// The same form with the chosen folder cleared and said to be gone.
    func withChosenFolderGone() -> (values: SnippetFormValues, errors: [String: String]) {
        var values = values
        values.folder = ""
        return (values, ["folder": ChosenFolderGone.message])
    }

    static let controlCharacterMessage = "Names cannot contain control characters such as NUL or line breaks."

    /// Names are one line of text: no NUL, no line breaks, no other control characters.
    static func hasControlCharacters(_ name: String) -> Bool {
        name.containsControlCharacters
    }

    /// Writes the form's values into a snippet, creating the new folder and tags it names. Returns
    /// how many of the checked tags are not in the library (deleted after the form was opened): the
    /// snippet is saved without them, and the caller says so.
    @discardableResult
    func apply(to snippet: Snippet, in context: ModelContext) throws -> Int {
        snippet.retitle(values.title)
        snippet.code = values.code
        snippet.notes = values.notes
        snippet.language = language
        // Left as it is unless this form changed it: marking a favourite does not make a new version
        // (it is not an edit, and would move the snippet up "recently updated"), so an edit form
        // opened before the star was clicked in another tab would otherwise quietly undo it.
        if values.wasFavorite.isEmpty || values.isFavorite != (values.wasFavorite == "1") {
            snippet.isFavorite = values.isFavorite
        }
        snippet.updatedAt = Date.now

        if !values.newFolder.isEmpty {
            // The folder of that name but for case, as the folders page would refuse a second one.
            let existing = try Lookup.folder(named: values.newFolder, in: context)
            let folder = existing ?? Folder(name: values.newFolder)
            if existing == nil { context.insert(folder) }
            snippet.folder = folder
        } else if let id = UUID(uuidString: values.folder) {
            guard let folder = try Lookup.folder(id, in: context) else { throw ChosenFolderGone() }
            snippet.folder = folder
        } else {
            snippet.folder = nil
        }

        var tags: [Tag] = []
        var checkedTagsGone = 0
        for id in checkedTags.compactMap(UUID.init(uuidString:)) {
            if let tag = try Lookup.tag(id, in: context) { tags.append(tag) } else { checkedTagsGone += 1 }
        }
        var colorIndex = try context.fetchCount(FetchDescriptor<Tag>())
        for name in newTagNames {
            if let existing = try Lookup.tag(named: name, in: context) {
                if !tags.contains(where: { $0 === existing }) { tags.append(existing) }
            } else if !tags.contains(where: { $0.normalizedName == Tag.normalize(name) }) {
                let tag = Tag(name: name, color: ColorData.palette[colorIndex % ColorData.palette.count])
                colorIndex += 1
                context.insert(tag)
                tags.append(tag)
            }
        }
        snippet.tags = tags.sorted { $0.normalizedName < $1.normalizedName }

        snippet.refreshSearchKeywords()
        if let image {
            snippet.imageData = image.data
            snippet.imageContentType = image.contentType
        } else if removeImage {
            snippet.imageData = nil
            snippet.imageContentType = nil
        }
        return checkedTagsGone
    }

    /// What the flash after a save adds when checked tags were gone (see `apply`).
    static func checkedTagsGoneNotice(_ count: Int) -> String {
        switch count {
        case 0: ""
        case 1: " A tag you checked is no longer in your library (deleted meanwhile?), so the snippet does not have it."
        default: " \(count) tags you checked are no longer in your library (deleted meanwhile?), so the snippet does not have them."
        }
    }
}

extension String {
    /// The length the forms' limits count: Unicode scalars, not characters. A character may hold any
    /// number of combining marks, so a "1-character" title of 40,000 accents (80 KB) passed the
    /// 200-character limit, and its ZIP entry name trapped ZIPFoundation (over 64 KB); a note of a
    /// million marks was "1 character" long and took seconds to save and to show.
    var limitLength: Int { unicodeScalars.count }

    /// Whether the text holds a control character (NUL, a line break, a tab, …), which names, paths,
    /// passwords and log lines refuse or escape.
    var containsControlCharacters: Bool { unicodeScalars.contains(where: \.isControlCharacter) }
}

extension Unicode.Scalar {
    var isControlCharacter: Bool { properties.generalCategory == .control }
}
