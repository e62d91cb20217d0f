import Foundation

/// Dates and short texts as pages show them.
enum Formatting {
    /// "22 Nov 2026, 14:05" in UTC, the same for every visitor (pages are rendered on the server).
    /// Built from calendar fields: a `DateFormatter` made per call cost a tenth of a list page.
    static func displayDate(_ date: Date) -> String {
        let parts = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        let month = monthNames[max(0, min(11, (parts.month ?? 1) - 1))]
        return "\(parts.day ?? 1) \(month) \(parts.year ?? 1970), \(twoDigits(parts.hour ?? 0)):\(twoDigits(parts.minute ?? 0))"
    }

    static func isoDate(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    private static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? .gmt
        return calendar
    }()

    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : String(value)
    }

    /// The first non-empty lines of a text, cut to a length, for list excerpts. Reads only as far as
    /// those lines: a snippet can hold thousands of lines and a page lists up to a hundred.
    static func excerpt(_ text: String, limit: Int = 140) -> String {
        var lines: [Substring] = []
        var rest = Substring(text)
        while lines.count < 3, !rest.isEmpty {
            let end = rest.firstIndex(where: \.isNewline) ?? rest.endIndex
            let line = rest[..<end].drop(while: \.isWhitespace)
            let trimmed = line[..<(line.lastIndex { !$0.isWhitespace }.map(line.index(after:)) ?? line.startIndex)]
            if !trimmed.isEmpty { lines.append(trimmed) }
            rest = end == rest.endIndex ? "" : rest[rest.index(after: end)...]
        }
        let joined = lines.joined(separator: " ")
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
