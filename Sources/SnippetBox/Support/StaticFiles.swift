import Foundation
import Vapor

/// Serves `Public/` under `<base path>/static/`, so that assets follow the app behind a reverse proxy.
/// Paths are checked component by component: nothing outside the folder can be reached.
struct StaticFiles: Sendable {
    let publicDirectory: String

    @Sendable func serve(req: Request) async throws -> Response {
        let components = req.parameters.getCatchall()
        guard !components.isEmpty,
              // A NUL ends the path for the file system but not for the content type, which came
              // from the whole name: `app.js%00.html` served the script as HTML.
              components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.hasPrefix(".") && !$0.contains("\\")
                  && !$0.containsControlCharacters })
        else { throw Abort(.notFound) }
        let path = publicDirectory + components.joined(separator: "/")
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw Abort(.notFound)
        }
        let response = try await req.fileio.asyncStreamFile(at: path)
        response.headers.replaceOrAdd(name: .cacheControl, value: "public, max-age=3600")
        return response
    }
}
