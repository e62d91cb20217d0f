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
            let imageExtension = snippet.image.map { ImageKind(sniffing: $0.data)?.fileExtension ?? "bin" }
            let files = unique("\(folder)/\(safeName(snippet.title))", in: &used) { stem in
                (code: "\(stem).\(language.fileExtension)", notes: snippet.notes.isEmpty ? nil : "\(stem).notes.md",
                 image: imageExtension.map { "\(stem).\($0)" })
            }
            try add(Data(snippet.code.utf8), at: files.code, to: archive, date: snippet.updatedAt)
            if let notes = files.notes {
                try add(Data(snippet.notes.utf8), at: notes, to: archive, date: snippet.updatedAt)
            }
            if let image = snippet.image, let path = files.image {
                try add(image.data, at: path, to: archive, date: snippet.updatedAt)
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
            scalar.isControlCharacter || "/\\:*?\"<>|".unicodeScalars.contains(scalar) ? "-" : Character(scalar)
        }).trimmingCharacters(in: .whitespaces)
        // At most 80 characters and 120 bytes of UTF-8: a ZIP entry's name is at most 65,535 bytes
        // (ZIPFoundation traps beyond), and one character may be any number of bytes long.
        var trimmed = ""
        var bytes = 0
        for scalar in cleaned.drop(while: { $0 == "." }).unicodeScalars {
            bytes += scalar.utf8.count
            guard bytes <= maximumNameBytes else { break }
            trimmed.unicodeScalars.append(scalar)
        }
        trimmed = String(trimmed.prefix(80))
        return trimmed.isEmpty ? "untitled" : trimmed
    }

    static let maximumNameBytes = 120

    /// A snippet's file paths, made by `paths` from `stem`, or `stem (2)`, `stem (3)`… so that none is
    /// a path already written: two snippets with one title keep both files. Every path is checked, not
    /// only the stem: `setup` with notes (`setup.notes.md`) and a Markdown snippet titled `setup.notes`
    /// wrote two entries of one path, and unpacking kept one of them.
    private static func unique(
        _ stem: String, in used: inout Set<String>, paths: (String) -> (code: String, notes: String?, image: String?)
    ) -> (code: String, notes: String?, image: String?) {
        var candidate = stem
        var number = 2
        func all(_ files: (code: String, notes: String?, image: String?)) -> [String] {
            [files.code, files.notes, files.image].compactMap { $0?.lowercased() }
        }
        while all(paths(candidate)).contains(where: used.contains) {
            candidate = "\(stem) (\(number))"
            number += 1
        }
        let files = paths(candidate)
        used.formUnion(all(files))
        return files
    }
}
