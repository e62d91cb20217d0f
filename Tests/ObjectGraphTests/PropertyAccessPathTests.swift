import Foundation
@testable import ObjectGraph
import XCTest

/// The shortcuts reading a model takes: slots found by the key path's address, attribute values
/// handed back without a conditional cast, relationship values read by their declared form, and a
/// row's values decoded into a local array. Each has a general path it must agree with.
final class PropertyAccessPathTests: StoreTestCase {
    func testKeyPathsBuiltAtRunTimeFindTheirSlot() throws {
        let layout = EntityLayout.of(Recipe.self)
        let recipe = Recipe(name: "Soup")
        XCTAssertEqual(recipe.name, "Soup")
        let nameIndex = try XCTUnwrap(layout.slotIndex(for: \Recipe.name))
        XCTAssertEqual(layout.slots[nameIndex].name, "name")
        // A key path written in a generic function is instantiated on every call: a new object, equal
        // to the literal but at another address.
        func namePath<Root: Recipe>(of _: Root.Type) -> KeyPath<Root, String> { \Root.name }
        let first = namePath(of: Recipe.self), second = namePath(of: Recipe.self)
        XCTAssertFalse(first === second)
        XCTAssertEqual(first, second)
        for _ in 0..<500 {
            let built = namePath(of: Recipe.self)
            XCTAssertEqual(layout.slotIndex(for: built), nameIndex)
            XCTAssertEqual(recipe.getValue(forKey: built), "Soup")
        }
        XCTAssertNil(layout.slotIndex(for: \Recipe.name.count))
    }

    /// A backing data of the program's own, which SwiftData's protocol allows: the accessors, which
    /// open ObjectGraph's own backing data directly, reach any other through the protocol.
    func testABackingDataOfAnotherKindIsReadAndWrittenThroughTheProtocol() throws {
        final class KeyedBackingData<Model: PersistentModel>: BackingData {
            var persistentModelID: PersistentIdentifier?
            var metadata: Any { "keyed" }
            var values: [AnyKeyPath: Any] = [:]
            var reads = 0, writes = 0
            init(for modelType: Model.Type) {}
            func getValue<Value>(forKey key: KeyPath<Model, Value>) -> Value {
                reads += 1
                guard let value = values[key] as? Value else { preconditionFailure("\(key) was read before it was written") }
                return value
            }
            func setValue<Value>(forKey key: KeyPath<Model, Value>, to newValue: Value) {
                writes += 1
                values[key] = newValue
            }
        }
        let backingData = KeyedBackingData(for: Recipe.self)
        let recipe = Recipe(backingData: backingData)
        recipe.name = "Broth"
        recipe.ingredients = []
        // Checked before a read, which could not return a value the backing data never received.
        guard backingData.values[\Recipe.name] as? String == "Broth", backingData.values[\Recipe.ingredients] != nil else {
            return XCTFail("the writes did not reach the backing data: \(backingData.values)")
        }
        XCTAssertEqual(recipe.name, "Broth")
        XCTAssertEqual(recipe.ingredients.count, 0)
        XCTAssertEqual(backingData.writes, 2)
        XCTAssertEqual(backingData.reads, 2)
        XCTAssertTrue(recipe.persistentBackingData === backingData)
    }

    func testAnAttributeReadAfterItsSlotChangedTypeFallsBackToTheGeneralPath() throws {
        let container = try makeContainer(Recipe.self)
        let context = ModelContext(container)
        context.insert(Recipe(name: "Stew"))
        try context.save()
        var descriptor = FetchDescriptor<Recipe>()
        descriptor.propertiesToFetch = [\.ingredients]
        let partial = try XCTUnwrap(ModelContext(container).fetch(descriptor).first)
        // The name was left out of the fetch: its slot holds a marker, and the read loads it.
        XCTAssertEqual(partial.name, "Stew")
    }

    func testRelationshipValuesOfEachDeclaredFormAreReadAsTheirModels() throws {
        let team = Team(name: "Reds")
        let teamLayout = EntityLayout.of(Team.self)
        let members = try XCTUnwrap(teamLayout.slotsByName["members"])
        XCTAssertEqual(members.relationshipForm, .optionalMany)
        XCTAssertTrue(ModelStorage.models(in: Optional<[Player]>.none as Any, of: members).isEmpty)
        let ann = Player(name: "Ann"), bob = Player(name: "Bob")
        let read = ModelStorage.models(in: Optional([ann, bob]) as Any, of: members)
        XCTAssertEqual(read.count, 2)
        XCTAssertTrue(read[0] === ann && read[1] === bob)

        let playerLayout = EntityLayout.of(Player.self)
        let teamSlot = try XCTUnwrap(playerLayout.slotsByName["team"])
        XCTAssertEqual(teamSlot.relationshipForm, .optionalOne)
        XCTAssertTrue(ModelStorage.models(in: Optional<Team>.none as Any, of: teamSlot).isEmpty)
        XCTAssertTrue(ModelStorage.models(in: Optional(team) as Any, of: teamSlot).first === team)

        let recipeLayout = EntityLayout.of(Recipe.self)
        let ingredients = try XCTUnwrap(recipeLayout.slotsByName["ingredients"])
        XCTAssertEqual(ingredients.relationshipForm, .many)
        let salt = Ingredient(name: "Salt")
        let pepper = Ingredient(name: "Pepper")
        let list = ModelStorage.models(in: [salt, pepper] as Any, of: ingredients)
        XCTAssertTrue(list.count == 2 && list[0] === salt && list[1] === pepper)
        XCTAssertTrue(ModelStorage.models(in: [Ingredient]() as Any, of: ingredients).isEmpty)
        // A value of another type than the declared one still goes through the general path.
        XCTAssertTrue(ModelStorage.models(in: salt as Any, of: ingredients).first === salt)
    }

