import Foundation

/// Dates and short texts as pages show them.
enum Formatting {
    /// "22 Nov 2026, 14:05" in UTC, the same for every visitor (pages are rendered on the server).
    static func displayDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_GB")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "d MMM yyyy, HH:mm"
        return formatter.string(from: date)
    }

    static func isoDate(_ date: Date) -> String {
        ISO8601DateFormatter().string(from: date)
    }

    /// The first non-empty lines of a text, cut to a length, for list excerpts.
    static func excerpt(_ text: String, limit: Int = 140) -> String {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let joined = lines.prefix(3).joined(separator: " ")
        return joined.count > limit ? String(joined.prefix(limit)) + "…" : joined
    }

    /// A file name for a download: the title's letters, digits and dashes, with the language's extension.
    static func downloadName(title: String, language: CodingLanguage) -> String {
        let base = String(title.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
            .split(separator: "-", omittingEmptySubsequences: true).joined(separator: "-")
        let stem = base.isEmpty ? "snippet" : String(base.prefix(60))
        if language == .dockerfile { return "Dockerfile" }
        return "\(stem).\(language.fileExtension)"
    }
}
