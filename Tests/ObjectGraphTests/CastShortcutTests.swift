@testable import ObjectGraph
import XCTest

/// The shortcuts that stand in for the runtime's casts on the hot paths (`persistentModel(_:expecting:)`,
/// `PropertySlot.relatedModel`, `ModelStorage.unboxed`) must answer as the casts do: the same object or
/// value when the type is the one expected, the cast's answer when it is not.
final class CastShortcutTests: XCTestCase {
    func testAModelIsFoundThroughItsOwnTypeAndThroughTheCastOtherwise() {
        let recipe = Recipe(name: "Soup")
        XCTAssertTrue(persistentModel(recipe, expecting: Recipe.self) === recipe, "its own class")
        XCTAssertTrue(persistentModel(recipe, expecting: Ingredient.self) === recipe, "another model type: the cast")
        XCTAssertTrue(persistentModel(recipe, expecting: nil) === recipe, "no type to expect: the cast")
        XCTAssertNil(persistentModel(NSObject(), expecting: Recipe.self), "not a model")
        XCTAssertNil(persistentModel(NSObject(), expecting: nil), "not a model")
    }

    func testARelationshipSlotFindsItsMembersAndAStorageItsModel() throws {
        let soup = Recipe(name: "Soup")
        let salt = Ingredient(name: "Salt")
        soup.ingredients = [salt]
        let slot = try XCTUnwrap(EntityLayout.of(Recipe.self).slots.first { $0.name == "ingredients" })
        XCTAssertTrue(slot.relatedModel(salt) === salt)
        XCTAssertTrue(slot.relatedModel(soup) === soup, "a model of another type than the destination")
        XCTAssertNil(slot.relatedModel(NSObject()))
        XCTAssertTrue(soup.storage.persistentModel === soup)
        XCTAssertTrue(salt.storage.persistentModel === salt)
    }

    func testAValueIsOpenedWhenOfTheTypeAskedAndCastOtherwise() {
        XCTAssertEqual(ModelStorage.unboxed("text" as Any, as: String.self), "text")
        XCTAssertEqual(ModelStorage.unboxed(Optional("wrapped") as Any, as: String.self), "wrapped", "an optional is unwrapped, as by `as?`")
        XCTAssertNil(ModelStorage.unboxed(Optional<String>.none as Any, as: String.self))
        XCTAssertNil(ModelStorage.unboxed(42 as Any, as: String.self))
        let tags = [Ingredient(name: "a"), Ingredient(name: "b")]
        let opened = ModelStorage.unboxed(tags as Any, as: [Ingredient].self)
        XCTAssertEqual(opened?.count, 2)
        XCTAssertTrue(opened?.first === tags.first)
    }

    /// Appending to a loaded to-many in place: a model of exactly the element class, and the slot's
    /// array, optional or not; a value of another type is left alone.
    func testAppendingToAnArrayHeldInAnAny() {
        let first = Ingredient(name: "first"), second = Ingredient(name: "second")
        var plain: Any = [first]
        XCTAssertTrue([Ingredient]._append(second, toArrayIn: &plain, asOptional: false))
        XCTAssertEqual((plain as? [Ingredient])?.map(\.name), ["first", "second"])
        var optional: Any = Optional([first]) as Any
        XCTAssertTrue([Ingredient]._append(second, toArrayIn: &optional, asOptional: true))
        XCTAssertEqual((optional as? [Ingredient]?)??.map(\.name), ["first", "second"])
        var none: Any = Optional<[Ingredient]>.none as Any
        XCTAssertFalse([Ingredient]._append(second, toArrayIn: &none, asOptional: true), "nil holds no array")
        var other: Any = [Recipe(name: "Soup")]
        XCTAssertFalse([Ingredient]._append(second, toArrayIn: &other, asOptional: false), "an array of another type")
        XCTAssertEqual((other as? [Recipe])?.count, 1)
        XCTAssertFalse([Ingredient]._append(Recipe(name: "Stew"), toArrayIn: &plain, asOptional: false), "a model of another type")
        XCTAssertEqual((plain as? [Ingredient])?.count, 2)
    }
}
