import Foundation
import Vapor

/// Whether the copy a client holds is still current, as RFC 9110 §13.1 reads a conditional GET or
/// HEAD, so that it is answered 304 Not Modified.
///
/// - `If-None-Match` lists entity tags, in one header or several, or is `*`; it matches when any tag
///   equals the response's, weakly compared (`W/"x"` is `"x"`), or is `*`. Comparing the header's
///   text with the tag, as Vapor's file streaming and the image route did, sent the whole body again
///   to a cache holding a weak tag or asking with a list.
/// - Without it, `If-Modified-Since` matches when the representation was last modified no later
///   than that date, to the second (HTTP dates have no fractions).
enum CachedCopy {
    static func isCurrent(_ request: HTTPHeaders, eTag: String?, lastModified: Date?) -> Bool {
        let ifNoneMatch = request[.ifNoneMatch]
        if !ifNoneMatch.isEmpty {
            let listed = ifNoneMatch.flatMap(entityTags(in:))
            if listed.contains("*") { return true }
            guard let eTag else { return false }
            return listed.contains(opaqueTag(eTag))
        }
        guard let lastModified, let since = request.first(name: .ifModifiedSince).flatMap(httpDate(_:)) else { return false }
        return lastModified.timeIntervalSince1970.rounded(.down) <= since.timeIntervalSince1970
    }

    /// The tags of one `If-None-Match` value, each without its `W/`, quotes kept; `*` as itself. A
    /// tag may hold a comma, so the list is split between quoted tags, not at every comma.
    static func entityTags(in header: String) -> [String] {
        var tags: [String] = []
        var rest = Substring(header)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            if rest.isEmpty { return tags }
            if rest.hasPrefix("*") {
                tags.append("*")
                rest = rest.dropFirst()
                continue
            }
            if rest.hasPrefix("W/") { rest = rest.dropFirst(2) }
            guard rest.hasPrefix("\""), let close = rest.dropFirst().firstIndex(of: "\"") else {
                // Not a tag: skip to the next element.
                rest = rest.drop { $0 != "," }
                continue
            }
            tags.append(String(rest[...close]))
            rest = rest[rest.index(after: close)...]
        }
    }

    private static func opaqueTag(_ tag: String) -> String {
        tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag
    }

    /// An HTTP date (IMF-fixdate, the form every client sends and Vapor writes `Last-Modified` in),
    /// which Vapor reads only for its own `Last-Modified` header. A formatter per use: a request asks
    /// once, and a shared one would need a lock.
    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(secondsFromGMT: 0)
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text.trimmingCharacters(in: .whitespaces))
    }
}
