import Foundation
import Vapor

/// Cross-site request forgery protection: every session has a random token, every form that
/// changes data carries it in a hidden `csrf` field (or, for scripts, an `X-CSRF-Token` header), and
/// a request that changes data without the session's token is refused before it does anything.
extension Request {
    /// The session's token, made on first use.
    var csrfToken: String {
        if let token = session.data["csrf"] { return token }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let token = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        session.data["csrf"] = token
        return token
    }
}

struct CSRFMiddleware: AsyncMiddleware {
    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        guard request.method != .GET && request.method != .HEAD else {
            return try await next.respond(to: request)
        }
        // Read before the session can make one: a session without a token has no valid form.
        let expected = request.hasSession ? request.session.data["csrf"] : nil
        let sent = request.headers.first(name: "X-CSRF-Token") ?? request.submittedCSRFToken
        guard let expected, let sent, Self.constantTimeEqual(Array(expected.utf8), Array(sent.utf8)) else {
            throw Abort(.forbidden, reason: "This form has expired or did not come from SnippetBox, so nothing was changed. Reload the page and try again.")
        }
        return try await next.respond(to: request)
    }

    /// Compares without stopping at the first difference, so that timing tells nothing about the token.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
