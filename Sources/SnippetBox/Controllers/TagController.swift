import Foundation
import ObjectGraph
import Vapor

/// Tags: list, create, rename and recolour, delete (their snippets stay), merge one into another.
struct TagController: RouteCollection {
    let settings: AppSettings

    func boot(routes: any RoutesBuilder) throws {
        let tags = routes.grouped("tags")
        tags.get(use: index)
        tags.post(use: create)
        tags.group(":id") { tag in
            tag.get { req in req.redirect(to: "\(settings.basePath)/snippets?tag=\(try tagID(req).idString)") }
            tag.get("edit", use: editForm)
            tag.post(use: update)
            tag.get("delete", use: confirmDelete)
            tag.post("delete", use: delete)
            tag.post("merge", use: merge)
        }
    }

    struct TagInput: Content {
        var name: String?
        var color: String?
    }

    struct Problem: Error, Sendable {
        let message: String
    }

    @Sendable func index(req: Request) async throws -> View {
        try await indexPage(req, newName: "", newColor: nil, error: nil)
    }

    private func indexPage(_ req: Request, newName: String, newColor: String?, error: String?) async throws -> View {
        let (sidebar, page) = try await req.store.read { context in
            let sidebar = try Presenter(context: context).sidebar(current: "")
            let rows = sidebar.tags.map { TagsPage.Row(id: $0.id, name: $0.name, count: $0.count, color: $0.color, textColor: $0.textColor) }
            let suggested = ColorData.palette[rows.count % ColorData.palette.count].hex
            return (sidebar, TagsPage(rows: rows, newName: newName, newColor: newColor ?? suggested, error: error))
        }
        return try await req.renderPage("tags", PageContext(
            req, title: "Tags", flash: req.takeFlash(), sidebar: sidebar, content: page))
    }

