import Foundation
import Logging
import SnippetBox
import Vapor

// Starts SnippetBox with the settings from the environment (see the README), and prints its URL.
do {
    var environment = try Environment.detect()
    try LoggingSystem.bootstrap(from: &environment)
    let settings = try AppSettings.fromEnvironment()
    let app = try await Application.make(environment)
    do {
        try configure(app, settings: settings)
        let shownHost = settings.host == "0.0.0.0" ? "localhost" : settings.host
        app.logger.notice("SnippetBox is running at http://\(shownHost):\(settings.port)\(settings.basePath)/ (data in \(settings.dataDirectory.path))")
        try await app.execute()
    } catch {
        app.logger.report(error: error)
        try? await app.asyncShutdown()
        throw error
    }
    try await app.asyncShutdown()
} catch {
    FileHandle.standardError.write(Data("snippetbox could not start: \(error)\n".utf8))
    exit(1)
}
