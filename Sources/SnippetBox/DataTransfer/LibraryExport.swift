import Foundation
import ObjectGraph

/// A whole library as one JSON document: folders, tags, snippets (images inline, base64) and saved
/// searches, each with its id, so that importing it again updates rather than duplicates.
struct LibraryExport: Codable, Equatable, Sendable {
    static let formatName = "snippetbox-export"
    static let currentVersion = 1

    struct FolderRecord: Codable, Equatable, Sendable {
        var uuid: UUID
        var name: String
        var createdAt: Date
    }

    struct TagRecord: Codable, Equatable, Sendable {
        var uuid: UUID
        var name: String
        var color: String
    }

    struct ImageRecord: Codable, Equatable, Sendable {
        var contentType: String
        /// The bytes, base64 in the JSON.
        var data: Data
    }

    struct SnippetRecord: Codable, Equatable, Sendable {
        var uuid: UUID
        var title: String
        var code: String
        var notes: String
        var language: String
        var isFavorite: Bool
        var createdAt: Date
        var updatedAt: Date
        var deletedAt: Date?
        var folder: UUID?
        var tags: [UUID]
        var image: ImageRecord?
    }

    struct SavedSearchRecord: Codable, Equatable, Sendable {
        var uuid: UUID
        var name: String
        var query: String
        var createdAt: Date
    }

    var format = formatName
    var version = currentVersion
    var exportedAt: Date
    var folders: [FolderRecord]
    var tags: [TagRecord]
    var snippets: [SnippetRecord]
    var savedSearches: [SavedSearchRecord]

    init(exportedAt: Date, folders: [FolderRecord], tags: [TagRecord], snippets: [SnippetRecord], savedSearches: [SavedSearchRecord]) {
        self.exportedAt = exportedAt
        self.folders = folders
        self.tags = tags
        self.snippets = snippets
        self.savedSearches = savedSearches
    }

    /// Reads everything in a library, in a stable order (by creation, then id).
    init(from context: ModelContext, at now: Date = .now) throws {
        exportedAt = now
        folders = try context.fetch(FetchDescriptor<Folder>(sortBy: [SortDescriptor(\.createdAt), SortDescriptor(\.name)]))
            .map { FolderRecord(uuid: $0.uuid, name: $0.name, createdAt: $0.createdAt) }
        tags = try context.fetch(FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.normalizedName)]))
            .map { TagRecord(uuid: $0.uuid, name: $0.name, color: $0.color.hex) }
        var descriptor = FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.createdAt), SortDescriptor(\.title)])
        descriptor.relationshipKeyPathsForPrefetching = [\.folder, \.tags]
        var imagesGone: [String] = []
        snippets = try context.fetch(descriptor).map { snippet in
            // Each image file read once: an export holds them all.
            let imageData = snippet.imageData
            // An image file that cannot be read reads as no image: an export would leave it out unsaid.
            if snippet.imageContentType != nil && imageData == nil { imagesGone.append(Formatting.quoted(snippet.title)) }
            return SnippetRecord(
                uuid: snippet.uuid, title: snippet.title, code: snippet.code, notes: snippet.notes,
                language: snippet.language.rawValue, isFavorite: snippet.isFavorite,
                createdAt: snippet.createdAt, updatedAt: snippet.updatedAt, deletedAt: snippet.deletedAt,
                folder: snippet.folder?.uuid, tags: snippet.tags.map(\.uuid).sorted { $0.idString < $1.idString },
                image: zip(imageData, snippet.imageContentType).map { ImageRecord(contentType: $1, data: $0) })
        }
        if let first = imagesGone.first {
            let others = imagesGone.count == 1 ? "" : " (and of \(imagesGone.dropFirst().prefix(9).joined(separator: ", "))"
                + (imagesGone.count > 10 ? " and \(imagesGone.count - 10) more" : "") + ")"
            throw ExportError(
                "the image of \(first)\(others) cannot be read from the data folder, so the export stops rather than "
                    + "leave it out. Remove the image in the snippet's edit form (or choose it again; restore a snippet "
                    + "from the trash first), or ask the administrator to restore its file; `snippetbox check --repair` "
                    + "removes every such image")
        }
        savedSearches = try context.fetch(FetchDescriptor<SavedSearch>(sortBy: [SortDescriptor(\.createdAt), SortDescriptor(\.name)]))
            .map { SavedSearchRecord(uuid: $0.uuid, name: $0.name, query: $0.query, createdAt: $0.createdAt) }
    }

    /// Dates as seconds since 1970, the form other tools read, so that an export, imported, exports the
    /// same. A `Double` of seconds since 1970 keeps about one bit less than the store (see `fileSeconds`).
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }

    /// A date as the file keeps it. The store keeps a date exactly, as seconds since 2001; seconds since
    /// 1970 need one more bit than a `Double` has for most dates since 1985, so a date read from a file
    /// may be 0.1 µs off the library's. An import compares dates in this form, or a file exported and
    /// imported again would update every snippet it already holds.
    static func fileSeconds(_ date: Date) -> Double { date.timeIntervalSince1970 }

    /// Reads an export file, or says in a sentence why it is not one, beginning with `isNot`.
    static func read(_ data: Data, isNot: String = "This is not a SnippetBox export") throws -> LibraryExport {
        let export: LibraryExport
        do {
            export = try decoder().decode(LibraryExport.self, from: data)
        } catch {
            throw ImportError("\(isNot) (\(Self.describe(error))).")
        }
        guard export.format == formatName else { throw ImportError("\(isNot).") }
        guard export.version <= currentVersion else {
            throw ImportError("This export was made by a newer SnippetBox (format \(export.version)); update SnippetBox first.")
        }
        return export
    }

    /// A file to import: a SnippetBox export, or a VS Code snippets file (`isForeign`: its snippets
    /// are only added, never updated, since the file has no dates of its own to compare).
    static func readImport(_ data: Data, fileName: String?, now: Date = .now) throws -> (export: LibraryExport, isForeign: Bool) {
        do {
            return (try read(data, isNot: "This is neither a SnippetBox export nor a VS Code snippets file"), false)
        } catch let error as ImportError {
            guard let snippets = VSCodeSnippets.read(data, fileName: fileName, now: now) else { throw error }
            return (snippets, true)
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "\(Formatting.quoted(key.stringValue)) is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context), DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty ? "not JSON" : "a bad value at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "unreadable"
        }
    }
}