    /// A checked name and colour; a name another tag has, in any case, is refused.
    private func validated(_ input: TagInput, excluding: UUID?, in context: ModelContext) throws -> Result<(String, ColorData), Problem> {
        let name = (input.name ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if name.isEmpty { return .failure(Problem(message: "Give the tag a name.")) }
        if name.limitLength > ValidatedSnippetForm.maxNameLength {
            return .failure(Problem(message: "Keep tag names to \(ValidatedSnippetForm.maxNameLength) characters or fewer."))
        }
        if name.contains(",") { return .failure(Problem(message: "Tag names cannot contain commas.")) }
        if ValidatedSnippetForm.hasControlCharacters(name) { return .failure(Problem(message: ValidatedSnippetForm.controlCharacterMessage)) }
        guard let color = ColorData(hex: input.color ?? "") else {
            return .failure(Problem(message: "Pick a colour."))
        }
        if let existing = try Lookup.tag(named: name, in: context), existing.uuid != excluding {
            return .failure(Problem(message: "There is already a tag named \(Formatting.quoted(existing.name))."))
        }
        return .success((name, color))
    }

    @Sendable func create(req: Request) async throws -> Response {
        let input = try req.content.decode(TagInput.self)
        let outcome = try await req.store.write { context -> Result<String, Problem> in
            try validated(input, excluding: nil, in: context).map { name, color in
                context.insert(Tag(name: name, color: color))
                return name
            }
        }
        switch outcome {
        case .success(let name):
            req.flash("Tag \(Formatting.quoted(name)) created.")
            return req.redirect(to: "\(settings.basePath)/tags")
        case .failure(let problem):
            return try await indexPage(req, newName: input.name ?? "", newColor: input.color, error: problem.message)
                .encodeResponse(status: .unprocessableEntity, for: req)
        }
    }

    @Sendable func editForm(req: Request) async throws -> View {
        try await editPage(req, id: try tagID(req), input: nil, error: nil)
    }

    private func editPage(_ req: Request, id: UUID, input: TagInput?, error: String?) async throws -> View {
        let (sidebar, page) = try await req.store.read { context in
            let tag = try Lookup.existingTag(id, in: context)
            let others = TitleOrder.sorted(try context.fetch(FetchDescriptor<Tag>()), byName: \.name).filter { $0.uuid != id }
            let page = TagEditPage(
                id: id.idString, name: input?.name ?? tag.name, color: input?.color ?? tag.color.hex, error: error,
                mergeTargets: others.map { Option(value: $0.uuid.idString, label: $0.name, isSelected: false) })
            return (try Presenter(context: context).sidebar(current: "tag:\(id.idString)"), page)
        }
        return try await req.renderPage("tag-edit", PageContext(
            req, title: "Edit tag", flash: nil, sidebar: sidebar, content: page))
    }

    @Sendable func update(req: Request) async throws -> Response {
        let id = try tagID(req)
        let input = try req.content.decode(TagInput.self)
        let outcome = try await req.store.write { context -> Result<String, Problem> in
            let tag = try Lookup.existingTag(id, in: context)
            return try validated(input, excluding: id, in: context).map { name, color in
                tag.rename(to: name)
                tag.color = color
                for snippet in tag.snippets { snippet.refreshSearchKeywords() }
                return name
            }
        }
        switch outcome {
        case .success(let name):
            req.flash("Tag \(Formatting.quoted(name)) saved.")
            return req.redirect(to: "\(settings.basePath)/tags")
        case .failure(let problem):
            return try await editPage(req, id: id, input: input, error: problem.message)
                .encodeResponse(status: .unprocessableEntity, for: req)
        }
    }

    @Sendable func confirmDelete(req: Request) async throws -> View {
        let id = try tagID(req)
        let (sidebar, page) = try await req.store.read { context in
            let tag = try Lookup.existingTag(id, in: context)
            let count = try context.fetchCount(FetchDescriptor(predicate: #Predicate<Snippet> { $0.deletedAt == nil && $0.tags.contains { $0.uuid == id } }))
            return (try Presenter(context: context).sidebar(current: "tag:\(id.idString)"),
                    TagDeletePage(id: id.idString, name: tag.name, count: count))
        }
        return try await req.renderPage("tag-delete", PageContext(
            req, title: "Delete tag \(Formatting.quoted(page.name))?", flash: nil, sidebar: sidebar, content: page))
    }

    @Sendable func delete(req: Request) async throws -> Response {
        let id = try tagID(req)
        let name = try await req.store.write { context -> String in
            let tag = try Lookup.existingTag(id, in: context)
            let snippets = tag.snippets
            snippets.forEach { $0.tags.removeAll { $0 === tag } }
            snippets.forEach { $0.refreshSearchKeywords() }
            context.delete(tag)
            return tag.name
        }
        req.flash("Deleted the tag \(Formatting.quoted(name)); its snippets stay.")
        return req.redirect(to: "\(settings.basePath)/tags")
    }

    struct MergeInput: Content {
        var into: String?
    }

    /// Gives every snippet of this tag the other tag instead, then deletes this one.
    @Sendable func merge(req: Request) async throws -> Response {
        let id = try tagID(req)
        guard let target = try req.content.decode(MergeInput.self).into.flatMap(UUID.init(uuidString:)), target != id else {
            throw Abort(.badRequest, reason: "Choose another tag to merge into.")
        }
        let (from, into) = try await req.store.write { context -> (String, String) in
            guard let source = try Lookup.tag(id, in: context), let destination = try Lookup.tag(target, in: context) else {
                throw Abort(.notFound, reason: "There is no such tag.")
            }
            for snippet in source.snippets {
                snippet.tags.removeAll { $0 === source }
                if !snippet.tags.contains(where: { $0 === destination }) { snippet.tags.append(destination) }
                snippet.refreshSearchKeywords()
            }
            context.delete(source)
            return (source.name, destination.name)
        }
        req.flash("Merged \(Formatting.quoted(from)) into \(Formatting.quoted(into)).")
        return req.redirect(to: "\(settings.basePath)/tags")
    }

    private func tagID(_ req: Request) throws -> UUID {
        try req.modelID(naming: "tag")
    }
}
