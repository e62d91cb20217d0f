import Foundation
import Vapor

/// Serves `Public/` under `<base path>/static/`, so that assets follow the app behind a reverse proxy.
/// Paths are checked component by component: nothing outside the folder can be reached.
struct StaticFiles: Sendable {
    let publicDirectory: String

    @Sendable func serve(req: Request) async throws -> Response {
        let components = req.parameters.getCatchall()
        guard !components.isEmpty,
              // A NUL ends the path for the file system but not for the content type, which came
              // from the whole name: `app.js%00.html` served the script as HTML.
              components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.hasPrefix(".") && !$0.contains("\\")
                  && !$0.containsControlCharacters })
        else { throw Abort(.notFound) }
        let path = publicDirectory + components.joined(separator: "/")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw Abort(.notFound)
        }
        // Vapor's file streaming answers 400 to a range reaching past the end (which is to be shortened
        // to the file: "bytes=0-1048575" of a smaller file failed) and to a Range it cannot parse (which
        // is to be ignored), 206 with no bytes to one starting at the end (RFC 9110 asks for 416), and
        // serves a range whatever its If-Range. So the range is settled here, and Vapor is given only
        // one it serves as asked.
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let requested = req.headers.first(name: .ifRange) == nil
            ? RequestedRange(header: req.headers.first(name: .range), size: size)
            : .whole // Whether its validator still holds is not known here; the whole file is always right.
        switch requested {
        case .whole, .unsatisfiable:
            req.headers.remove(name: .range)
        case .part(let bytes):
            req.headers.replaceOrAdd(name: .range, value: "bytes=\(bytes.lowerBound)-\(bytes.upperBound)")
        }
        // Whether the cached copy is current is decided here (`CachedCopy`), from the validators
        // Vapor's answer carries: Vapor compares If-None-Match as text and ignores If-Modified-Since.
        // Its answer reads the file only when its body is sent, so one replaced by a 304 costs nothing.
        let conditions = req.headers
        req.headers.remove(name: .ifNoneMatch)
        let response = try await req.fileio.asyncStreamFile(at: path)
        let caching = "public, max-age=3600"
        // A cached copy still current is answered 304 before any range is looked at (RFC 9110 §13.2.2).
        if CachedCopy.isCurrent(conditions, eTag: response.headers.first(name: .eTag), lastModified: response.headers.lastModified?.value) {
            var headers = HTTPHeaders()
            for name in [HTTPHeaders.Name.eTag, .lastModified] {
                if let value = response.headers.first(name: name) { headers.replaceOrAdd(name: name, value: value) }
            }
            headers.replaceOrAdd(name: .cacheControl, value: caching)
            return Response(status: .notModified, headers: headers)
        }
        if requested == .unsatisfiable {
            var headers = HTTPHeaders()
            headers.replaceOrAdd(name: .contentRange, value: "bytes */\(size)")
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
        response.headers.replaceOrAdd(name: .cacheControl, value: caching)
        return response
    }
}

/// What a request's `Range` header asks of a file, as RFC 9110 §14 reads it.
enum RequestedRange: Equatable {
    /// No range, or one to ignore: another unit, bad syntax, or several ranges (which would need a
    /// multipart answer; sending the whole file instead is allowed).
    case whole
    /// These bytes, the last shortened to the file's end.
    case part(ClosedRange<Int>)
    /// A range that starts past the end, or asks for the last 0 bytes: 416.
    case unsatisfiable

    init(header: String?, size: Int) {
        guard let header, let equals = header.firstIndex(of: "="),
              header[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "bytes" else {
            self = .whole
            return
        }
        // Empty list elements are allowed ("bytes=0-9,"), and ignored.
        let specs = header[header.index(after: equals)...].split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard specs.count == 1, let dash = specs[0].firstIndex(of: "-") else {
            self = .whole
            return
        }
        let first = Self.position(specs[0][..<dash]), last = Self.position(specs[0][specs[0].index(after: dash)...])
        switch (first, last) {
        case (nil, .some(let suffixLength)) where specs[0].hasPrefix("-"):
            self = suffixLength > 0 && size > 0 ? .part(max(0, size - suffixLength)...(size - 1)) : .unsatisfiable
        case (.some(let first), _) where specs[0].hasSuffix("-") || last != nil:
            if let last, last < first {
                self = .whole
            } else {
                self = first < size ? .part(first...min(last ?? Int.max, size - 1)) : .unsatisfiable
            }
        default:
            self = .whole
        }
    }

    /// A run of digits, or nil; one too large for an `Int` is `Int.max` (past any file's end).
    private static func position(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text) ?? Int.max
    }
}
