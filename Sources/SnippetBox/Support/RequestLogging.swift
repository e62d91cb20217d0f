import Vapor

/// Logs each request's method and path, the path as it was sent (percent-encoded). Vapor's own
/// `RouteLoggingMiddleware` logs the path decoded, so `%0A` in a URL wrote a line break into the log
/// and a request could add lines of its own making to it (a NUL, other control characters too).
struct RequestLogging: AsyncMiddleware {
    let level: Logger.Level

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        request.logger.log(level: level, "\(request.method) \(Self.loggedPath(request.url.path))")
        return try await next.respond(to: request)
    }

    /// The path with any control character that is left percent-encoded, so that it stays one line.
    static func loggedPath(_ path: String) -> String {
        guard path.containsControlCharacters else { return path }
        var logged = ""
        for scalar in path.unicodeScalars {
            if scalar.isControlCharacter {
                logged += String(scalar).utf8.map { String(format: "%%%02X", $0) }.joined()
            } else {
                logged.unicodeScalars.append(scalar)
            }
        }
        return logged
    }
}
