import Vapor

/// Refuses addresses longer than 8 KB (nginx's default) with a message. No page of SnippetBox needs
/// more, and a search or filter URL that long is a mistake or an attack. (Beyond 80 KB of request
/// head, SwiftNIO's HTTP parser closes the connection before the app sees the request.)
struct URLLengthLimitMiddleware: AsyncMiddleware {
    static let maxBytes = 8 * 1024

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard request.url.string.utf8.count <= Self.maxBytes else {
            throw Abort(.uriTooLong, reason: "That address is longer than 8 KB, more than any page of SnippetBox needs; nothing was done.")
        }
        return try await next.respond(to: request)
    }
}