private func zip<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}

struct ExportError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

struct ImportError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What an import did, snippet by snippet.
struct ImportReport: Equatable, Sendable, Encodable {
    var added: [String] = []
    var updated: [String] = []
    /// Already present and identical.
    var unchanged: [String] = []
    /// Not imported, with the reason.
    var skipped: [String] = []
    /// The names of the saved searches added (they were added without a word before).
    var searchesAdded: [String] = []
}

/// Brings an export into a library: snippets, folders, tags and saved searches are matched by id
/// (tags and folders also by name), so importing the same file twice changes nothing the second time.
struct LibraryImporter {
    let context: ModelContext
    let maxImageBytes: Int
    /// When the import runs, which a trashed record's stay in the trash is counted from (`trashedAt`).
    var now = Date.now
    /// Adds the file's snippets the library lacks and leaves those it has alone: for a file of
    /// another program, whose records carry no dates to tell which copy is newer.
    var addsOnly = false

    /// How long a snippet an import puts in the trash stays there at least before the trash empties
    /// itself of it: an old export's trashed snippets kept their dates, and those past the trash's 30
    /// days were purged at the next visit of the trash, though the import said "added".
    static let trashStayAfterImport: TimeInterval = 7 * 86_400

    func run(_ export: LibraryExport) throws -> ImportReport {
        var report = ImportReport()
        // Folders and tags this import adds join the library's own: a file naming one twice (by id,
        // or by a name differing only in case) gets one, as the folder and tag forms allow.
        var existingFolders = try context.fetch(FetchDescriptor<Folder>())
        // A snippet may name a folder or tag of the library by id without the file listing it (a file
        // cut down to some snippets): it was dropped from the snippet, and the report said "updated".
        var foldersByID = Dictionary(existingFolders.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        for record in export.folders {
            let name = record.name.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, name.limitLength <= ValidatedSnippetForm.maxNameLength, !ValidatedSnippetForm.hasControlCharacters(name) else {
                report.skipped.append("folder \(Formatting.quoted(record.name.prefix(40))): not a valid folder name")
                continue
            }
            guard Formatting.storableDates.contains(record.createdAt) else {
                report.skipped.append("folder \(Formatting.quoted(record.name.prefix(40))): \(Self.dateOutOfRange)")
                continue
            }
            if let folder = existingFolders.first(where: { $0.uuid == record.uuid })
                ?? existingFolders.first(where: { $0.name.lowercased() == name.lowercased() }) {
                foldersByID[record.uuid] = folder
            } else {
                let folder = Folder(name: name)
                folder.uuid = record.uuid
                folder.createdAt = record.createdAt
                context.insert(folder)
                existingFolders.append(folder)
                foldersByID[record.uuid] = folder
            }
        }

        var existingTags = try context.fetch(FetchDescriptor<Tag>())
        var tagsByID = Dictionary(existingTags.map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        for record in export.tags {
            let name = record.name.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !name.isEmpty, name.limitLength <= ValidatedSnippetForm.maxNameLength, !name.contains(","),
                  !ValidatedSnippetForm.hasControlCharacters(name), let color = ColorData(hex: record.color) else {
                report.skipped.append("tag \(Formatting.quoted(record.name.prefix(40))): not a valid tag")
                continue
            }
            if let tag = existingTags.first(where: { $0.uuid == record.uuid })
                ?? existingTags.first(where: { $0.normalizedName == Tag.normalize(name) }) {
                tagsByID[record.uuid] = tag
            } else {
                let tag = Tag(name: name, color: color)
                tag.uuid = record.uuid
                context.insert(tag)
                existingTags.append(tag)
                tagsByID[record.uuid] = tag
            }
        }

        let existingSnippets = Dictionary(
            try context.fetch(FetchDescriptor<Snippet>()).map { ($0.uuid, $0) }, uniquingKeysWith: { first, _ in first })
        var importedIDs = Set<UUID>()
        for record in export.snippets {
            if let problem = problem(with: record) {
                report.skipped.append("\(Formatting.quoted(record.title.prefix(60))): \(problem)")
                continue
            }
            // A second record with one id would replace the first (ids are unique), though both were
            // reported as added.
            guard importedIDs.insert(record.uuid).inserted else {
                report.skipped.append("\(Formatting.quoted(record.title.prefix(60))): its id is also an earlier snippet's in this file, which was imported")
                continue
            }
            let snippet: Snippet
            if let existing = existingSnippets[record.uuid] {
                if addsOnly || matches(existing, record, folders: foldersByID, tags: tagsByID) {
                    report.unchanged.append(record.title)
                    continue
                }
                // An older file (an export made before the last edits here) replaced newer work.
                if LibraryExport.fileSeconds(existing.updatedAt) > LibraryExport.fileSeconds(record.updatedAt) {
                    report.skipped.append("\(Formatting.quoted(record.title.prefix(60))): the library's copy was edited after the file's, so it was kept")
                    continue
                }
                snippet = existing
                report.updated.append(record.title)
            } else {
                snippet = Snippet(title: record.title)
                snippet.uuid = record.uuid
                context.insert(snippet)
                report.added.append(record.title)
            }
            let deletedAt = trashedAt(record, existing: existingSnippets[record.uuid])
            apply(record, to: snippet, folders: foldersByID, tags: tagsByID)
            snippet.deletedAt = deletedAt
        }

        // The checks of the save-search form: a trimmed name, one search a name without regard to
        // case. A file naming one id twice kept the second (the first was replaced), and names
        // were neither trimmed nor compared.
        var searches = try context.fetch(FetchDescriptor<SavedSearch>())
        let libraryIDs = Set(searches.map(\.uuid))
        var idsInFile = Set<UUID>()
        for record in export.savedSearches {
            let name = record.name.trimmingCharacters(in: .whitespacesAndNewlines)
            let query = SavedSearchController.storedQuery(record.query)
            guard !name.isEmpty, name.limitLength <= ValidatedSnippetForm.maxNameLength,
                  !ValidatedSnippetForm.hasControlCharacters(name), SavedSearchController.isStorable(query: query),
                  Formatting.storableDates.contains(record.createdAt) else {
                report.skipped.append("saved search \(Formatting.quoted(record.name.prefix(40))): not valid")
                continue
            }
            guard idsInFile.insert(record.uuid).inserted else {
                report.skipped.append("saved search \(Formatting.quoted(name.prefix(40))): its id is also an earlier saved search's in this file, which was imported")
                continue
            }
            // Already here: an earlier import of this file, or the library's own export.
            if libraryIDs.contains(record.uuid) { continue }
            if let named = searches.first(where: { $0.name.lowercased() == name.lowercased() }) {
                if named.query != query {
                    report.skipped.append("saved search \(Formatting.quoted(name.prefix(40))): there is already a saved search of that name")
                }
                continue
            }
            let search = SavedSearch(name: name, query: query)
            search.uuid = record.uuid
            search.createdAt = record.createdAt
            context.insert(search)
            searches.append(search)
            report.searchesAdded.append(name)
        }
        return report
    }

    /// Why a record with a date SnippetBox cannot show is skipped (`Formatting.storableDates`): pages
    /// turn dates into whole seconds and calendar fields, which trap far enough out.
    static let dateOutOfRange = "a date outside the years 1 to 9999"

    /// The same checks as the snippet form, so that an import cannot store what the form refuses.
    private func problem(with record: LibraryExport.SnippetRecord) -> String? {
        let title = record.title.trimmingCharacters(in: .whitespacesAndNewlines)
        if title.isEmpty || title.limitLength > ValidatedSnippetForm.maxTitleLength { return "the title is empty or too long" }
        if ValidatedSnippetForm.hasControlCharacters(title) { return "the title is not one line of text" }
        if CodingLanguage(rawValue: record.language) == nil { return "unknown language \(Formatting.quoted(record.language.prefix(30)))" }
        if record.code.limitLength > ValidatedSnippetForm.maxCodeCharacters || record.notes.limitLength > ValidatedSnippetForm.maxNotesCharacters {
            return "the code or notes are too long"
        }
        if [record.title, record.code, record.notes].contains(where: { $0.contains("\0") }) { return "it contains a NUL character" }
        if ![record.createdAt, record.updatedAt, record.deletedAt].allSatisfy({ $0.map(Formatting.storableDates.contains) ?? true }) {
            return Self.dateOutOfRange
        }
        if let image = record.image {
            if image.data.count > maxImageBytes { return "the image is larger than the upload limit" }
            guard let kind = ImageKind(sniffing: image.data), kind.contentType == image.contentType else {
                return "the image is not the PNG, JPEG, GIF or WebP it claims to be"
            }
        }
        return nil
    }

    /// When the snippet the record makes or updates is in the trash since, or nil for out of it. An
    /// import never puts a snippet of the library back in the trash (an export made while it was
    /// there), and a trashed record stays at least `trashStayAfterImport` before it is purged. Nor
    /// does it take one out of the trash for a record that is not, unless the record was edited after
    /// the snippet went there: an export made before then is older than the trashing, which leaves
    /// the snippet's date of edit as it was.
    private func trashedAt(_ record: LibraryExport.SnippetRecord, existing: Snippet?) -> Date? {
        guard let recorded = record.deletedAt else {
            guard let kept = existing?.deletedAt,
                  LibraryExport.fileSeconds(record.updatedAt) <= LibraryExport.fileSeconds(kept) else { return nil }
            return kept
        }
        // A date still to come (a clock set wrong, a file edited) would keep the snippet in the
        // trash for ever, shown "deleted" years ahead: it counts as trashed now.
        let isAhead = recorded > now
        if let existing {
            guard let kept = existing.deletedAt else { return nil }
            return isAhead || LibraryExport.fileSeconds(recorded) <= LibraryExport.fileSeconds(kept) ? kept : recorded
        }
        return max(isAhead ? now : recorded, now.addingTimeInterval(Self.trashStayAfterImport - Snippet.trashRetention))
    }

    /// Whether `snippet` already is what `apply` would make of `record` (its folder and tags as the
    /// import matched them, by id or by name).
    private func matches(_ snippet: Snippet, _ record: LibraryExport.SnippetRecord, folders: [UUID: Folder], tags: [UUID: Tag]) -> Bool {
        snippet.title == record.title.trimmingCharacters(in: .whitespacesAndNewlines) && snippet.code == record.code && snippet.notes == record.notes
            && snippet.language.rawValue == record.language && snippet.isFavorite == record.isFavorite
            && LibraryExport.fileSeconds(snippet.createdAt) == LibraryExport.fileSeconds(record.createdAt)
            && LibraryExport.fileSeconds(snippet.updatedAt) == LibraryExport.fileSeconds(record.updatedAt)
            && snippet.deletedAt.map(LibraryExport.fileSeconds) == trashedAt(record, existing: snippet).map(LibraryExport.fileSeconds)
            && snippet.folder?.uuid == record.folder.flatMap({ folders[$0]?.uuid })
            && Set(snippet.tags.map(\.uuid)) == Set(record.tags.compactMap { tags[$0]?.uuid })
            && snippet.imageContentType == record.image?.contentType && snippet.imageData == record.image?.data
    }

    private func apply(_ record: LibraryExport.SnippetRecord, to snippet: Snippet, folders: [UUID: Folder], tags: [UUID: Tag]) {
        snippet.retitle(record.title.trimmingCharacters(in: .whitespacesAndNewlines))
        snippet.code = record.code
        snippet.notes = record.notes
        snippet.language = CodingLanguage(rawValue: record.language) ?? .plaintext
        snippet.isFavorite = record.isFavorite
        snippet.createdAt = record.createdAt
        snippet.updatedAt = record.updatedAt
        snippet.folder = record.folder.flatMap { folders[$0] }
        var seen = Set<UUID>()
        snippet.tags = record.tags.filter { seen.insert($0).inserted }.compactMap { tags[$0] }
        snippet.imageData = record.image?.data
        snippet.imageContentType = record.image?.contentType
        snippet.refreshSearchKeywords()
    }
}
