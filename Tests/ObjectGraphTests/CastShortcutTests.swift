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

    private class Shape { let sides: Int; init(sides: Int) { self.sides = sides } }
    private final class Square: Shape { init() { super.init(sides: 4) } }
    private struct Wide { var a = 1, b = 2, c = 3, d = 4, e = 5 }
    private protocol Named { var name: String { get } }
    private struct Label: Named { let name: String }

    /// `isBoxed` reads the type an `Any` was made with from the box: it must agree with `type(of:)` for
    /// values held in the box (small) and out of it (larger than three words), optionals, arrays and
    /// values that were in another existential first; for a class instance boxed as its superclass it
    /// names the superclass, and `unboxed` then still answers as the cast does.
    func testTheTypeInTheBoxIsTheTypeTheValueWasBoxedAs() {
        let values: [Any] = [
            "text", 42, Date(timeIntervalSince1970: 1), Wide(), Optional("x") as Any, Optional<Int>.none as Any,
            [1, 2, 3], ["k": Wide()], Label(name: "a") as any Named, UnsetValue(), ToManyFault(), Recipe(name: "Soup"),
        ]
        for value in values {
            XCTAssertTrue(ModelStorage.isBoxed(value, as: type(of: value)), "\(type(of: value))")
            XCTAssertFalse(ModelStorage.isBoxed(value, as: Shape.self), "\(type(of: value))")
        }
        XCTAssertTrue(ModelStorage.isBoxed(Label(name: "a") as any Named as Any, as: Label.self), "the inner box is opened")
        XCTAssertFalse(ModelStorage.holds(Optional(UnsetValue()) as Any, UnsetValue.self), "an optional marker is not the marker")

        let square: Shape = Square()
        let boxed: Any = square
        XCTAssertTrue(ModelStorage.isBoxed(boxed, as: Shape.self), "boxed as its superclass")
        XCTAssertFalse(ModelStorage.isBoxed(boxed, as: Square.self))
        XCTAssertTrue(ModelStorage.unboxed(boxed, as: Square.self) === square, "the cast finds its own class")
        XCTAssertEqual(ModelStorage.unboxed(boxed, as: Shape.self)?.sides, 4)
        XCTAssertEqual(ModelStorage.unboxed(Wide() as Any, as: Wide.self)?.e, 5, "a value held out of the box")
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
