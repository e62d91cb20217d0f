import Foundation
import Vapor

extension Request {
    /// The UUID in the route's `:id`; a missing or malformed one is "not found", named after what it points to.
    func modelID(naming noun: String) throws -> UUID {
        guard let text = parameters.get("id"), let id = UUID(uuidString: text) else {
            throw Abort(.notFound, reason: "There is no such \(noun).")
        }
        return id
    }
}
