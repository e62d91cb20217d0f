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
    /// those lines: a snippet can hold thousands of lines and a page lists up to a hundred. Lines are
    /// found among Unicode scalars, not Characters: breaking the text into grapheme clusters to find
    /// them was 5% of the server's time under load. (A "\r\n" splits into two breaks, and the empty
    /// line between them is skipped like any other.)
    static func excerpt(_ text: String, limit: Int = 140) -> String {
        let scalars = text.unicodeScalars
        var lines: [String] = []
        var lineStart = scalars.startIndex
        while lines.count < 3, lineStart < scalars.endIndex {
            let lineEnd = scalars[lineStart...].firstIndex(where: isLineBreak) ?? scalars.endIndex
            var line = scalars[lineStart..<lineEnd]
            while let first = line.first, first.properties.isWhitespace { line.removeFirst() }
            while let last = line.last, last.properties.isWhitespace { line.removeLast() }
            if !line.isEmpty { lines.append(String(line)) }
            lineStart = lineEnd == scalars.endIndex ? lineEnd : scalars.index(after: lineEnd)
        }
        let joined = lines.joined(separator: " ")
        // Cut by Characters, so that no letter loses its accent and no emoji is split.
        guard let cut = joined.index(joined.startIndex, offsetBy: limit, limitedBy: joined.endIndex),
              cut < joined.endIndex else { return joined }
        return String(joined[..<cut]) + "…"
    }

    /// The scalars that end a line, as `Character.isNewline` has them.
    private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: true
        default: false
        }
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
