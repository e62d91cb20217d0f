import Foundation
import ObjectGraph
import XCTest

@Model final class SemanticsLabel {
    var name: String
    var note: String?
    var shelf: SemanticsShelf?

    init(name: String, note: String? = nil, shelf: SemanticsShelf? = nil) {
        self.name = name
        self.note = note
        self.shelf = shelf
    }
}

@Model final class SemanticsShelf {
    var name: String
    @Relationship(inverse: \SemanticsLabel.shelf) var labels: [SemanticsLabel] = []

    init(name: String) { self.name = name }
}

@Model final class SemanticsRatio {
    var name: String
    var part: Double
    var whole: Double

    init(name: String, part: Double, whole: Double) {
        self.name = name
        self.part = part
        self.whole = whole
    }
}

/// Where SQL's reading of a predicate parted from Swift's (`Predicate.evaluate`), so that a fetch
/// answered differently once its models were saved: a model's count of characters, nil in an
/// optional chain, a nil among captured values (found by the ObjectGraph bug hunt).
final class SwiftSemanticsPredicateTests: PredicateTestCase {
    /// Three shelves: "Full" with a label of its own, "Empty" with none, and labels without one.
    override func setUpWithError() throws {
        try super.setUpWithError()
        try open(SemanticsLabel.self, SemanticsShelf.self, SemanticsRatio.self)
        let full = SemanticsShelf(name: "Full")
        context.insert(full)
        context.insert(SemanticsShelf(name: "Empty"))
        context.insert(SemanticsLabel(name: "on full", note: "a", shelf: full))
        for (name, note) in [("ok", "b"), ("é", nil), ("e\u{301}", nil), ("🇳🇴", "a"), ("👍🏽", nil)] {
            context.insert(SemanticsLabel(name: name, note: note))
        }
        try context.save()
    }

    /// SQLite's length() counts code points: "e" with a combining accent, a flag and a skin-toned
    /// thumb were two characters in SQL and one in Swift.
    func testAStringsCountIsItsCharacters() throws {
        try assertPredicate(#Predicate<SemanticsLabel> { $0.name.count == 1 },
                            selects: ["é", "e\u{301}", "🇳🇴", "👍🏽"], label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { $0.name.count > 1 && $0.name.count < 3 }, selects: ["ok"], label: \.name)
    }

    /// `$0.shelf?.name == "Full"` is false, not nil, for a label without a shelf: compared with
    /// false it held nowhere in SQL, since NULL = 0 is NULL.
    func testAConditionComparedWithABoolIsFalseWhereAnOptionalChainIsNil() throws {
        let unshelved = ["ok", "é", "e\u{301}", "🇳🇴", "👍🏽"]
        try assertPredicate(#Predicate<SemanticsLabel> { ($0.shelf?.name == "Full") == false }, selects: unshelved, label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { ($0.shelf?.name == "Full") != true }, selects: unshelved, label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { ($0.shelf?.name == "Full") == true }, selects: ["on full"], label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { ($0.note == "a") == ($0.shelf?.name == "Full") },
                            selects: ["on full", "ok", "é", "e\u{301}", "👍🏽"], label: \.name)
    }

    /// A to-many read through a to-one that is nil is nil: its count is not 0, it is not empty, and
    /// no test on its members is true or false. The subqueries, finding no rows, said 0 and empty.
    func testAToManyReadThroughANilToOneIsNil() throws {
        try assertPredicate(#Predicate<SemanticsLabel> { $0.shelf?.labels.isEmpty == false }, selects: ["on full"], label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { $0.shelf?.labels.count == 1 }, selects: ["on full"], label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { $0.shelf?.labels.count == 0 }, selects: [], label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { ($0.shelf?.labels.count ?? -1) == -1 },
                            selects: ["ok", "é", "e\u{301}", "🇳🇴", "👍🏽"], label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { $0.shelf?.labels.isEmpty == true }, selects: [], label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { $0.shelf?.labels.contains { $0.note == "a" } == false }, selects: [], label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { $0.shelf?.labels.allSatisfy { $0.note == "b" } == false },
                            selects: ["on full"], label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { $0.shelf.flatMap { $0.labels.isEmpty } ?? true },
                            selects: ["ok", "é", "e\u{301}", "🇳🇴", "👍🏽"], label: \.name)
        // From the shelf's own row, the reading is as it was.
        try assertPredicate(#Predicate<SemanticsShelf> { $0.labels.isEmpty }, selects: ["Empty"], label: \.name)
        try assertPredicate(#Predicate<SemanticsShelf> { $0.labels.count == 1 }, selects: ["Full"], label: \.name)
    }

    /// `[nil, "a"].contains($0.note)` finds the labels without a note, as Swift's contains does;
    /// SQL's IN never matches NULL.
    func testANilAmongCapturedValuesFindsTheRowsWithoutOne() throws {
        let nilOrA: [String?] = [nil, "a"]
        try assertPredicate(#Predicate<SemanticsLabel> { nilOrA.contains($0.note) },
                            selects: ["on full", "é", "e\u{301}", "🇳🇴", "👍🏽"], label: \.name)
        let onlyNil: [String?] = [nil]
        try assertPredicate(#Predicate<SemanticsLabel> { onlyNil.contains($0.note) }, selects: ["é", "e\u{301}", "👍🏽"], label: \.name)
        let onlyA: [String?] = ["a"]
        try assertPredicate(#Predicate<SemanticsLabel> { onlyA.contains($0.note) }, selects: ["on full", "🇳🇴"], label: \.name)
        try assertPredicate(#Predicate<SemanticsLabel> { !nilOrA.contains($0.note) }, selects: ["ok"], label: \.name)
    }

    /// A division by zero is infinite in Swift (or not a number, for 0 / 0), and was NULL in SQL,
    /// which no comparison matched.
    func testADivisionByZeroIsInfiniteAsInSwift() throws {
        for (name, part, whole) in [("up", 1.0, 0.0), ("down", -1.0, 0.0), ("none", 0.0, 0.0), ("half", 1.0, 2.0)] {
            context.insert(SemanticsRatio(name: name, part: part, whole: whole))
        }
        try context.save()
        try assertPredicate(#Predicate<SemanticsRatio> { $0.part / $0.whole > 0.5 }, selects: ["up"], label: \.name)
        try assertPredicate(#Predicate<SemanticsRatio> { $0.part / $0.whole < 0 }, selects: ["down"], label: \.name)
        try assertPredicate(#Predicate<SemanticsRatio> { $0.part / $0.whole != 0.5 }, selects: ["up", "down", "none"], label: \.name)
        try assertPredicate(#Predicate<SemanticsRatio> { $0.part / $0.whole == 0.5 }, selects: ["half"], label: \.name)
    }
}
