import Vapor

/// Headers that keep the browser from running or framing anything SnippetBox did not serve itself:
/// scripts only from SnippetBox's own files (no inline script, no other origin), no plugins, no
/// framing, no content-type guessing, and no full URLs leaking to other sites. Inline `style`
/// attributes stay allowed: tag colours are set with them.
struct SecurityHeadersMiddleware: AsyncMiddleware {
    static let contentSecurityPolicy = [
        "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
        "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response = try await next.respond(to: request)
        response.headers.replaceOrAdd(name: "Content-Security-Policy", value: Self.contentSecurityPolicy)
        response.headers.replaceOrAdd(name: "X-Content-Type-Options", value: "nosniff")
        response.headers.replaceOrAdd(name: "Referrer-Policy", value: "same-origin")
        response.headers.replaceOrAdd(name: "X-Frame-Options", value: "DENY")
        return response
    }
}
