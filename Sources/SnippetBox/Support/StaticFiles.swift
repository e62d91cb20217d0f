import Foundation
import Vapor

/// Serves `Public/` under `<base path>/static/`, so that assets follow the app behind a reverse proxy.
/// Paths are checked component by component: nothing outside the folder can be reached.
struct StaticFiles: Sendable {
    let publicDirectory: String

    @Sendable func serve(req: Request) async throws -> Response {
        let components = req.parameters.getCatchall()
        guard !components.isEmpty,
              components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && !$0.hasPrefix(".") && !$0.contains("\\") })
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
