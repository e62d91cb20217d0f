import Foundation
@testable import ObjectGraph
import XCTest

/// For random data and a few hundred random predicates over attributes and relationships, the rows
/// SQL selects are the rows `Predicate.evaluate` keeps in memory.
final class RandomPredicateTests: PredicateTestCase {
    typealias Root = PredicateExpressions.Variable<Specimen>

    /// `RANDOM_PREDICATE_SEED` and `RANDOM_PREDICATE_STEPS` (rounds) run other sequences.
    func testSQLAgreesWithInMemoryEvaluation() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_PREDICATE", seeds: [20_261_122], steps: 300) { try compareSQLWithEvaluation(seed: $0, rounds: $1) }
    }

    private func compareSQLWithEvaluation(seed: UInt64, rounds: Int) throws {
        container = try ModelContainer(
            for: Schema([Specimen.self]), configurations: ModelConfiguration(url: folder.appendingPathComponent("predicates-\(seed).store")))
        context = ModelContext(container)
        var random = SeededGenerator(seed: seed)
        let groups = (0..<4).map { SpecimenGroup(name: "g\($0)", rank: $0) }
        let marks = (0..<5).map { SpecimenMark(name: "m\($0)") }
        let words = Self.labelWords
        for index in 0..<120 {
            let specimen = Specimen(
                label: words[Int.random(in: 0..<words.count, using: &random)] + "\(index % 7)",
                number: Int.random(in: -5...5, using: &random),
                ratio: Double(Int.random(in: -20...20, using: &random)) / 4,
                maybe: Bool.random(using: &random) ? nil : Int.random(in: 0...3, using: &random),
                genre: Genre.allCases[Int.random(in: 0..<3, using: &random)],
                seen: Date(timeIntervalSince1970: Double(Int.random(in: 0...10, using: &random)) * 1000))
            specimen.scores = Self.randomScores(using: &random)
            specimen.tally = Self.randomTally(using: &random)
            if Int.random(in: 0..<5, using: &random) > 0 { specimen.group = groups[Int.random(in: 0..<4, using: &random)] }
            specimen.marks = marks.filter { _ in Int.random(in: 0..<3, using: &random) == 0 }
            context.insert(specimen)
        }
        try context.save()

        markIDs = marks.map(\.persistentModelID)
        let reader = ModelContext(container)
        let all = try reader.fetch(FetchDescriptor<Specimen>())
        var nonTrivial = 0
        for round in 0..<rounds {
            let tree = randomCondition(depth: 3, using: &random)
            let predicate = Predicate<Specimen> { root in AnyCondition(tree(root)) }
            let fromSQL = Set(try reader.fetch(FetchDescriptor(predicate: predicate)).map(\.persistentModelID))
            let inMemory = Set(try all.filter { try predicate.evaluate($0) }.map(\.persistentModelID))
            let generatedSQL = try sql(predicate)
            XCTAssertEqual(fromSQL.symmetricDifference(inMemory).map(\.description).sorted(), [],
                           "seed \(seed), round \(round): models where SQL and evaluate disagree for \(generatedSQL)")
            // A count writes some to-many tests another way (as a set of owners): it must agree too.
            XCTAssertEqual(try reader.fetchCount(FetchDescriptor(predicate: predicate)), inMemory.count,
                           "seed \(seed), round \(round): fetchCount disagrees with evaluate for \(generatedSQL)")
            if !fromSQL.isEmpty && fromSQL.count < all.count { nonTrivial += 1 }
        }
        XCTAssertGreaterThan(nonTrivial, rounds / 3, "most generated predicates select some rows but not all")
    }

    /// Up to four scores from -3 to 6, repeats allowed.
    static func randomScores(using random: inout SeededGenerator) -> [Int] {
        (0..<Int.random(in: 0...4, using: &random)).map { _ in Int.random(in: -3...6, using: &random) }
    }

    /// Some of the keys "a", "b" and "c", each with a count from 0 to 5.
    static func randomTally(using random: inout SeededGenerator) -> [String: Int] {
        var tally: [String: Int] = [:]
        for key in ["a", "b", "c"] where Bool.random(using: &random) { tally[key] = Int.random(in: 0...5, using: &random) }
        return tally
    }

    /// The words specimens' labels are made of (with a digit after them).
    static let labelWords = ["alpha", "beta", "gamma", "delta", "Alpha"]

    /// Four groups and five marks, saved, for the random runs' specimens to be related to; notes the
    /// marks' identifiers for the conditions that test them by key.
    func saveGroupsAndMarks(in context: ModelContext) throws {
        for index in 0..<4 { context.insert(SpecimenGroup(name: "g\(index)", rank: index)) }
        for index in 0..<5 { context.insert(SpecimenMark(name: "m\(index)")) }
        try context.save()
        markIDs = try context.fetch(FetchDescriptor<SpecimenMark>()).map(\.persistentModelID)
    }

    // MARK: Generating predicates

    typealias Condition = (Root) -> any StandardPredicateExpression<Bool>
    /// The marks' identifiers, for tests on a to-many relationship by key.
    var markIDs: [PersistentIdentifier] = []

    func randomCondition(depth: Int, using random: inout SeededGenerator) -> Condition {
        if depth == 0 || Int.random(in: 0..<3, using: &random) == 0 { return randomLeaf(using: &random) }
        let left = randomCondition(depth: depth - 1, using: &random)
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            let right = randomCondition(depth: depth - 1, using: &random)
            return { AnyCondition(PredicateExpressions.Conjunction(lhs: AnyCondition(left($0)), rhs: AnyCondition(right($0)))) }
        case 1:
            let right = randomCondition(depth: depth - 1, using: &random)
            return { AnyCondition(PredicateExpressions.Disjunction(lhs: AnyCondition(left($0)), rhs: AnyCondition(right($0)))) }
        default:
            return { AnyCondition(PredicateExpressions.Negation(AnyCondition(left($0)))) }
        }
    }

    func randomLeaf(using random: inout SeededGenerator) -> Condition {
        let number = Int.random(in: -5...5, using: &random)
        let ratio = Double(Int.random(in: -20...20, using: &random)) / 4
        let small = Int.random(in: 0...3, using: &random)
        let genre = Genre.allCases[Int.random(in: 0..<3, using: &random)]
        let word = ["alpha", "ta", "a3", "LPH", "mm"][Int.random(in: 0..<5, using: &random)]
        let group = "g\(Int.random(in: 0..<4, using: &random))"
        let mark = "m\(Int.random(in: 0..<5, using: &random))"
        let cutoff = Date(timeIntervalSince1970: Double(Int.random(in: 0...10, using: &random)) * 1000)
        let op: PredicateExpressions.ComparisonOperator = [.lessThan, .lessThanOrEqual, .greaterThan, .greaterThanOrEqual][Int.random(in: 0..<4, using: &random)]
        let someMarks = markIDs.filter { _ in Bool.random(using: &random) }
        let low = Int.random(in: -5...2, using: &random)
        let span = low...(low + Int.random(in: 0...4, using: &random))
        let ordering = [ComparisonResult.orderedAscending, .orderedSame, .orderedDescending][Int.random(in: 0..<3, using: &random)]
        let genreName = genre.rawValue
        let key = ["a", "b", "c", "d"][Int.random(in: 0..<4, using: &random)]
        switch Int.random(in: 0..<37, using: &random) {
        case 0: return { AnyCondition(graft(#Predicate<Specimen> { $0.number == number }, on: $0)) }
        case 1: return { AnyCondition(PredicateExpressions.Comparison(
            lhs: PredicateExpressions.KeyPath(root: $0, keyPath: \Specimen.number), rhs: PredicateExpressions.Value(number), op: op)) }
        case 2: return { AnyCondition(PredicateExpressions.Comparison(
            lhs: PredicateExpressions.KeyPath(root: $0, keyPath: \Specimen.ratio), rhs: PredicateExpressions.Value(ratio), op: op)) }
        case 3: return { AnyCondition(graft(#Predicate<Specimen> { $0.maybe == nil }, on: $0)) }
        case 4: return { AnyCondition(graft(#Predicate<Specimen> { ($0.maybe ?? -1) >= small }, on: $0)) }
        case 5: return { AnyCondition(graft(#Predicate<Specimen> { $0.genre == genre }, on: $0)) }
        case 6: return { AnyCondition(graft(#Predicate<Specimen> { $0.label.contains(word) }, on: $0)) }
        case 7: return { AnyCondition(graft(#Predicate<Specimen> { $0.label.localizedStandardContains(word) }, on: $0)) }
        case 8: return { AnyCondition(graft(#Predicate<Specimen> { $0.group?.name == group }, on: $0)) }
        case 9: return { AnyCondition(graft(#Predicate<Specimen> { ($0.group?.rank ?? 9) < small }, on: $0)) }
        case 10: return { AnyCondition(graft(#Predicate<Specimen> { $0.marks.contains { $0.name == mark } }, on: $0)) }
        case 11: return { AnyCondition(graft(#Predicate<Specimen> { $0.marks.count > small }, on: $0)) }
        case 12: return { AnyCondition(graft(#Predicate<Specimen> { $0.seen >= cutoff }, on: $0)) }
        case 13: return { AnyCondition(graft(#Predicate<Specimen> { $0.marks.contains { someMarks.contains($0.persistentModelID) } }, on: $0)) }
        case 14: return { AnyCondition(graft(#Predicate<Specimen> { $0.number * 2 - 1 > number && !$0.marks.isEmpty }, on: $0)) }
        case 15: return { AnyCondition(PredicateExpressions.Comparison(
            lhs: PredicateExpressions.KeyPath(root: $0, keyPath: \Specimen.label), rhs: PredicateExpressions.Value(word), op: op)) }
        case 16: return { AnyCondition(graft(#Predicate<Specimen> { $0.label.starts(with: word) }, on: $0)) }
        case 17: return { AnyCondition(graft(#Predicate<Specimen> { $0.label.caseInsensitiveCompare(word) == ordering }, on: $0)) }
        case 18: return { AnyCondition(graft(#Predicate<Specimen> { $0.label.localizedCompare(word) == ordering }, on: $0)) }
        case 19: return { AnyCondition(graft(#Predicate<Specimen> { ($0.number > 0 ? $0.number : -$0.number) >= small }, on: $0)) }
        case 20: return { AnyCondition(graft(#Predicate<Specimen> { span.contains($0.number) }, on: $0)) }
        case 21: return { AnyCondition(graft(#Predicate<Specimen> { $0.marks.allSatisfy { $0.name != mark } }, on: $0)) }
        case 22: return { AnyCondition(graft(#Predicate<Specimen> { $0.marks.filter { $0.name != mark }.count >= small }, on: $0)) }
        case 23: return { AnyCondition(graft(#Predicate<Specimen> { $0.number % 3 == small - 2 || $0.number / 2 == low }, on: $0)) }
        case 24: return { AnyCondition(graft(#Predicate<Specimen> { $0.ratio / 2 > ratio }, on: $0)) }
        case 25: return { AnyCondition(graft(#Predicate<Specimen> { $0.group == nil }, on: $0)) }
        case 26: return { AnyCondition(graft(#Predicate<Specimen> { $0.genre.rawValue == genreName }, on: $0)) }
        case 27: return { AnyCondition(graft(#Predicate<Specimen> { ($0.group?.specimens.count ?? 0) > small }, on: $0)) }
        case 28: return { AnyCondition(graft(#Predicate<Specimen> { $0.maybe.flatMap { $0 * 2 } == small }, on: $0)) }
        case 29: return { AnyCondition(graft(#Predicate<Specimen> { $0.scores.contains { $0 > number } }, on: $0)) }
        case 30: return { AnyCondition(graft(#Predicate<Specimen> { $0.scores.allSatisfy { $0 >= low } }, on: $0)) }
        case 31: return { AnyCondition(graft(#Predicate<Specimen> { ($0.scores.max() ?? -9) >= number }, on: $0)) }
        case 32: return { AnyCondition(graft(#Predicate<Specimen> { ($0.scores.min() ?? 9) < small }, on: $0)) }
        case 33: return { AnyCondition(graft(#Predicate<Specimen> { $0.scores.filter { $0 > low }.count >= small }, on: $0)) }
        case 34: return { AnyCondition(graft(#Predicate<Specimen> { $0.scores.contains(small) || $0.scores.count == small }, on: $0)) }
        case 35: return { AnyCondition(graft(#Predicate<Specimen> { ($0.tally[key] ?? -1) >= small }, on: $0)) }
        default: return { AnyCondition(graft(#Predicate<Specimen> { $0.tally[key, default: 0] + $0.tally.count > small }, on: $0)) }
        }
    }
}

/// A predicate's expression with its variable replaced by `root`, to graft it into a bigger tree.
func graft(_ predicate: Predicate<Specimen>, on root: PredicateExpressions.Variable<Specimen>) -> any StandardPredicateExpression<Bool> {
    GraftedCondition(predicate: predicate, root: root)
}

/// A predicate evaluated with another tree's variable: in memory by binding that variable, in SQL by
/// binding this predicate's variable to whatever the other one stands for.
struct GraftedCondition: StandardPredicateExpression, SQLTranslatableExpression {
    let predicate: Predicate<Specimen>
    let root: PredicateExpressions.Variable<Specimen>

    func evaluate(_ bindings: PredicateBindings) throws -> Bool {
        guard let value = bindings[root] else { throw SwiftDataError(.unsupportedPredicate, "unbound") }
        return try predicate.evaluate(value)
    }

    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        translation.bind(predicate.variable.key, to: try translation.lookup(root.key))
        return .condition(try translation.condition(predicate.expression))
    }

    init(predicate: Predicate<Specimen>, root: PredicateExpressions.Variable<Specimen>) {
        self.predicate = predicate
        self.root = root
    }

    init(from decoder: any Decoder) throws { throw SwiftDataError(.unsupportedPredicate, "not decodable") }
    func encode(to encoder: any Encoder) throws { throw SwiftDataError(.unsupportedPredicate, "not encodable") }
}

/// Erases the type of a generated condition, so that trees of any shape fit in one `Predicate`.
struct AnyCondition: StandardPredicateExpression, SQLTranslatableExpression {
    let base: any StandardPredicateExpression<Bool>

    init(_ base: any StandardPredicateExpression<Bool>) { self.base = base }

    func evaluate(_ bindings: PredicateBindings) throws -> Bool { try base.evaluate(bindings) }

    func sqlTerm(in translation: PredicateTranslation) throws -> SQLTerm {
        .condition(try translation.condition(base))
    }

    init(from decoder: any Decoder) throws { throw SwiftDataError(.unsupportedPredicate, "not decodable") }
    func encode(to encoder: any Encoder) throws { throw SwiftDataError(.unsupportedPredicate, "not encodable") }
}

/// A repeatable random generator (SplitMix64), so that a failing round can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
