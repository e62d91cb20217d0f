import Foundation
import ObjectGraph
import Vapor

/// Saved searches: a name for the list page's current query, listed in the sidebar.
struct SavedSearchController: RouteCollection {
    let settings: AppSettings

    func boot(routes: any RoutesBuilder) throws {
        let searches = routes.grouped("searches")
        searches.post(use: create)
        searches.post(":id", "delete", use: delete)
    }

    struct SaveInput: Content {
        var name: String?
        /// The list page's query string, with or without "?".
        var query: String?
    }

    @Sendable func create(req: Request) async throws -> Response {
        let input = try req.content.decode(SaveInput.self)
        let name = (input.name ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        let query = Self.storedQuery(input.query ?? "")
        // Checked before either redirect below, which puts the query into the Location header.
        guard Self.isStorable(query: query) else { throw Abort(.badRequest, reason: "That search cannot be saved.") }
        guard !name.isEmpty, name.limitLength <= ValidatedSnippetForm.maxNameLength, !ValidatedSnippetForm.hasControlCharacters(name) else {
            req.flash("Give the search a name (up to \(ValidatedSnippetForm.maxNameLength) characters) to save it.")
            return req.redirect(to: "\(settings.basePath)/snippets\(query.isEmpty ? "" : "?" + query)")
        }
        let isNew = try await req.store.write { context -> Bool in
            // One search a name, without regard to case or Unicode form, as folders and tags: two
            // sidebar entries of one name could not be told apart.
            let lowered = name.lowercased()
            guard try !context.fetch(FetchDescriptor<SavedSearch>()).contains(where: { $0.name.lowercased() == lowered }) else { return false }
            context.insert(SavedSearch(name: name, query: query))
            return true
        }
        guard isNew else {
            req.flash("There is already a saved search named \(Formatting.quoted(name)): choose another name, or remove that one first.")
            return req.redirect(to: "\(settings.basePath)/snippets\(query.isEmpty ? "" : "?" + query)")
        }
        req.flash("Saved the search \(Formatting.quoted(name)).")
        return req.redirect(to: "\(settings.basePath)/snippets\(query.isEmpty ? "" : "?" + query)")
    }

    /// The query a saved search keeps of the one given: without a leading `?` and without its page.
    /// A search saved from its second page opens on its first: the page is where one was, not what
    /// one searched for.
    static func storedQuery(_ given: String) -> String {
        let query = given.hasPrefix("?") ? given.dropFirst() : Substring(given)
        return query.split(separator: "&", omittingEmptySubsequences: true)
            .filter { !$0.hasPrefix("page=") }.joined(separator: "&")
    }

    /// Whether a query string can be saved, and so put into a redirect's `Location` and the sidebar's
    /// links: at most 4,000 characters, each one a URL query may hold as it is (the list page's form
    /// sends them percent-encoded). A line break taken as it came split the response: the rest of the
    /// query became headers of the redirect (a `Set-Cookie` among them).
    static func isStorable(query: String) -> Bool {
        query.count <= 4_000 && query.unicodeScalars.allSatisfy(queryCharacters.contains)
    }

    /// RFC 3986's query characters, with `%` for what is encoded, without `#`, which ends a query.
    private static let queryCharacters = CharacterSet.urlQueryAllowed.union(CharacterSet(charactersIn: "%")).subtracting(CharacterSet(charactersIn: "#"))

    @Sendable func delete(req: Request) async throws -> Response {
        guard let text = req.parameters.get("id"), let id = UUID(uuidString: text) else { throw Abort(.notFound) }
        let name = try await req.store.write { context -> String in
            guard let search = try context.fetch(FetchDescriptor(predicate: #Predicate<SavedSearch> { $0.uuid == id })).first else {
                throw Abort(.notFound, reason: "There is no such saved search.")
            }
            context.delete(search)
            return search.name
        }
        req.flash("Removed the saved search \(Formatting.quoted(name)).")
        return req.redirect(to: "\(settings.basePath)/snippets")
    }
}
