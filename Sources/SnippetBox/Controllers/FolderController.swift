import Foundation
import ObjectGraph
import Vapor

/// Folders: list, create, rename, delete (moving their snippets to Unfiled or deleting them).
struct FolderController: RouteCollection {
    let settings: AppSettings

    func boot(routes: any RoutesBuilder) throws {
        let folders = routes.grouped("folders")
        folders.get(use: index)
        folders.post(use: create)
        folders.group(":id") { folder in
            folder.get { req in req.redirect(to: "\(settings.basePath)/snippets?folder=\(try folderID(req).idString)") }
            folder.get("edit", use: editForm)
            folder.post(use: rename)
            folder.get("delete", use: confirmDelete)
            folder.post("delete", use: delete)
        }
    }

    struct NameInput: Content {
        var name: String?
    }

    @Sendable func index(req: Request) async throws -> View {
        try await indexPage(req, newName: "", error: nil)
    }

    private func indexPage(_ req: Request, newName: String, error: String?) async throws -> View {
        let (sidebar, page) = try await req.store.read { context in
            let presenter = Presenter(context: context)
            let sidebar = try presenter.sidebar(current: "")
            let rows = sidebar.folders.map { FoldersPage.Row(id: $0.id, name: $0.name, count: $0.count) }
            return (sidebar, FoldersPage(rows: rows, newName: newName, error: error))
        }
        return try await req.renderPage("folders", PageContext(
            req, title: "Folders", flash: req.takeFlash(), sidebar: sidebar, content: page))
    }

    /// A folder name, checked: present, short enough, not taken by another folder.
    private func validName(_ input: String?, excluding: UUID?, in context: ModelContext) throws -> Result<String, NameError> {
        let name = (input ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty { return .failure(NameError(message: "Give the folder a name.")) }
        if name.limitLength > ValidatedSnippetForm.maxNameLength {
            return .failure(NameError(message: "Keep folder names to \(ValidatedSnippetForm.maxNameLength) characters or fewer."))
        }
        if ValidatedSnippetForm.hasControlCharacters(name) {
            return .failure(NameError(message: ValidatedSnippetForm.controlCharacterMessage))
        }
        if try Lookup.folder(named: name, excluding: excluding, in: context) != nil {
            return .failure(NameError(message: "There is already a folder named \(Formatting.quoted(name))."))
        }
        return .success(name)
    }

    struct NameError: Error, Sendable {
        let message: String
    }

    @Sendable func create(req: Request) async throws -> Response {
        let input = try req.content.decode(NameInput.self)
        let outcome = try await req.store.write { context -> Result<String, NameError> in
            let outcome = try validName(input.name, excluding: nil, in: context)
            if case .success(let name) = outcome { context.insert(Folder(name: name)) }
            return outcome
        }
        switch outcome {
        case .success(let name):
            req.flash("Folder \(Formatting.quoted(name)) created.")
            return req.redirect(to: "\(settings.basePath)/folders")
        case .failure(let error):
            return try await indexPage(req, newName: input.name ?? "", error: error.message)
                .encodeResponse(status: .unprocessableEntity, for: req)
        }
    }

    @Sendable func editForm(req: Request) async throws -> View {
        let id = try folderID(req)
        return try await editPage(req, id: id, name: nil, error: nil)
    }

    private func editPage(_ req: Request, id: UUID, name: String?, error: String?) async throws -> View {
        let (sidebar, page) = try await req.store.read { context in
            let folder = try Lookup.existingFolder(id, in: context)
            return (try Presenter(context: context).sidebar(current: "folder:\(id.idString)"),
                    FolderEditPage(id: id.idString, name: name ?? folder.name, error: error))
        }
        return try await req.renderPage("folder-edit", PageContext(
            req, title: "Rename folder", flash: nil, sidebar: sidebar, content: page))
    }

    @Sendable func rename(req: Request) async throws -> Response {
        let id = try folderID(req)
        let input = try req.content.decode(NameInput.self)
        let outcome = try await req.store.write { context -> Result<String, NameError> in
            let folder = try Lookup.existingFolder(id, in: context)
            let outcome = try validName(input.name, excluding: id, in: context)
            if case .success(let name) = outcome {
                folder.name = name
                for snippet in folder.snippets { snippet.refreshSearchKeywords() }
            }
            return outcome
        }
        switch outcome {
        case .success(let name):
            req.flash("Folder renamed to \(Formatting.quoted(name)).")
            return req.redirect(to: "\(settings.basePath)/folders")
        case .failure(let error):
            return try await editPage(req, id: id, name: input.name ?? "", error: error.message)
                .encodeResponse(status: .unprocessableEntity, for: req)
        }
    }

    @Sendable func confirmDelete(req: Request) async throws -> View {
        let id = try folderID(req)
        let (sidebar, page) = try await req.store.read { context in
            let folder = try Lookup.existingFolder(id, in: context)
            let folderKey = folder.persistentModelID
            let count = try context.fetchCount(FetchDescriptor(predicate: #Predicate<Snippet> { $0.folder?.persistentModelID == folderKey && $0.deletedAt == nil }))
            return (try Presenter(context: context).sidebar(current: "folder:\(id.idString)"),
                    FolderDeletePage(id: id.idString, name: folder.name, count: count))
        }
        return try await req.renderPage("folder-delete", PageContext(
            req, title: "Delete folder \(Formatting.quoted(page.name))?", flash: nil, sidebar: sidebar, content: page))
    }

    struct DeleteInput: Content {
        /// "move" keeps the snippets, Unfiled; "delete" puts them in the trash.
        var snippets: String?
    }

    @Sendable func delete(req: Request) async throws -> Response {
        let id = try folderID(req)
        let mode = try req.content.decode(DeleteInput.self).snippets ?? "move"
        guard mode == "move" || mode == "delete" else { throw Abort(.badRequest, reason: "Choose whether to keep or delete the snippets.") }
        let (name, count) = try await req.store.write { context -> (String, Int) in
            let folder = try Lookup.existingFolder(id, in: context)
            // The folder's delete rule cascades: every snippet leaves it first, so that none is lost
            // with it. Those already in the trash stay there, to be restored Unfiled.
            let snippets = folder.snippets
            let now = Date.now
            for snippet in snippets {
                if mode == "delete" && snippet.deletedAt == nil { snippet.deletedAt = now }
                snippet.folder = nil
                snippet.refreshSearchKeywords()
            }
            context.delete(folder)
            return (folder.name, snippets.filter { $0.deletedAt == nil || $0.deletedAt == now }.count)
        }
        if count == 0 {
            req.flash("Deleted the folder \(Formatting.quoted(name)).")
        } else if mode == "move" {
            req.flash("Deleted the folder \(Formatting.quoted(name)); its \(count) snippet\(count == 1 ? "" : "s") moved to Unfiled.")
        } else {
            req.flash("Deleted the folder \(Formatting.quoted(name)); its \(count) snippet\(count == 1 ? " is" : "s are") in the trash.")
        }
        return req.redirect(to: "\(settings.basePath)/folders")
    }

    private func folderID(_ req: Request) throws -> UUID {
        try req.modelID(naming: "folder")
    }
}
