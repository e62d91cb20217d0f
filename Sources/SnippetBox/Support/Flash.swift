import Vapor

/// A one-time message shown on the next page, kept in the session between a POST and its redirect.
extension Request {
    func flash(_ message: String) {
        session.data["flash"] = message
    }

    /// The message left by the previous action, removed as it is read.
    func takeFlash() -> String? {
        let message = session.data["flash"]
        session.data["flash"] = nil
        return message
    }
}