    func testRelationshipsSetThroughEveryFormSurviveASaveAndAFetch() throws {
        let container = try makeContainer(Team.self, Recipe.self)
        let context = ModelContext(container)
        let team = Team(name: "Blues")
        let players = [Player(name: "Cy"), Player(name: "Di")]
        context.insert(team)
        team.members = players
        let recipe = Recipe(name: "Bread")
        context.insert(recipe)
        recipe.ingredients = [Ingredient(name: "Flour"), Ingredient(name: "Water")]
        try context.save()

        let fresh = ModelContext(container)
        let fetchedTeam = try XCTUnwrap(fresh.fetch(FetchDescriptor<Team>()).first)
        XCTAssertEqual(Set((fetchedTeam.members ?? []).map(\.name)), ["Cy", "Di"])
        for player in fetchedTeam.members ?? [] { XCTAssertTrue(player.team === fetchedTeam) }
        let fetchedRecipe = try XCTUnwrap(fresh.fetch(FetchDescriptor<Recipe>()).first)
        XCTAssertEqual(fetchedRecipe.ingredients.map(\.name), ["Flour", "Water"])
        XCTAssertEqual(fetchedRecipe.ingredients.first?.recipes.first?.name, "Bread")
    }

    /// Join rows are written one statement per model (`json_each` gives each key its position), on
    /// both sides of a many-to-many. Rows inserted in array order would read back in order even with
    /// no positions, so the arrays are reordered after the first save.
    func testToManyOrderOnBothSidesIsKeptWhenReorderedAndSaved() throws {
        let container = try makeContainer(Recipe.self)
        let context = ModelContext(container)
        let soup = Recipe(name: "Soup"), stew = Recipe(name: "Stew"), bread = Recipe(name: "Bread")
        let salt = Ingredient(name: "Salt"), water = Ingredient(name: "Water"), flour = Ingredient(name: "Flour")
        for recipe in [soup, stew, bread] { context.insert(recipe) }
        soup.ingredients = [salt, water, flour]
        stew.ingredients = [salt, water]
        bread.ingredients = [salt, flour]
        try context.save()
        XCTAssertEqual(salt.recipes.map(\.name), ["Soup", "Stew", "Bread"])

        soup.ingredients = [flour, salt, water]
        salt.recipes = [bread, soup, stew]
        try context.save()

        let fresh = ModelContext(container)
        let recipes = try fresh.fetch(FetchDescriptor<Recipe>(sortBy: [SortDescriptor(\.name)]))
        XCTAssertEqual(recipes.map(\.name), ["Bread", "Soup", "Stew"])
        XCTAssertEqual(recipes[1].ingredients.map(\.name), ["Flour", "Salt", "Water"])
        let freshSalt = try XCTUnwrap(recipes[1].ingredients.first { $0.name == "Salt" })
        XCTAssertEqual(freshSalt.recipes.map(\.name), ["Bread", "Soup", "Stew"])
        // Removing a member keeps the others in their order.
        recipes[1].ingredients.removeAll { $0.name == "Salt" }
        try fresh.save()
        let again = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<Recipe>(predicate: #Predicate { $0.name == "Soup" })).first)
        XCTAssertEqual(again.ingredients.map(\.name), ["Flour", "Water"])
    }

    /// A member appended to a to-many's array in place, in each form the slot's value takes: the
    /// declared array (the common path), an optional array, an element of a subclass, and a value
    /// that holds no array of the type (refused, for the caller to rebuild the array).
    func testAMemberIsAppendedInPlaceToEveryFormOfAToManyArray() throws {
        let ann = Player(name: "Ann"), bob = Player(name: "Bob")
        var value: Any = [ann]
        XCTAssertTrue([Player]._append(bob, toArrayIn: &value, asOptional: false))
        let plain = try XCTUnwrap(value as? [Player])
        XCTAssertTrue(plain.count == 2 && plain[0] === ann && plain[1] === bob)

        value = Optional([ann]) as Any
        XCTAssertTrue([Player]._append(bob, toArrayIn: &value, asOptional: true))
        XCTAssertTrue(type(of: value) == Optional<[Player]>.self)
        let optional = try XCTUnwrap(value as? [Player]?)
        XCTAssertEqual(optional?.map(\.name), ["Ann", "Bob"])

        // An array of a class's models takes a model of its subclass, through the general cast.
        class Parent {}
        final class Child: Parent {}
        let first = Parent(), second = Child()
        value = [first]
        XCTAssertTrue([Parent]._append(second, toArrayIn: &value, asOptional: false))
        let mixed = try XCTUnwrap(value as? [Parent])
        XCTAssertTrue(mixed.count == 2 && mixed[0] === first && mixed[1] === second)

        // Nothing to append to: nil, another type's array, a model of another class.
        value = Optional<[Player]>.none as Any
        XCTAssertFalse([Player]._append(bob, toArrayIn: &value, asOptional: true))
        value = [Team(name: "Reds")]
        XCTAssertFalse([Player]._append(bob, toArrayIn: &value, asOptional: false))
        value = [ann]
        XCTAssertFalse([Player]._append(Team(name: "Blues"), toArrayIn: &value, asOptional: false))
        XCTAssertEqual((value as? [Player])?.count, 1)
    }
}
