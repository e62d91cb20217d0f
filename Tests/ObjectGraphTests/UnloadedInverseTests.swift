import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// Relating models to a saved model whose side of the relationship is not loaded: the change waits
/// in the fault instead of loading every member, shows when the side is read, and is saved.
final class UnloadedInverseTests: StoreTestCase {
    private func snippetStore() throws -> ModelContainer {
        try makeContainer(SnippetFolder.self)
    }

    /// A folder "Work" and a tag "swift" with `count` snippets "s0"… in both.
    private func saveFolderAndTag(with count: Int, in container: ModelContainer) throws {
        let context = ModelContext(container)
        let folder = SnippetFolder(name: "Work")
        let tag = SnippetTag(name: "swift")
        for index in 0..<count {
            let snippet = SnippetItem(title: "s\(index)")
            snippet.folder = folder
            snippet.tags = [tag]
            context.insert(snippet)
        }
        context.insert(SnippetFolder(name: "Home"))
        try context.save()
    }

    private func fetchOne<T: PersistentModel>(_ type: T.Type, in context: ModelContext, where predicate: Predicate<T>) throws -> T {
        try XCTUnwrap(context.fetch(FetchDescriptor<T>(predicate: predicate)).first)
    }

    func testRelatingANewModelToSavedOnesReadsNoneOfTheirMembers() throws {
        let container = try snippetStore()
        try saveFolderAndTag(with: 40, in: container)
        let context = ModelContext(container)
        let folder = try fetchOne(SnippetFolder.self, in: context, where: #Predicate { $0.name == "Work" })
        let tag = try fetchOne(SnippetTag.self, in: context, where: #Predicate { $0.name == "swift" })

        let linking = selects(in: container) {
            let snippet = SnippetItem(title: "new")
            snippet.folder = folder
            snippet.tags = [tag]
            context.insert(snippet)
        }
        XCTAssertEqual(linking, [], "neither the folder's nor the tag's 40 snippets were read")
        let saving = try selects(in: container) { try context.save() }
        XCTAssertFalse(saving.contains { $0.contains("\"SnippetItem\"") && !$0.contains("LIMIT 1") },
                       "saving read no snippets either: \(saving)")

        let fresh = ModelContext(container)
        let savedTag = try fetchOne(SnippetTag.self, in: fresh, where: #Predicate { $0.name == "swift" })
        XCTAssertEqual(savedTag.snippets.count, 41)
        XCTAssertEqual(savedTag.snippets.last?.title, "new", "a new member comes after the others")
        let savedFolder = try fetchOne(SnippetFolder.self, in: fresh, where: #Predicate { $0.name == "Work" })
        XCTAssertEqual(savedFolder.snippets.count, 41)
        XCTAssertEqual(try fetchOne(SnippetItem.self, in: fresh, where: #Predicate { $0.title == "new" }).folder?.name, "Work")
    }

    func testAnUnloadedSideShowsWaitingChangesWhenRead() throws {
        let container = try snippetStore()
        try saveFolderAndTag(with: 3, in: container)
        let context = ModelContext(container)
        let tag = try fetchOne(SnippetTag.self, in: context, where: #Predicate { $0.name == "swift" })
        let home = try fetchOne(SnippetFolder.self, in: context, where: #Predicate { $0.name == "Home" })
        let work = try fetchOne(SnippetFolder.self, in: context, where: #Predicate { $0.name == "Work" })
        let leaving = try fetchOne(SnippetItem.self, in: context, where: #Predicate { $0.title == "s1" })
        let joining = SnippetItem(title: "new")
        joining.tags = [tag]
        context.insert(joining)
        leaving.tags = []
        leaving.folder = home

        XCTAssertEqual(tag.snippets.map(\.title), ["s0", "s2", "new"], "stored members, less the one that left, plus the new one")
        XCTAssertEqual(work.snippets.map(\.title), ["s0", "s2"])
        XCTAssertEqual(home.snippets.map(\.title), ["s1"])
        try context.save()

        let fresh = ModelContext(container)
        XCTAssertEqual(try fetchOne(SnippetTag.self, in: fresh, where: #Predicate { $0.name == "swift" }).snippets.map(\.title),
                       ["s0", "s2", "new"])
        XCTAssertEqual(try fetchOne(SnippetFolder.self, in: fresh, where: #Predicate { $0.name == "Home" }).snippets.map(\.title), ["s1"])
        XCTAssertEqual(try fetchOne(SnippetItem.self, in: fresh, where: #Predicate { $0.title == "s1" }).tags, [])
    }

    func testLeavingAnUnloadedSideIsSavedWithoutReadingIt() throws {
        let container = try snippetStore()
        try saveFolderAndTag(with: 30, in: container)
        let context = ModelContext(container)
        let snippet = try fetchOne(SnippetItem.self, in: context, where: #Predicate { $0.title == "s7" })
        XCTAssertEqual(snippet.tags.map(\.name), ["swift"])
        XCTAssertEqual(snippet.folder?.name, "Work")
        let home = try fetchOne(SnippetFolder.self, in: context, where: #Predicate { $0.name == "Home" })
        let unlinking = selects(in: container) {
            snippet.tags = []
            snippet.folder = home
        }
        XCTAssertFalse(unlinking.contains { $0.contains("JOIN") || $0.contains("json_each") },
                       "no member list was loaded: \(unlinking)")
        try context.save()

        let fresh = ModelContext(container)
        let tag = try fetchOne(SnippetTag.self, in: fresh, where: #Predicate { $0.name == "swift" })
        XCTAssertEqual(tag.snippets.count, 29)
        XCTAssertFalse(tag.snippets.contains { $0.title == "s7" })
        XCTAssertEqual(try fetchOne(SnippetFolder.self, in: fresh, where: #Predicate { $0.name == "Work" }).snippets.count, 29)
    }

    /// `Ingredient.recipes` is the side that writes the join table, so changes reaching it unloaded
    /// are written as added and removed rows.
    func testChangesReachingAnUnloadedWritingSideAreWrittenAsRows() throws {
        let container = try makeContainer(Recipe.self)
        do {
            let context = ModelContext(container)
            let salt = Ingredient(name: "salt")
            let soup = Recipe(name: "soup")
            let bread = Recipe(name: "bread")
            soup.ingredients = [salt]
            context.insert(soup)
            context.insert(bread)
            try context.save()
        }
        let context = ModelContext(container)
        let salt = try fetchOne(Ingredient.self, in: context, where: #Predicate { $0.name == "salt" })
        let bread = try fetchOne(Recipe.self, in: context, where: #Predicate { $0.name == "bread" })
        let soup = try fetchOne(Recipe.self, in: context, where: #Predicate { $0.name == "soup" })
        let pie = Recipe(name: "pie")
        bread.ingredients.append(salt)
        pie.ingredients = [salt]
        context.insert(pie)
        try context.save()
        XCTAssertEqual(try rawRows("SELECT COUNT(*) FROM \"_Ingredient_recipes\"").first?[0], 3)

        let reader = ModelContext(container)
        XCTAssertEqual(try fetchOne(Ingredient.self, in: reader, where: #Predicate { $0.name == "salt" }).recipes.map(\.name),
                       ["soup", "bread", "pie"], "joined in order, after the stored one")

        soup.ingredients = []
        try context.save()
        let last = ModelContext(container)
        XCTAssertEqual(try fetchOne(Ingredient.self, in: last, where: #Predicate { $0.name == "salt" }).recipes.map(\.name),
                       ["bread", "pie"])
    }

    func testRollbackDropsWaitingChanges() throws {
        let container = try snippetStore()
        try saveFolderAndTag(with: 2, in: container)
        let context = ModelContext(container)
        let tag = try fetchOne(SnippetTag.self, in: context, where: #Predicate { $0.name == "swift" })
        let snippet = SnippetItem(title: "new")
        snippet.tags = [tag]
        context.insert(snippet)
        context.rollback()
        XCTAssertEqual(tag.snippets.map(\.title), ["s0", "s1"])
        try context.save()
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<SnippetItem>()), 2)
    }

    func testAModelRelatedOnlyThroughAnUnloadedSideIsInserted() throws {
        let container = try snippetStore()
        try saveFolderAndTag(with: 2, in: container)
        let context = ModelContext(container)
        let folder = try fetchOne(SnippetFolder.self, in: context, where: #Predicate { $0.name == "Home" })
        let snippet = SnippetItem(title: "reachable")
        snippet.folder = folder
        try context.save()
        let fresh = ModelContext(container)
        XCTAssertEqual(try fetchOne(SnippetItem.self, in: fresh, where: #Predicate { $0.title == "reachable" }).folder?.name, "Home")
    }

    /// Found by `RandomGraphTests`: models that joined an unloaded tag kept the order they joined in
    /// while unsaved, and came back in the order their rows were made (the one inserted first, first).
    func testModelsJoiningAnUnloadedSideKeepTheOrderTheyJoinedIn() throws {
        let container = try snippetStore()
        try saveFolderAndTag(with: 2, in: container)
        let context = ModelContext(container)
        let swift = try fetchOne(SnippetTag.self, in: context, where: #Predicate { $0.name == "swift" })
        let first = SnippetItem(title: "joined first")
        let second = SnippetItem(title: "joined second, inserted first")
        context.insert(second)
        first.tags = [swift]
        second.tags = [swift]
        try context.save()

        let expected = ["s0", "s1", "joined first", "joined second, inserted first"]
        XCTAssertEqual(swift.snippets.map(\.title), expected)
        let fresh = ModelContext(container)
        XCTAssertEqual(try fetchOne(SnippetTag.self, in: fresh, where: #Predicate { $0.name == "swift" }).snippets.map(\.title), expected)
        // Each snippet's own side still holds the tag once.
        XCTAssertEqual(try fresh.fetch(FetchDescriptor<SnippetItem>()).map { $0.tags.map(\.name) }, Array(repeating: ["swift"], count: 4))
    }

    /// Found by `RandomGraphTests`: a snippet that left an unloaded tag and joined it again before the
    /// save kept its old place there, where a loaded tag (an array) puts it last.
    func testAModelThatLeavesAnUnloadedSideAndJoinsAgainComesLast() throws {
        let container = try snippetStore()
        try saveFolderAndTag(with: 3, in: container)
        for readBeforeSaving in [false, true] {
            let context = ModelContext(container)
            let first = try fetchOne(SnippetItem.self, in: context, where: #Predicate { $0.title == "s0" })
            let swift = try XCTUnwrap(first.tags.first)
            first.tags = []
            first.tags = [swift]
            if readBeforeSaving {
                XCTAssertEqual(swift.snippets.map(\.title), ["s1", "s2", "s0"], "read before the save")
            }
            try context.save()
            let fresh = ModelContext(container)
            XCTAssertEqual(try fetchOne(SnippetTag.self, in: fresh, where: #Predicate { $0.name == "swift" }).snippets.map(\.title),
                           ["s1", "s2", "s0"], readBeforeSaving ? "read before the save" : "left unloaded")
            // Back to the stored order for the next pass.
            swift.snippets = try ["s0", "s1", "s2"].map { title in try fetchOne(SnippetItem.self, in: context, where: #Predicate { $0.title == title }) }
            try context.save()
        }
    }
}
