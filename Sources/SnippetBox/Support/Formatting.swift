import Foundation

/// Dates and short texts as pages show them.
enum Formatting {
    /// A name inside a line of the page's own text, between Unicode's first-strong isolate and pop
    /// isolate: the plain-text form of `<bdi>`, for text a template shows as one string. A name
    /// written right to left then keeps the words after it in their places, and a direction
    /// override inside it ends with it.
    static func isolated(_ name: some StringProtocol) -> String {
        "\u{2068}\(name)\u{2069}"
    }

    /// A name quoted in a sentence of a message, a heading or a page title: “name”, isolated inside
    /// the quotation marks, so that the marks stay around it and the sentence's words in their places.
    static func quoted(_ name: some StringProtocol) -> String {
        "“\(isolated(name))”"
    }

    /// "1 snippet", "2 snippets": a count of snippets in a sentence.
    static func snippets(_ count: Int) -> String {
        count == 1 ? "1 snippet" : "\(count) snippets"
    }

    /// "22 Nov 2026, 14:05" in UTC, the same for every visitor (pages are rendered on the server).
    /// Built from the date's seconds by arithmetic (`utcFields`): a `DateFormatter` made per call cost
    /// a tenth of a list page, and `Calendar.dateComponents` still 2% of a list page's CPU under wrk.
    static func displayDate(_ date: Date) -> String {
        // Foundation's calendar traps on seconds past Int's range; the app stores no such date (an
        // import refuses one), but a store written by another program could hold one.
        guard storableDates.contains(date) else { return "an unreadable date" }
        let fields = utcFields(date) ?? calendarFields(date)
        let month = monthNames[max(0, min(11, fields.month - 1))]
        return "\(fields.day) \(month) \(fields.year), \(twoDigits(fields.hour)):\(twoDigits(fields.minute))"
    }

    typealias DateFields = (year: Int, month: Int, day: Int, hour: Int, minute: Int)

    /// The date's UTC fields in the proleptic Gregorian calendar, from its seconds since 1970: days
    /// counted from 1 March of year 0, so that a leap day ends its year, then split into 400-year
    /// eras of 146,097 days, years of 365 days plus leap days, and months of 153 days per five from
    /// March. Nil outside the years 1583 to 9999: before the Gregorian calendar, Foundation's calendar
    /// counts Julian dates, and a page shows what it did.
    static func utcFields(_ date: Date) -> DateFields? {
        let interval = date.timeIntervalSince1970.rounded(.down)
        guard interval >= firstGregorianSecond, interval < endOfYear9999 else { return nil }
        let seconds = Int(interval)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let fromMarchZero = days + 719_468
        let era = (fromMarchZero >= 0 ? fromMarchZero : fromMarchZero - 146_096) / 146_097
        let dayOfEra = fromMarchZero - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        return (year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month: month,
                day: dayOfYear - (153 * monthFromMarch + 2) / 5 + 1,
                hour: secondOfDay / 3_600, minute: secondOfDay % 3_600 / 60)
    }

    /// 1 January 1583 and 1 January 10000, 00:00 UTC, in seconds since 1970.
    private static let firstGregorianSecond = -12_212_553_600.0
    private static let endOfYear9999 = 253_402_300_800.0

    /// The same fields from Foundation's calendar, for the dates `utcFields` leaves to it.
    static func calendarFields(_ date: Date) -> DateFields {
        let parts = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return (parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1, parts.hour ?? 0, parts.minute ?? 0)
    }

    static func isoDate(_ date: Date) -> String {
        storableDates.contains(date) ? date.formatted(.iso8601) : ""
    }

    /// The dates SnippetBox stores and shows: the years 1 to 9999, UTC. An import refuses others:
    /// `Int(seconds)` traps past about the year 292 billion, and ISO 8601 has four-digit years.
    static let storableDates = Date(timeIntervalSince1970: -62_135_596_800)...Date(timeIntervalSince1970: 253_402_300_799)

    /// A date's whole seconds since 1970, for version stamps in URLs and ETags; `Int(seconds)` traps
    /// on a date past Int's range, which a store written elsewhere could hold.
    static func wholeSeconds(_ date: Date) -> Int {
        let seconds = date.timeIntervalSince1970.rounded(.towardZero)
        return Int(exactly: seconds) ?? (seconds > 0 ? .max : seconds < 0 ? .min : 0)
    }

