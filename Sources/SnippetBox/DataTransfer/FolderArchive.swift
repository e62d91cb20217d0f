import Foundation
import ZIPFoundation

/// A library as a ZIP of plain files, one folder per SnippetBox folder ("Unfiled" for the rest):
/// each snippet's code under its title with the language's extension, its notes beside it as
/// Markdown, and its image. For reading and reusing elsewhere; the JSON export is the one to import.
enum FolderArchive {
    static func make(_ export: LibraryExport) throws -> Data {
        let archive = try Archive(accessMode: .create)
        let folderNames = Dictionary(export.folders.map { ($0.uuid, safeName($0.name)) }, uniquingKeysWith: { first, _ in first })
        var used = Set<String>()
        for snippet in export.snippets where snippet.deletedAt == nil {
            let folder = snippet.folder.flatMap { folderNames[$0] } ?? "Unfiled"
            let language = CodingLanguage(rawValue: snippet.language) ?? .plaintext
            let stem = unique("\(folder)/\(safeName(snippet.title))", extensions: [language.fileExtension], in: &used)
            try add(Data(snippet.code.utf8), at: "\(stem).\(language.fileExtension)", to: archive, date: snippet.updatedAt)
            if !snippet.notes.isEmpty {
                try add(Data(snippet.notes.utf8), at: "\(stem).notes.md", to: archive, date: snippet.updatedAt)
            }
            if let image = snippet.image {
                let ext = ImageKind(sniffing: image.data)?.fileExtension ?? "bin"
                try add(image.data, at: "\(stem).\(ext)", to: archive, date: snippet.updatedAt)
            }
        }
        guard let data = archive.data else { throw ImportError("The ZIP archive could not be made.") }
        return data
    }

    /// The dates a ZIP entry can carry (MS-DOS dates; ZIPFoundation turns a later or earlier date into
    /// a `time_t` first, which traps past Int's range).
    private static let entryDates = Date(timeIntervalSince1970: 315_532_800)...Date(timeIntervalSince1970: 4_102_444_799)

    private static func add(_ data: Data, at path: String, to archive: Archive, date: Date) throws {
        let date = min(max(date, entryDates.lowerBound), entryDates.upperBound)
        try archive.addEntry(with: path, type: .file, uncompressedSize: Int64(data.count), modificationDate: date,
                             compressionMethod: .deflate) { position, size in
            data.subdata(in: Int(position)..<Int(position) + size)
        }
    }

    /// A file name from a title: no path separators, no control or reserved characters, not empty,
    /// not starting with a dot, at most 80 characters.
    static func safeName(_ text: String) -> String {
        let cleaned = String(text.unicodeScalars.map { scalar -> Character in
            scalar.properties.generalCategory == .control || "/\\:*?\"<>|".unicodeScalars.contains(scalar) ? "-" : Character(scalar)
        }).trimmingCharacters(in: .whitespaces)
        let trimmed = String(cleaned.drop { $0 == "." }.prefix(80))
        return trimmed.isEmpty ? "untitled" : trimmed
    }

    /// `stem`, or `stem (2)`, `stem (3)`… so that two snippets with one title keep both files.
    private static func unique(_ stem: String, extensions: [String], in used: inout Set<String>) -> String {
        var candidate = stem
        var number = 2
        while used.contains(candidate.lowercased()) {
            candidate = "\(stem) (\(number))"
            number += 1
        }
        used.insert(candidate.lowercased())
        return candidate
    }
}
