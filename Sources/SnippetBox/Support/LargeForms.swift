import Foundation
import MultipartKit
import NIOCore
import Vapor

/// Work on a request's body that grows with its size runs on the thread pool, not on the event loop
/// that carries the request: an event loop serves many connections, one at a time, and a 12 MB
/// import's multipart parse and JSON decoding (17 s in a debug build) held every other connection
/// of its loop for all that time, though they asked for nothing but a page.
enum LargeForms {
    /// Bodies up to this size are read where they arrive: the hop to the thread pool and back would
    /// cost more than the work (every login and small form is far below it).
    static let inlineBytes = 64 * 1024

    /// Runs `work` on the body where the body's size allows: inline for a small one, on the
    /// application's thread pool for a large one.
    static func run<Result: Sendable>(
        on body: ByteBuffer, of request: Request, _ work: @escaping @Sendable (ByteBuffer) throws -> Result
    ) async throws -> Result {
        guard body.readableBytes > inlineBytes else { return try work(body) }
        return try await request.application.threadPool.runIfActive { try work(body) }
    }
}

extension Request {
    /// Decodes the submitted form as `content.decode` does, a large multipart one on the thread pool
    /// (`LargeForms`): a snippet's image, an import's file.
    func decodeForm<Form: Decodable & Sendable>(_ type: Form.Type) async throws -> Form {
        guard let body = body.data, let contentType = headers.contentType,
              contentType.type == "multipart", contentType.subType == "form-data",
              let boundary = contentType.parameters["boundary"] else {
            return try content.decode(Form.self)
        }
        return try await LargeForms.run(on: body, of: self) { body in
            try FormDataDecoder().decode(Form.self, from: body, boundary: boundary)
        }
    }
}
