import Foundation
import ObjectGraph
import Vapor

/// Snippets: the list, one snippet, its form, and the actions on it.
struct SnippetController: RouteCollection {
    let settings: AppSettings

    func boot(routes: any RoutesBuilder) throws {
        let snippets = routes.grouped("snippets")
        let uploadLimit = Self.uploadLimit(settings)
        snippets.get(use: list)
        snippets.get("new", use: newForm)
        snippets.on(.POST, body: .collect(maxSize: uploadLimit), use: create)
        snippets.group(":id") { snippet in
            snippet.get(use: show)
            snippet.on(.POST, body: .collect(maxSize: uploadLimit), use: update)
            snippet.get("edit", use: editForm)
            snippet.get("delete", use: confirmDelete)
            snippet.post("delete", use: delete)
            snippet.post("favorite", use: toggleFavorite)
            snippet.post("move", use: move)
            snippet.get("raw", use: raw)
            snippet.get("download", use: download)
            snippet.get("image", use: image)
        }
    }

    /// The largest snippet form: the image limit, plus room for the code and notes.
    static func uploadLimit(_ settings: AppSettings) -> ByteCount {
        ByteCount(value: settings.maxUploadBytes + 2 * 1024 * 1024)
    }

    // MARK: Pages

    @Sendable func list(req: Request) async throws -> Response {
        try await listPage(req, selected: nil)
    }

    @Sendable func show(req: Request) async throws -> Response {
        try await listPage(req, selected: try snippetID(req))
    }

    /// What the list page's read found: the page, or a folder or tag the query names that is gone.
    private enum ListPageOutcome: Sendable {
        case page(Sidebar, SnippetListPage)
        case choicesDeleted(ListQuery, notice: String)
    }

    private func listPage(_ req: Request, selected: UUID?) async throws -> Response {
        let query = ListQuery(query: req.query)
        let outcome = try await req.store.read { context -> ListPageOutcome in
            let foldersAndTags = try FoldersAndTags(context: context)
            // A link or saved search naming a folder or tag deleted since is sent to the list without it.
            if query.folder != nil || !query.tags.isEmpty, let (kept, notice) = query.withoutDeletedChoices(in: foldersAndTags) {
                return .choicesDeleted(kept, notice: notice)
            }
            let presenter = Presenter(context: context)
            var selectedDetail: SnippetDetail?
            if let selected {
                guard let snippet = try Lookup.snippet(selected, in: context) else {
                    throw Abort(.notFound, reason: "There is no such snippet; it may have been deleted.")
                }
                selectedDetail = presenter.detail(snippet)
            }
            let results = try SnippetList(query: query, context: context, foldersAndTags: foldersAndTags).load()
            let rows = results.snippets.map { presenter.row($0.snippet, selectedID: selected, excerpts: $0.excerpts) }
            let isStoreEmpty = try rows.isEmpty && context.fetchCount(FetchDescriptor<Snippet>()) == 0
            let page = SnippetListPage(
                heading: results.heading, filterQuery: query.queryString(),
                rows: rows, selected: selectedDetail, isStoreEmpty: isStoreEmpty,
                // Only the shown snippet's "move to folder" menu lists the folders.
                folderOptions: selectedDetail == nil ? [] : try presenter.folderOptions(
                    selected: selectedDetail?.folderID, folders: foldersAndTags.folders),
                form: results.form, pagination: results.pagination, isSearch: query.isSearch, hasRows: !rows.isEmpty)
            return .page(try presenter.sidebar(current: query.sidebarKey, foldersAndTags: foldersAndTags), page)
        }
        let (sidebar, loaded): (Sidebar, SnippetListPage)
        switch outcome {
        case .page(let shownSidebar, let shownPage):
            (sidebar, loaded) = (shownSidebar, shownPage)
        case .choicesDeleted(let kept, let notice):
            req.flash(notice)
            let path = selected.map { "\(settings.basePath)/snippets/\($0.idString)" } ?? "\(settings.basePath)/snippets"
            return req.redirect(to: path + kept.queryString())
        }
        var page = loaded
        page.formHTML = try await req.application.renderedFragments.html(
            "list-form", ListFormFragment(base: req.settings.basePath, form: page.form), for: req)
        page.rowsHTML = try await req.application.renderedFragments.html(
            "snippet-rows", SnippetRowsFragment(base: req.settings.basePath, filterQuery: page.filterQuery, rows: page.rows), for: req)
        return try await req.renderPage("snippets", PageContext(
            req, title: page.selected.map { Formatting.isolated($0.title) } ?? page.heading, flash: req.takeFlash(),
            sidebar: sidebar, content: page)).encodeResponse(for: req)
    }

