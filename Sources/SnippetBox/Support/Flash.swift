import Vapor

/// A one-time message shown on the next page, kept in the session between a POST and its redirect.
extension Request {
    /// Added to a message not shown yet, rather than replacing it: a change's outcome, redirected to a
    /// list that has its own notice (a folder it names is gone), was lost, and the user never learnt
    /// what the change did.
    func flash(_ message: String) {
        session.data["flash"] = session.data["flash"].map { "\($0) \(message)" } ?? message
    }

    /// The message left by the previous action, removed as it is read.
    func takeFlash() -> String? {
        let message = session.data["flash"]
        session.data["flash"] = nil
        return message
    }
}