    /// A date's whole milliseconds since 1970, for an image's version stamp: whole seconds and the
    /// size stayed the same when an image was replaced by one of its size within a second, and the
    /// browser kept showing the old one for a day. Dates past Int's range are clamped, as above.
    static func wholeMilliseconds(_ date: Date) -> Int {
        let milliseconds = (date.timeIntervalSince1970 * 1000).rounded(.towardZero)
        return Int(exactly: milliseconds) ?? (milliseconds > 0 ? .max : milliseconds < 0 ? .min : 0)
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
    ///
    /// Text that is ASCII as far as the excerpt reads (most code) is cut from its UTF-8 bytes, reading
    /// only up to the cut (see `asciiExcerpt`); other text by its scalars and Characters.
    static func excerpt(_ text: String, limit: Int = 140) -> String {
        if let excerpt = asciiExcerpt(text, limit: limit) { return excerpt }
        return excerptByScalars(text, limit: limit)
    }

    /// The excerpt of a text read byte by byte, or nil where the bytes read are not all ASCII.
    ///
    /// In ASCII, every byte is a Character (the one pair that is not, CR LF, is a line break, and
    /// never reaches an excerpt), so the first `limit` bytes of the joined lines are its first `limit`
    /// Characters, provided the byte after them is ASCII too: a combining mark after an ASCII letter
    /// belongs to that letter's Character. The lines are not copied and then joined: a one-line
    /// snippet of 10,000 characters was copied whole for its first 140, a fortieth of a list page.
    static func asciiExcerpt(_ text: String, limit: Int) -> String? {
        let excerpt = text.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            var kept: [UInt8] = []
            kept.reserveCapacity(min(bytes.count, limit + 1))
            var lines = 0
            var position = 0
            while lines < 3, position < bytes.count {
                // The line's trimmed bytes are start..<end, the separator before it a space.
                var start = position
                while start < bytes.count, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
                var end = start
                var cursor = start
                while cursor < bytes.count {
                    let byte = bytes[cursor]
                    // Not ASCII: the scalars take over, before the byte can be read as a line break
                    // (a continuation byte 0x85 is NEL as a scalar).
                    guard byte < 0x80 else { return nil }
                    if isLineBreak(Unicode.Scalar(byte)) { break }
                    cursor += 1
                    guard byte != 0x20, byte != 0x09 else { continue }
                    end = cursor
                    // A byte beyond the limit that stays (not trailing whitespace): the excerpt is cut,
                    // and the byte at the cut is ASCII (checked as the bytes before this one were).
                    if kept.count + (lines > 0 ? 1 : 0) + (end - start) > limit {
                        if lines > 0 { kept.append(0x20) }
                        kept.append(contentsOf: bytes[start..<end])
                        return String(decoding: kept.prefix(limit), as: UTF8.self) + "…"
                    }
                }
                if end > start {
                    if lines > 0 { kept.append(0x20) }
                    kept.append(contentsOf: bytes[start..<end])
                    lines += 1
                }
                // Past the line break: CR LF is two breaks, with an empty line between them.
                position = cursor < bytes.count ? cursor + 1 : cursor
            }
            return String(decoding: kept, as: UTF8.self)
        }
        return excerpt ?? nil
    }

    /// The excerpt of any text, found among its Unicode scalars and cut by Characters.
    static func excerptByScalars(_ text: String, limit: Int = 140) -> String {
        let scalars = text.unicodeScalars
        var lines: [String] = []
        var lineStart = scalars.startIndex
        while lines.count < 3, lineStart < scalars.endIndex {
            let lineEnd = scalars[lineStart...].firstIndex(where: isLineBreak) ?? scalars.endIndex
            var line = scalars[lineStart..<lineEnd]
            while let first = line.first, isWhitespace(first) { line.removeFirst() }
            while let last = line.last, isWhitespace(last) { line.removeLast() }
            if !line.isEmpty { lines.append(String(line)) }
            lineStart = lineEnd == scalars.endIndex ? lineEnd : scalars.index(after: lineEnd)
        }
        let joined = lines.joined(separator: " ")
        // Cut by Characters, so that no letter loses its accent and no emoji is split.
        guard let cut = joined.index(joined.startIndex, offsetBy: limit, limitedBy: joined.endIndex),
              cut < joined.endIndex else { return joined }
        return String(joined[..<cut]) + "…"
    }

    /// Unicode's White_Space property, answered without a property lookup for ASCII: the lookup was
    /// most of an excerpt's cost, and most code is ASCII.
    private static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar == " " || (0x09...0x0D).contains(scalar.value) }
        return scalar.properties.isWhitespace
    }

    /// The scalars that end a line, as `Character.isNewline` has them.
    private static func isLineBreak(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A...0x0D, 0x85, 0x2028, 0x2029: true
        default: false
        }
    }

    /// A file name for a download: the title's letters, digits and dashes, with the language's extension.
    /// A `Content-Disposition` for a download named `name`: a name that is not ASCII goes in
    /// `filename*` (RFC 6266), percent-encoded UTF-8, with an ASCII stand-in in `filename` for
    /// clients that read only that; raw UTF-8 in `filename` is read as Latin-1 by some.
    static func attachment(named name: String) -> String {
        let quotedSafe = name.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" }
        if quotedSafe { return "attachment; filename=\"\(name)\"" }
        let fallback = String(name.folding(options: [.diacriticInsensitive], locale: nil).unicodeScalars.map { scalar -> Character in
            scalar.isASCII && scalar.value >= 0x20 && scalar != "\"" && scalar != "\\" ? Character(scalar) : "_"
        })
        let encoded = name.addingPercentEncoding(withAllowedCharacters: attachmentNameCharacters) ?? fallback
        return "attachment; filename=\"\(fallback)\"; filename*=UTF-8''\(encoded)"
    }

    /// RFC 5987's `attr-char`: what `filename*` may hold unencoded.
    private static let attachmentNameCharacters = CharacterSet(charactersIn:
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&+-.^_`|~")

    static func downloadName(title: String, language: CodingLanguage) -> String {
        let base = String(title.lowercased().map { $0.isLetter || $0.isNumber ? $0 : "-" })
            .split(separator: "-", omittingEmptySubsequences: true).joined(separator: "-")
        let stem = base.isEmpty ? "snippet" : String(base.prefix(60))
        if language == .dockerfile { return "Dockerfile" }
        return "\(stem).\(language.fileExtension)"
    }
}
