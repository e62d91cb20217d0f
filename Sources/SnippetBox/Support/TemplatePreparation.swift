import Foundation
import LeafKit
import Vapor

/// Parses every template in `Views/` when the application boots, into Leaf's cache, and logs each
/// one that does not parse.
///
/// Leaf parses a template the first time a page asks for it: without this, the first list page after
/// a start read and parsed its five templates (and what they extend) while the user waited, about
/// 2.5 ms of its work on the event loop. A template with a syntax error is named in the log at start
/// instead of on the first page that needs it; the server starts anyway, so that every other page works.
///
/// Nothing is done when the cache is off (`RELOAD_TEMPLATES=1`): each page rereads its templates then.
struct TemplatePreparation: LifecycleHandler {
    func didBootAsync(_ application: Application) async throws {
        guard application.leaf.cache.isEnabled else { return }
        for name in Self.templateNames(in: application.directory.viewsDirectory) {
            Self.log(name, try await Self.parse(name, application).get(), application)
        }
    }

    /// `Application.boot()`, which `app.test` calls, is the synchronous way in.
    func didBoot(_ application: Application) throws {
        guard application.leaf.cache.isEnabled else { return }
        for name in Self.templateNames(in: application.directory.viewsDirectory) {
            Self.log(name, try Self.parse(name, application).wait(), application)
        }
    }

    /// The templates' names as pages ask for them: their paths under `Views/` without `.leaf`, sorted.
    static func templateNames(in viewsDirectory: String) -> [String] {
        let root = URL(fileURLWithPath: viewsDirectory, isDirectory: true).standardizedFileURL
        guard let files = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        let rootPath = root.path.hasSuffix("/") ? root.path : root.path + "/"
        return files.compactMap { item -> String? in
            guard let url = item as? URL, url.pathExtension == "leaf" else { return nil }
            let path = url.standardizedFileURL.path
            guard path.hasPrefix(rootPath) else { return nil }
            return String(path.dropFirst(rootPath.count).dropLast(".leaf".count))
        }.sorted()
    }

    /// Has Leaf read, parse, resolve and cache the template `name`; the future holds why it could not,
    /// or nil once the template is in the cache.
    ///
    /// Rendering with no values is the public way to have that done: Leaf caches the parsed template
    /// before it renders it, so an error in rendering (a value a page would have given) says nothing
    /// about the template, and counts only when the template did not reach the cache.
    static func parse(_ name: String, _ application: Application) -> EventLoopFuture<String?> {
        let loop = application.eventLoopGroup.next()
        return application.leaf.renderer.render(path: name, context: [:])
            .map { _ in String?.none }
            .recover { String(describing: $0) }
            .flatMap { renderingError in
                application.leaf.cache.retrieve(documentName: name, on: loop).map { cached in
                    cached == nil ? renderingError ?? "it is not in the cache" : nil
                }
            }
    }

    private static func log(_ name: String, _ failure: String?, _ application: Application) {
        guard let failure else { return }
        application.logger.warning("The template \(name).leaf could not be prepared, and pages that use it will fail: \(failure)")
    }
}
