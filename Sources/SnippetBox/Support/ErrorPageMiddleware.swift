import Vapor

/// Turns errors into friendly HTML pages: "not found" for a missing snippet, the reason for a bad
/// request, and a generic apology (with the detail only in the log) for anything unexpected.
struct ErrorPageMiddleware: AsyncMiddleware {
    let basePath: String

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        do {
            return try await next.respond(to: request)
        } catch {
            let (status, message) = describe(error)
            if status.code >= 500 {
                request.logger.report(error: error)
            }
            let page = ErrorPage(status: Int(status.code), heading: heading(for: status), message: message)
            let context = ErrorContext(title: page.heading, base: basePath, content: page)
            do {
                return try await request.view.render("error", context).encodeResponse(status: status, for: request)
            } catch {
                let response = Response(status: status, body: .init(string: "\(page.heading): \(page.message)"))
                response.headers.replaceOrAdd(name: .contentType, value: "text/plain; charset=utf-8")
                return response
            }
        }
    }

    private func describe(_ error: any Error) -> (HTTPResponseStatus, String) {
        // Before `AbortError`, which Vapor makes every `DecodingError` conform to, with the decoder's
        // own words as its reason ("Value was not of type 'Array<Any>'", "Decoding caught in
        // recursion loop"): a form sent in a shape no page makes is named by its field instead.
        if let decoding = error as? DecodingError {
            return (.badRequest, "The form could not be read (\(Self.summary(of: decoding))). Nothing was saved.")
        }
        if let abort = error as? any AbortError {
            if abort.status == .payloadTooLarge {
                return (abort.status, "That upload is too large. Nothing was saved.")
            }
            return (abort.status, abort.status.code < 500 ? abort.reason : "Something went wrong on the server.")
        }
        if let export = error as? ExportError {
            // Damage in the library, which the user can act on (the reason says how), not a server fault
            // to hide: the page said only "Something went wrong", and the reason was in the log alone.
            // 409: the library's state stops the export, and the page is not titled "Server error".
            return (.conflict, "The export stopped: \(export.description).")
        }
        return (.internalServerError, "Something went wrong on the server. Nothing was changed; try again.")
    }

    private func heading(for status: HTTPResponseStatus) -> String {
        switch status.code {
        case 404: "Not found"
        case 413: "Too large"
        case 400..<500: "That did not work"
        default: "Server error"
        }
    }

    static func summary(of error: DecodingError) -> String {
        // A missing key is not in its context's path: it is named after it.
        let path: [any CodingKey]
        switch error {
        case .keyNotFound(let key, let context): path = context.codingPath + [key]
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): path = context.codingPath
        @unknown default: path = []
        }
        let field = path.map(\.stringValue).joined(separator: ".")
        return field.isEmpty ? "malformed body" : "field \(field)"
    }
}

/// The error page's context: the layout without a sidebar, so that it renders even when the store fails.
struct ErrorContext: Encodable, Sendable {
    let title: String
    let base: String
    let content: ErrorPage
}
