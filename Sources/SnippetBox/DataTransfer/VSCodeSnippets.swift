import Foundation
import Vapor

/// A VS Code snippets file, read as the records of an export so that the importer's checks and
/// report serve it too: people moving their snippets over from the editor had to copy each by hand.
///
/// VS Code keeps a language's snippets in `<language>.json` and snippets for several in
/// `<name>.code-snippets`: one object of named snippets, each with a `body` (a string or its lines),
/// an optional `prefix` (what is typed to insert it), `description` and `scope` (languages, comma
/// separated). The files may hold comments and trailing commas (JSON5 reads them). A snippet's
/// language is its `scope`'s first known one, else the file's name (`swift.json`), else plain text.
enum VSCodeSnippets {
    /// One of the file's snippets. `prefix` and `body` may each be one string or a list.
    private struct Entry: Decodable {
        var prefix: Lines?
        var body: Lines
        var description: Lines?
        var scope: String?
    }

    /// A string, or a list of strings (the lines of a body, the prefixes of a snippet).
    private struct Lines: Decodable {
        var lines: [String]

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let line = try? container.decode(String.self) {
                lines = [line]
            } else {
                lines = try container.decode([String].self)
            }
        }
    }

    /// VS Code's language identifiers that are not SnippetBox's own names for the language.
    private static let languageIDs: [String: CodingLanguage] = [
        "javascriptreact": .javascript, "typescriptreact": .typescript, "shellscript": .shell, "bash": .shell,
        "objective-c": .objectivec, "objective-cpp": .cpp, "dockercompose": .yaml, "jsonc": .json,
    ]

    /// The records of the snippets in `data`, or nil when it is not a VS Code snippets file. Each
    /// snippet's id is made from its name and body, so the same file imported again adds nothing.
    static func read(_ data: Data, fileName: String?, now: Date) -> LibraryExport? {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        guard let entries = try? decoder.decode([String: Entry].self, from: data), !entries.isEmpty else { return nil }
        let fileLanguage = fileName.flatMap { language(named: ($0 as NSString).deletingPathExtension) }
        let snippets = entries.sorted { $0.key < $1.key }.map { name, entry -> LibraryExport.SnippetRecord in
            let code = entry.body.lines.joined(separator: "\n")
            let scoped = entry.scope?.split(separator: ",").lazy.compactMap { language(named: String($0)) }.first
            var notes: [String] = []
            if let description = entry.description?.lines.joined(separator: "\n"), !description.isEmpty { notes.append(description) }
            if let prefixes = entry.prefix?.lines, !prefixes.isEmpty {
                notes.append("VS Code prefix: " + prefixes.map { "`\($0)`" }.joined(separator: ", "))
            }
            return LibraryExport.SnippetRecord(
                uuid: stableID(name: name, code: code), title: name.trimmingCharacters(in: .whitespacesAndNewlines),
                code: code, notes: notes.joined(separator: "\n\n"),
                language: (scoped ?? fileLanguage ?? .plaintext).rawValue, isFavorite: false,
                createdAt: now, updatedAt: now, deletedAt: nil, folder: nil, tags: [], image: nil)
        }
        return LibraryExport(exportedAt: now, folders: [], tags: [], snippets: snippets, savedSearches: [])
    }

    private static func language(named name: String) -> CodingLanguage? {
        let id = name.trimmingCharacters(in: .whitespaces).lowercased()
        return CodingLanguage(rawValue: id) ?? languageIDs[id]
    }

    /// A UUID made from the snippet's name and body (the first 16 bytes of their SHA-256, marked as a
    /// version 8 UUID): the same snippet in the file gets the same id at every import.
    static func stableID(name: String, code: String) -> UUID {
        var bytes = Array(SHA256.hash(data: Data("vscode-snippet\u{0}\(name)\u{0}\(code)".utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