    @Sendable func newForm(req: Request) async throws -> View {
        var values = SnippetFormValues()
        if let folder = try? req.query.get(String.self, at: "folder"), UUID(uuidString: folder) != nil { values.folder = folder }
        return try await formPage(req, id: nil, values: values, checkedTags: [], errors: [:], hasImage: false)
    }

    @Sendable func editForm(req: Request) async throws -> View {
        let id = try snippetID(req)
        let (values, tags, hasImage) = try await req.store.read { context in
            let snippet = try Lookup.existingSnippet(id, in: context)
            let values = SnippetFormValues(
                title: snippet.title, code: snippet.code, notes: snippet.notes, language: snippet.language.rawValue,
                folder: snippet.folder?.uuid.idString ?? "", isFavorite: snippet.isFavorite,
                version: snippet.editVersion, wasFavorite: snippet.isFavorite ? "1" : "0")
            return (values, Set(snippet.tags.map(\.uuid.idString)), snippet.imageContentType != nil)
        }
        return try await formPage(req, id: id, values: values, checkedTags: tags, errors: [:], hasImage: hasImage)
    }

    private func formPage(
        _ req: Request, id: UUID?, values: SnippetFormValues, checkedTags: Set<String>, errors: [String: String], hasImage: Bool,
        conflict: String? = nil
    ) async throws -> View {
        let settings = self.settings
        let (sidebar, page) = try await req.store.read { context in
            let presenter = Presenter(context: context)
            let page = SnippetFormPage(
                isNew: id == nil, id: id?.idString,
                action: id.map { "\(settings.basePath)/snippets/\($0.idString)" } ?? "\(settings.basePath)/snippets",
                values: values, errors: errors,
                languages: presenter.languageOptions(selected: values.language),
                folders: try presenter.folderOptions(selected: values.folder),
                tags: try presenter.tagOptions(checked: checkedTags),
                hasImage: hasImage, maxUploadMB: settings.maxUploadMegabytes, conflict: conflict)
            return (try presenter.sidebar(current: ""), page)
        }
        return try await req.renderPage("snippet-form", PageContext(
            req, title: id == nil ? "New snippet" : "Edit \(Formatting.quoted(values.title))", flash: req.takeFlash(),
            sidebar: sidebar, content: page))
    }

    // MARK: Actions

    @Sendable func create(req: Request) async throws -> Response {
        let form = ValidatedSnippetForm(try await req.decodeForm(SnippetFormInput.self), maxUploadBytes: settings.maxUploadBytes)
        guard form.isValid else {
            return try await formPage(req, id: nil, values: form.values, checkedTags: form.checkedTags,
                                      errors: form.errors, hasImage: false)
                .encodeResponse(status: .unprocessableEntity, for: req)
        }
        let (id, checkedTagsGone): (UUID, Int)
        do {
            (id, checkedTagsGone) = try await req.store.write { context in
                let snippet = Snippet(title: form.values.title)
                context.insert(snippet)
                let checkedTagsGone = try form.apply(to: snippet, in: context)
                return (snippet.uuid, checkedTagsGone)
            }
        } catch is ValidatedSnippetForm.ChosenFolderGone {
            return try await chosenFolderGonePage(req, id: nil, form: form)
        }
        req.flash("Snippet created." + ValidatedSnippetForm.checkedTagsGoneNotice(checkedTagsGone))
        return req.redirect(to: "\(settings.basePath)/snippets/\(id.idString)")
    }

