import Vapor

/// Makes the cookie that ends a session match the one that began it. Vapor's sessions middleware ends
/// a session (a logout) with a cookie of its own (`HTTPCookies.Value.expired`): path `/`, no flags.
/// Under a `BASE_PATH` the session cookie's path is that path, so a browser kept the session cookie
/// after logging out (fifth bug hunt). Wraps the sessions middleware and rewrites that cookie with
/// the session cookie's path and flags.
struct SessionCookieEnding: AsyncMiddleware {
    let cookieName: String
    let path: String
    let isSecure: Bool

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let response = try await next.respond(to: request)
        if let cookie = response.cookies[cookieName], cookie.string.isEmpty,
           let expires = cookie.expires, expires.timeIntervalSince1970 <= 0 {
            response.cookies[cookieName] = HTTPCookies.Value(
                string: "", expires: expires, path: path, isSecure: isSecure, isHTTPOnly: true, sameSite: .lax)
        }
        return response
    }
}
