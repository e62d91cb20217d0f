import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// A save writes the full-text entries and the join rows of many models in one statement each.
/// These tests make saves that mix every kind of change and check what the store holds after.
final class BatchedSaveTests: StoreTestCase {
    /// FTS5's own check of an external-content index against its table: it throws on any entry
    /// missing, extra or stale.
    private func assertFullTextIndexIsConsistent(_ table: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let queue = try DatabaseQueue(path: storeURL.path)
        defer { try? queue.close() }
        XCTAssertNoThrow(
            try queue.write { try $0.execute(sql: "INSERT INTO \(table)(\(table), rank) VALUES('integrity-check', 1)") },
            file: file, line: line)
    }

    private func titles(_ context: ModelContext, _ query: String) throws -> [String] {
        try context.search(Article.self, for: query).hits.map(\.model.title).sorted()
    }

    func testOneSaveOfInsertsUpdatesAndDeletesKeepsTheFullTextIndexInStep() throws {
        let container = try makeContainer(Article.self)
        let context = ModelContext(container)
        for index in 0..<40 {
            context.insert(Article(title: "Note \(index)", body: "apple body \(index)", category: index < 10 ? "old" : "kept"))
        }
        try context.save()
        try assertFullTextIndexIsConsistent("_fts_Article")

        let articles = try context.fetch(FetchDescriptor<Article>(sortBy: [SortDescriptor(\.title)]))
        let byTitle = Dictionary(uniqueKeysWithValues: articles.map { ($0.title, $0) })
        // In one save: searchable text changes, a change outside the index, deletes, a batch delete, inserts.
        try XCTUnwrap(byTitle["Note 11"]).body = "banana instead"
        try XCTUnwrap(byTitle["Note 12"]).title = "Renamed cherry"
        try XCTUnwrap(byTitle["Note 13"]).rating = 4
        context.delete(try XCTUnwrap(byTitle["Note 14"]))
        context.delete(try XCTUnwrap(byTitle["Note 15"]))
        try context.delete(model: Article.self, where: #Predicate { $0.category == "old" })
        for index in 0..<5 { context.insert(Article(title: "Fresh \(index)", body: "banana split \(index)")) }
        try context.save()

        try assertFullTextIndexIsConsistent("_fts_Article")
        let fresh = ModelContext(container)
        XCTAssertEqual(try titles(fresh, "banana"), ["Fresh 0", "Fresh 1", "Fresh 2", "Fresh 3", "Fresh 4", "Note 11"])
        XCTAssertEqual(try titles(fresh, "cherry"), ["Renamed cherry"])
        XCTAssertEqual(try fresh.search(Article.self, for: "apple").totalCount, 40 - 10 - 2 - 1, "deleted rows and Note 11 are gone")
        XCTAssertEqual(try titles(fresh, "\"apple body 13\""), ["Note 13"], "an edit outside the index keeps the entry")
        XCTAssertEqual(try titles(fresh, "\"apple body 14\""), [])
    }

    func testAnInsertThatTakesOverARowTakesOverItsFullTextEntry() throws {
        let container = try makeContainer(GlossaryEntry.self)
        let context = ModelContext(container)
        context.insert(GlossaryEntry(term: "fault", definition: "a placeholder object"))
        context.insert(GlossaryEntry(term: "context", definition: "a scratchpad of changes"))
        try context.save()

        // A second context does not know the saved rows: its inserts collide with them on `term`.
        let other = ModelContext(container)
        let saved = try XCTUnwrap(other.fetch(FetchDescriptor<GlossaryEntry>(predicate: #Predicate { $0.term == "context" })).first)
        saved.definition = "an edited scratchpad"
        other.insert(GlossaryEntry(term: "fault", definition: "a lazily loaded model"))
        other.insert(GlossaryEntry(term: "context", definition: "a workspace of models"))
        other.insert(GlossaryEntry(term: "store", definition: "the file on disk"))
        try other.save()

        try assertFullTextIndexIsConsistent("_fts_GlossaryEntry")
        let reader = ModelContext(container)
        func terms(_ query: String) throws -> [String] {
            try reader.search(GlossaryEntry.self, for: query).hits.map(\.model.term).sorted()
        }
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<GlossaryEntry>()), 3)
        XCTAssertEqual(try terms("placeholder"), [])
        XCTAssertEqual(try terms("lazily"), ["fault"])
        XCTAssertEqual(try terms("disk"), ["store"])
        let contextDefinition = try XCTUnwrap(reader.fetch(FetchDescriptor<GlossaryEntry>(predicate: #Predicate { $0.term == "context" })).first).definition
        XCTAssertEqual(try terms(contextDefinition.components(separatedBy: " ").last ?? ""), ["context"],
                       "the entry holds the text the row kept")
        XCTAssertEqual(try terms("scratchpad").count + (try terms("workspace")).count, 1)
    }

    /// Many new owners in one save: their join rows go in together, each at its place in its array
    /// and, the other side being new too, at its place in that side's order.
    func testManyNewOwnersKeepBothSidesOrderInOneSave() throws {
        let container = try makeContainer(Recipe.self)
        let context = ModelContext(container)
        let ingredients = (0..<12).map { Ingredient(name: "Ingredient \($0)") }
        var recipes: [Recipe] = []
        for index in 0..<150 {
            let recipe = Recipe(name: String(format: "Recipe %03d", index))
            context.insert(recipe)
            // Each recipe lists three ingredients in an order unlike the order of their keys.
            recipe.ingredients = [ingredients[(index * 7 + 5) % 12], ingredients[index % 12], ingredients[(index * 5 + 3) % 12]]
                .reduce(into: [Ingredient]()) { list, ingredient in if !list.contains(where: { $0 === ingredient }) { list.append(ingredient) } }
            recipes.append(recipe)
        }
        // The other side in an order of its own: newest recipe first.
        ingredients[0].recipes = ingredients[0].recipes.reversed()
        let expectedIngredients = Dictionary(uniqueKeysWithValues: recipes.map { ($0.name, $0.ingredients.map(\.name)) })
        let expectedRecipesOfFirst = ingredients[0].recipes.map(\.name)
        XCTAssertGreaterThan(expectedRecipesOfFirst.count, 10)
        try context.save()

        // Rows inserted in array order read back in order even without positions: the positions
        // themselves are checked, as the store holds them, on both sides.
        let table = try XCTUnwrap(rawRows("""
            SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('_Recipe_ingredients', '_Ingredient_recipes')
            """).first?[0] as String?)
        let recipeColumn = table == "_Recipe_ingredients" ? "source" : "destination"
        let ingredientColumn = recipeColumn == "source" ? "destination" : "source"
        let (recipePlace, ingredientPlace) = recipeColumn == "source"
            ? ("position", "inversePosition") : ("inversePosition", "position")
        var storedIngredients: [String: [(Int, String)]] = [:]
        var storedRecipes: [String: [(Int, String)]] = [:]
        for row in try rawRows("""
            SELECT r."name", i."name", j."\(recipePlace)", j."\(ingredientPlace)" FROM "\(table)" AS j
            JOIN "Recipe" AS r ON r."_pk" = j."\(recipeColumn)" JOIN "Ingredient" AS i ON i."_pk" = j."\(ingredientColumn)"
            """) {
            let recipe: String = row[0], ingredient: String = row[1]
            storedIngredients[recipe, default: []].append((row[2], ingredient))
            storedRecipes[ingredient, default: []].append((row[3], recipe))
        }
        for (recipe, places) in storedIngredients {
            XCTAssertEqual(places.map(\.0).sorted(), Array(0..<places.count), recipe)
            XCTAssertEqual(places.sorted { $0.0 < $1.0 }.map(\.1), expectedIngredients[recipe], recipe)
        }
        for (ingredient, places) in storedRecipes {
            XCTAssertEqual(places.map(\.0).sorted(), Array(0..<places.count), ingredient)
        }
        XCTAssertEqual(storedRecipes["Ingredient 0"]?.sorted { $0.0 < $1.0 }.map(\.1), expectedRecipesOfFirst)

        let fresh = ModelContext(container)
        for recipe in try fresh.fetch(FetchDescriptor<Recipe>()) {
            XCTAssertEqual(recipe.ingredients.map(\.name), expectedIngredients[recipe.name], recipe.name)
        }
        let first = try XCTUnwrap(fresh.fetch(FetchDescriptor<Ingredient>(predicate: #Predicate { $0.name == "Ingredient 0" })).first)
        XCTAssertEqual(first.recipes.map(\.name), expectedRecipesOfFirst)
    }

    /// The other side's order of a graph new in one save goes in with the rows: no statement goes back
    /// to set it (an UPDATE per owner found every row again, a tenth of inserting 100,000 snippets).
    func testANewGraphsOtherSideOrderIsWrittenWithItsRows() throws {
        let container = try makeContainer(Recipe.self)
        let context = ModelContext(container)
        let ingredients = (0..<4).map { Ingredient(name: "Ingredient \($0)") }
        for index in 0..<6 {
            let recipe = Recipe(name: "Recipe \(index)")
            context.insert(recipe)
            recipe.ingredients = [ingredients[index % 4], ingredients[(index + 1) % 4]]
        }
        ingredients[1].recipes.reverse()
        let expected = ingredients.map { $0.recipes.map(\.name) }
        let statements = try container.store.sqlLog.statements { try context.save() }
        XCTAssertEqual(statements.filter { $0.hasPrefix("UPDATE") }, [])

        let fresh = ModelContext(container)
        let stored = try fresh.fetch(FetchDescriptor<Ingredient>(sortBy: [SortDescriptor(\.name)]))
        XCTAssertEqual(stored.map { $0.recipes.map(\.name) }, expected)
    }

    /// A new owner on the other side with a saved member among its new ones: the saved member's row
    /// is written by its own statement, so the new owner's order is written after the rows, as before.
    func testANewOwnersOrderOverSavedAndNewMembersIsKept() throws {
        let container = try makeContainer(Recipe.self)
        let context = ModelContext(container)
        let soup = Recipe(name: "Soup")
        context.insert(soup)
        try context.save()

        let pepper = Ingredient(name: "Pepper")
        let stew = Recipe(name: "Stew"), salad = Recipe(name: "Salad")
        context.insert(stew)
        context.insert(salad)
        stew.ingredients = [pepper]
        soup.ingredients.append(pepper)
        salad.ingredients = [pepper]
        pepper.recipes = [salad, soup, stew]
        try context.save()

        let fresh = ModelContext(container)
        let stored = try XCTUnwrap(fresh.fetch(FetchDescriptor<Ingredient>()).first)
        XCTAssertEqual(stored.recipes.map(\.name), ["Salad", "Soup", "Stew"])
        let recipes = try fresh.fetch(FetchDescriptor<Recipe>(sortBy: [SortDescriptor(\.name)]))
        XCTAssertEqual(recipes.map { $0.ingredients.map(\.name) }, [["Pepper"], ["Pepper"], ["Pepper"]])
    }

    /// An array that lists a model twice is stored once, at its last place, on either side.
    func testAModelListedTwiceKeepsItsLastPlace() throws {
        let container = try makeContainer(Recipe.self)
        let context = ModelContext(container)
        let soup = Recipe(name: "Soup"), stew = Recipe(name: "Stew")
        let salt = Ingredient(name: "Salt"), water = Ingredient(name: "Water")
        context.insert(soup)
        context.insert(stew)
        soup.ingredients = [salt, water]
        stew.ingredients = [salt]
        try context.save()
        soup.ingredients = [salt, water, salt]
        salt.recipes = [soup, stew, soup]
        try context.save()

        let fresh = ModelContext(container)
        let freshSoup = try XCTUnwrap(fresh.fetch(FetchDescriptor<Recipe>(predicate: #Predicate { $0.name == "Soup" })).first)
        XCTAssertEqual(freshSoup.ingredients.map(\.name), ["Water", "Salt"])
        let freshSalt = try XCTUnwrap(fresh.fetch(FetchDescriptor<Ingredient>(predicate: #Predicate { $0.name == "Salt" })).first)
        XCTAssertEqual(freshSalt.recipes.map(\.name), ["Stew", "Soup"])
    }

    /// A long list (more members than are compared pairwise) that names a model twice keeps it once,
    /// at its last place, in memory and in the store.
    func testALongListThatNamesAModelTwiceKeepsItsLastPlace() throws {
        let container = try makeContainer(Recipe.self)
        let context = ModelContext(container)
        let soup = Recipe(name: "Soup")
        context.insert(soup)
        let ingredients = (0..<12).map { Ingredient(name: "I\($0)") }
        soup.ingredients = ingredients + [ingredients[3]]
        let expected = (0..<12).filter { $0 != 3 }.map { "I\($0)" } + ["I3"]
        XCTAssertEqual(soup.ingredients.map(\.name), expected)
        try context.save()

        let fresh = ModelContext(container)
        let freshSoup = try XCTUnwrap(fresh.fetch(FetchDescriptor<Recipe>()).first)
        XCTAssertEqual(freshSoup.ingredients.map(\.name), expected)
    }

    /// Deleting all data empties the join tables and full-text indexes with the rows: they were left
    /// behind, join rows naming rows that no longer exist, and index entries for text that was gone.
    func testDeleteAllDataLeavesNoJoinRowsOrFullTextEntries() throws {
        let container = try makeContainer(Article.self, Playlist.self, Song.self)
        let context = ModelContext(container)
        for index in 0..<5 { context.insert(Article(title: "Note \(index)", body: "apple")) }
        let mix = Playlist(name: "mix")
        mix.songs = [Song(title: "a"), Song(title: "b")]
        context.insert(mix)
        try context.save()
        XCTAssertEqual(try rawRows("SELECT COUNT(*) AS n FROM _Playlist_songs").first?["n"] as Int?, 2)

        container.deleteAllData()
        XCTAssertEqual(try rawRows("SELECT COUNT(*) AS n FROM _Playlist_songs").first?["n"] as Int?, 0)
        try assertFullTextIndexIsConsistent("_fts_Article")
        let fresh = ModelContext(container)
        XCTAssertEqual(try fresh.search(Article.self, for: "apple").totalCount, 0)
        fresh.insert(Article(title: "Pear", body: "apple again"))
        try fresh.save()
        XCTAssertEqual(try titles(fresh, "apple"), ["Pear"])
        try assertFullTextIndexIsConsistent("_fts_Article")
    }
}