    @Sendable func update(req: Request) async throws -> Response {
        let id = try snippetID(req)
        let form = ValidatedSnippetForm(try await req.decodeForm(SnippetFormInput.self), maxUploadBytes: settings.maxUploadBytes)
        guard form.isValid else {
            return try await formPage(req, id: id, values: form.values, checkedTags: form.checkedTags,
                                      errors: form.errors, hasImage: try await storedSnippetHasImage(req, id: id))
                .encodeResponse(status: .unprocessableEntity, for: req)
        }
        let outcome: SaveOutcome
        do {
            outcome = try await req.store.write { context -> SaveOutcome in
                guard let snippet = try Lookup.snippet(id, in: context) else { throw ValidatedSnippetForm.EditedSnippetGone() }
                // A form opened on an older version would silently undo someone else's save.
                if !form.values.version.isEmpty && form.values.version != snippet.editVersion {
                    return .conflict(version: snippet.editVersion, isFavorite: snippet.isFavorite)
                }
                return .saved(checkedTagsGone: try form.apply(to: snippet, in: context))
            }
        } catch is ValidatedSnippetForm.ChosenFolderGone {
            return try await chosenFolderGonePage(req, id: id, form: form)
        } catch is ValidatedSnippetForm.EditedSnippetGone {
            return try await formPage(
                req, id: id, values: form.values, checkedTags: form.checkedTags, errors: [:], hasImage: false,
                conflict: ValidatedSnippetForm.EditedSnippetGone.message)
                .encodeResponse(status: .notFound, for: req)
        }
        switch outcome {
        case .saved(let checkedTagsGone):
            req.flash("Snippet saved." + ValidatedSnippetForm.checkedTagsGoneNotice(checkedTagsGone))
            return req.redirect(to: "\(settings.basePath)/snippets/\(id.idString)")
        case .conflict(let version, let isFavorite):
            // Saved again, the form replaces the stored version. Its favourite box shows the stored
            // star unless this form changed it: shown unticked as the form had it, beside the stored
            // star as the value it was opened with, saving again took away a star set elsewhere.
            var values = form.values
            if values.wasFavorite.isEmpty || values.isFavorite == (values.wasFavorite == "1") { values.isFavorite = isFavorite }
            values.version = version
            values.wasFavorite = isFavorite ? "1" : "0"
            return try await formPage(
                req, id: id, values: values, checkedTags: form.checkedTags, errors: [:],
                hasImage: try await storedSnippetHasImage(req, id: id),
                conflict: "This snippet was saved elsewhere (another tab or window?) after you opened this form, so your changes were not saved. Your version is below: save again to replace the other one, or reload the latest version.")
                .encodeResponse(status: .conflict, for: req)
        }
    }

    /// What an update's write did: saved the form, or found a newer version than the form's.
    private enum SaveOutcome: Sendable {
        case saved(checkedTagsGone: Int)
        case conflict(version: String, isFavorite: Bool)
    }

    /// Whether the stored snippet has an image, for a form shown again (its "remove the image" box).
    private func storedSnippetHasImage(_ req: Request, id: UUID) async throws -> Bool {
        try await req.store.read { try Lookup.snippet(id, in: $0)?.imageContentType != nil }
    }

    /// The form again, with what was typed, when the folder it chose was deleted meanwhile: 422.
    private func chosenFolderGonePage(_ req: Request, id: UUID?, form: ValidatedSnippetForm) async throws -> Response {
        let (values, errors) = form.withChosenFolderGone()
        var hasImage = false
        if let id { hasImage = try await storedSnippetHasImage(req, id: id) }
        return try await formPage(req, id: id, values: values, checkedTags: form.checkedTags, errors: errors, hasImage: hasImage)
            .encodeResponse(status: .unprocessableEntity, for: req)
    }

    @Sendable func confirmDelete(req: Request) async throws -> View {
        let id = try snippetID(req)
        let (sidebar, page) = try await req.store.read { context in
            let snippet = try Lookup.existingSnippet(id, in: context)
            return (try Presenter(context: context).sidebar(current: ""), ConfirmDeleteSnippetPage(id: id.idString, title: snippet.title))
        }
        return try await req.renderPage("snippet-delete", PageContext(
            req, title: "Delete \(Formatting.quoted(page.title))?", flash: nil, sidebar: sidebar, content: page))
    }

    /// Moves the snippet to the trash, from where it can be restored for 30 days.
    @Sendable func delete(req: Request) async throws -> Response {
        let id = try snippetID(req)
        let title = try await req.store.write { context in
            let snippet = try Lookup.existingSnippet(id, in: context)
            snippet.deletedAt = Date.now
            return snippet.title
        }
        req.flash("Moved \(Formatting.quoted(title)) to the trash.")
        return req.redirect(to: "\(settings.basePath)/snippets")
    }

