import Foundation
import ObjectGraph
import Vapor

/// Your data out and in: the JSON export (everything, images inline) and its import, a ZIP of plain
/// files by folder, and, for an administrator, a backup of the whole data directory.
struct DataController {
    let settings: AppSettings

    /// An export with images can be far larger than one snippet's upload.
    static let importLimit = ByteCount(value: 200 * 1024 * 1024)

    func boot(pages: any RoutesBuilder, imports: any RoutesBuilder) {
        let data = pages.grouped("data")
        data.get(use: index)
        data.get("export.json", use: exportJSON)
        data.get("export.zip", use: exportZip)
        data.grouped(RequireAdminMiddleware()).post("backup", use: backup)
        imports.grouped("data").on(.POST, "import", body: .collect(maxSize: Self.importLimit), use: importJSON)
    }

    struct DataPage: Encodable, Sendable {
        let snippetCount: Int
        let isAdmin: Bool
        let backups: [String]
        let backupEveryHours: Int
        var report: ImportReport?
        var error: String?
    }

    @Sendable func index(req: Request) async throws -> View {
        try await render(req, report: nil, error: nil)
    }

    private func render(_ req: Request, report: ImportReport?, error: String?, status: HTTPStatus = .ok) async throws -> View {
        let (sidebar, count) = try await req.store.read { context in
            (try Presenter(context: context).sidebar(current: ""), try context.fetchCount(FetchDescriptor<Snippet>()))
        }
        let isAdmin = req.account?.isAdmin == true
        let backups = isAdmin ? BackupArchive.list(in: settings.backupDirectory).map(\.lastPathComponent) : []
        let page = DataPage(snippetCount: count, isAdmin: isAdmin, backups: backups, backupEveryHours: settings.backupEveryHours,
                            report: report, error: error)
        return try await req.renderPage("data", PageContext(req, title: "Export and import", flash: req.takeFlash(), sidebar: sidebar, content: page))
    }

    private func export(_ req: Request) async throws -> LibraryExport {
        try await req.store.read { try LibraryExport(from: $0) }
    }

    private func attachment(_ data: Data, type: String, name: String) -> Response {
        let response = Response(status: .ok, body: .init(data: data))
        response.headers.replaceOrAdd(name: .contentType, value: type)
        response.headers.replaceOrAdd(name: .contentDisposition, value: Formatting.attachment(named: name))
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return response
    }

    private func fileStem(_ req: Request) -> String {
        "snippetbox-\(req.account?.username ?? "export")-\(ListQuery.dayString(.now))"
    }

    @Sendable func exportJSON(req: Request) async throws -> Response {
        let export = try await export(req)
        // Encoding a library's images as base64 grows with the library: on the thread pool.
        let data = try await req.application.threadPool.runIfActive { try LibraryExport.encoder().encode(export) }
        return attachment(data, type: "application/json; charset=utf-8", name: "\(fileStem(req)).json")
    }

    @Sendable func exportZip(req: Request) async throws -> Response {
        let export = try await export(req)
        let data = try await req.application.threadPool.runIfActive { try FolderArchive.make(export) }
        return attachment(data, type: "application/zip", name: "\(fileStem(req)).zip")
    }

    struct ImportInput: Content {
        var file: File?
    }

    @Sendable func importJSON(req: Request) async throws -> Response {
        guard let file = try await req.decodeForm(ImportInput.self).file, file.data.readableBytes > 0 else {
            return try await render(req, report: nil, error: "Choose an export file (.json) to import.")
                .encodeResponse(status: .unprocessableEntity, for: req)
        }
        let export: LibraryExport
        let isForeign: Bool
        let fileName = file.filename
        do {
            (export, isForeign) = try await LargeForms.run(on: file.data, of: req) {
                try LibraryExport.readImport(Data(buffer: $0), fileName: fileName)
            }
        } catch let error as ImportError {
            return try await render(req, report: nil, error: "\(error.description) Nothing was imported.")
                .encodeResponse(status: .unprocessableEntity, for: req)
        }
        let maxImageBytes = settings.maxUploadBytes
        let report = try await req.store.write { context in
            var importer = LibraryImporter(context: context, maxImageBytes: maxImageBytes)
            importer.addsOnly = isForeign
            return try importer.run(export)
        }
        return try await render(req, report: report, error: nil).encodeResponse(for: req)
    }

    /// Writes a backup archive into `DATA_DIR/backups` and sends it.
    @Sendable func backup(req: Request) async throws -> Response {
        let written = try await Housekeeping.backUp(req.application)
        let url = written.archive
        // The archive is a download, so the page stays: the next page shows what it lacks.
        if !written.warnings.isEmpty {
            req.flash("The backup was written, but it is not whole. " + written.warnings.joined(separator: " "))
        }
        let response = try await req.fileio.asyncStreamFile(at: url.path)
        response.headers.replaceOrAdd(name: .contentType, value: "application/zip")
        response.headers.replaceOrAdd(name: .contentDisposition, value: Formatting.attachment(named: url.lastPathComponent))
        response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
        return response
    }
}
