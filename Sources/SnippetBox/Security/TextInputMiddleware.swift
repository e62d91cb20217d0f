import Foundation
import MultipartKit
import Vapor

/// Refuses a form whose text is not text: a field that is not valid UTF-8, or a multipart body that
/// cannot be parsed. Vapor's decoders would quietly replace invalid bytes (and store the result)
/// or fail deep inside a handler; here the request gets a 400 with a reason before anything runs.
/// The form's file fields (`fileFieldNames`) are binary and are not checked; any other part is text,
/// with a filename or without: Vapor's decoder reads such a part into a text field all the same.
///
/// While reading the form it keeps its `csrf` field for `CSRFMiddleware`, which then needs no
/// decoder of its own (Vapor's multipart decoder cannot pick one field out of every form reliably).
struct TextInputMiddleware: AsyncMiddleware {
    /// The largest multipart body: the image limit, plus room for the code and notes.
    let maxMultipartBytes: Int

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard let type = request.headers.contentType, request.method != .GET, request.method != .HEAD else {
            return try await next.respond(to: request)
        }
        let isMultipart = type.type == "multipart" && type.subType == "form-data"
        guard isMultipart || type == .urlEncodedForm else { return try await next.respond(to: request) }
        // Vapor collects a streamed body in the route's handler, after middleware; read it here
        // (with the same limits the routes set) so that the whole form is checked.
        if request.body.data == nil {
            let limit = isMultipart ? maxMultipartBytes : request.application.routes.defaultMaxBodySize.value
            _ = try await request.eventLoop.flatSubmit { request.body.collect(max: limit) }.get()
        }
        if let body = request.body.data {
            let boundary = type.parameters["boundary"]
            let fields = try await LargeForms.run(on: body, of: request) { body in
                isMultipart ? try Self.checkMultipart(body, boundary: boundary) : try Self.checkURLEncoded(body)
            }
            request.submittedCSRFToken = fields["csrf"]
        }
        return try await next.respond(to: request)
    }

    static let notText = Abort(.badRequest, reason: "The form holds bytes that are not text (invalid UTF-8), so nothing was saved.")
    static let malformed = Abort(.badRequest, reason: "The form could not be read (malformed multipart body), so nothing was saved.")

    /// The names and values of the text fields the body could be read into (the last of each name).
    typealias TextFields = [String: String]

    /// The forms' file inputs: the snippet's image and the import's file. Only these may hold bytes
    /// that are not text. Any part sent with a filename was taken for a file before, so a title sent
    /// as `name="title"; filename="t.txt"` with invalid bytes was stored with them replaced.
    static let fileFieldNames: Set<String> = ["image", "file"]

    /// The field a part's `Content-Disposition` names, read by MultipartKit's `MultipartPart.name`,
    /// the reading Vapor's form decoder gives the part: the field checked here is the field decoded.
    static func fieldName(inDisposition value: String) -> String? {
        MultipartPart(headers: ["Content-Disposition": value], body: ByteBuffer()).name
    }

    static func checkMultipart(_ body: ByteBuffer, boundary: String?) throws -> TextFields {
        guard let boundary, !boundary.isEmpty else { throw malformed }
        let parser = MultipartParser(boundary: boundary)
        var isFile = false
        var name = ""
        var field: [UInt8] = []
        var invalid = false
        var completedParts = 0
        var fields: TextFields = [:]
        parser.onHeader = { header, value in
            guard header.lowercased() == "content-disposition" else { return }
            name = fieldName(inDisposition: value) ?? ""
            isFile = fileFieldNames.contains(name)
        }
        parser.onBody = { chunk in
            if !isFile { field += chunk.readableBytesView }
        }
        parser.onPartComplete = {
            if !isFile {
                if let text = String(validating: field, as: UTF8.self) { fields[name] = text } else { invalid = true }
            }
            isFile = false
            name = ""
            field = []
            completedParts += 1
        }
        do {
            try parser.execute(body)
        } catch {
            throw malformed
        }
        // The parser accepts a body cut short; a complete one ends with the closing delimiter.
        let tail = String(decoding: body.readableBytesView.suffix(boundary.utf8.count + 8), as: UTF8.self)
        guard completedParts > 0, tail.contains("--\(boundary)--") else { throw malformed }
        if invalid { throw notText }
        return fields
    }

    static func checkURLEncoded(_ body: ByteBuffer) throws -> TextFields {
        guard let text = String(validating: body.readableBytesView, as: UTF8.self) else { throw notText }
        var fields: TextFields = [:]
        for pair in text.split(separator: "&") {
            // `removingPercentEncoding` is nil when the decoded bytes are not UTF-8.
            let pieces = try pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { piece in
                guard let decoded = piece.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else { throw notText }
                return decoded
            }
            if pieces.count == 2 { fields[pieces[0]] = pieces[1] }
        }
        return fields
    }
}

extension Request {
    private struct SubmittedCSRFTokenKey: StorageKey {
        typealias Value = String
    }

    /// The `csrf` field of the submitted form, read by `TextInputMiddleware`.
    var submittedCSRFToken: String? {
        get { storage[SubmittedCSRFTokenKey.self] }
        set { storage[SubmittedCSRFTokenKey.self] = newValue }
    }
}