    @Sendable func toggleFavorite(req: Request) async throws -> Response {
        let id = try snippetID(req)
        let isFavorite = try await req.store.write { context in
            let snippet = try Lookup.existingSnippet(id, in: context)
            snippet.isFavorite.toggle()
            return snippet.isFavorite
        }
        req.flash(isFavorite ? "Added to favorites." : "Removed from favorites.")
        return req.redirect(to: "\(settings.basePath)/snippets/\(id.idString)\(ListQuery(query: req.query).queryString())")
    }

    struct MoveInput: Content {
        var folder: String?
    }

    @Sendable func move(req: Request) async throws -> Response {
        let id = try snippetID(req)
        let target = try req.content.decode(MoveInput.self).folder ?? ""
        let folderName = try await req.store.write { context -> String in
            let snippet = try Lookup.existingSnippet(id, in: context)
            // A move is an edit, as into a folder so out of one: an edit form opened before it sees a
            // new version, rather than quietly putting the snippet back.
            if target.isEmpty {
                snippet.folder = nil
                snippet.updatedAt = Date.now
                snippet.refreshSearchKeywords()
                return "Unfiled"
            }
            guard let folderID = UUID(uuidString: target), let folder = try Lookup.folder(folderID, in: context) else {
                throw Abort(.badRequest, reason: "There is no such folder.")
            }
            snippet.folder = folder
            snippet.updatedAt = Date.now
            snippet.refreshSearchKeywords()
            return Formatting.quoted(folder.name)
        }
        req.flash("Moved to \(folderName).")
        return req.redirect(to: "\(settings.basePath)/snippets/\(id.idString)")
    }

    // MARK: Files

    @Sendable func raw(req: Request) async throws -> Response {
        let (code, language) = try await codeAndLanguage(req)
        let response = Response(status: .ok, body: .init(string: code))
        response.headers.replaceOrAdd(name: .contentType, value: language.rawContentType)
        return response
    }

    @Sendable func download(req: Request) async throws -> Response {
        let id = try snippetID(req)
        let (code, language, title) = try await req.store.read { context in
            let snippet = try Lookup.existingSnippet(id, in: context)
            return (snippet.code, snippet.language, snippet.title)
        }
        let response = Response(status: .ok, body: .init(string: code))
        response.headers.replaceOrAdd(name: .contentType, value: "\(language.mimeType); charset=utf-8")
        let name = Formatting.downloadName(title: title, language: language)
        response.headers.replaceOrAdd(name: .contentDisposition, value: Formatting.attachment(named: name))
        return response
    }

    @Sendable func image(req: Request) async throws -> Response {
        let id = try snippetID(req)
        let found = try await req.store.read { context -> (Data, String, Date)? in
            guard let snippet = try Lookup.snippet(id, in: context), let type = snippet.imageContentType else { return nil }
            // A type without data: the image's file cannot be read, which is damage, not "no image".
            guard let data = snippet.imageData else {
                throw Abort(.internalServerError, reason: "The image of this snippet cannot be read from the data folder.")
            }
            return (data, type, snippet.updatedAt)
        }
        guard let (data, contentType, updated) = found else { throw Abort(.notFound, reason: "This snippet has no image.") }
        let etag = "\"\(Formatting.wholeMilliseconds(updated))-\(data.count)\""
        // On the 304 too: without it the signed-in pages' `no-store` was added, which replaces the
        // cached image's policy.
        let caching = "private, max-age=86400"
        var validators: HTTPHeaders = ["ETag": etag, "Cache-Control": caching]
        validators.lastModified = HTTPHeaders.LastModified(updated)
        if CachedCopy.isCurrent(req.headers, eTag: etag, lastModified: updated) {
            return Response(status: .notModified, headers: validators)
        }
        let response = Response(status: .ok, headers: validators, body: .init(data: data))
        response.headers.replaceOrAdd(name: .contentType, value: contentType)
        return response
    }

    private func codeAndLanguage(_ req: Request) async throws -> (String, CodingLanguage) {
        let id = try snippetID(req)
        return try await req.store.read { context in
            let snippet = try Lookup.existingSnippet(id, in: context)
            return (snippet.code, snippet.language)
        }
    }

    private func snippetID(_ req: Request) throws -> UUID {
        try req.modelID(naming: "snippet")
    }
}
