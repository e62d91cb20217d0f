import Foundation
@testable import ObjectGraph
import XCTest

/// Counts of saved models (`fetchCount`, `counts(of:)` by attribute and by to-one relationship,
/// `counts(ofEach:)` by to-many relationship), for predicates of `RandomPredicateTests`' kinds, while
/// one long-lived context inserts, edits, relates, deletes (one by one and by predicate) and saves,
/// another container on the same file (another process) edits and saves, and `prepareCounts` reads
/// key sets ahead now and then. The counts are kept between saves and brought up to date by them;
/// after every step each container's answer must be what `Predicate.evaluate` finds among the models
/// a container opened afresh reads. `RANDOM_COUNTS_SEED` and `RANDOM_COUNTS_STEPS` run other sequences.
extension RandomPredicateTests {
    func testKeptCountsFollowEverySaveOfEitherProcess() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_COUNTS", seeds: [20_261_128, 7, 19], steps: 120) {
            try runCounts(seed: $0, steps: $1)
        }
    }

    /// The sequence that found a save's upkeep of a kept count left behind another process's commit
    /// when the store skipped its own transactions in the history without catching up first (it failed
    /// about three runs in five, at step 216 of 300; whether it does depends on when the store's files
    /// settle, and with fewer steps the sequence is another one).
    func testKeptCountsFollowOwnSavesAfterAnotherProcesssCommit() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_COUNTS_OWN_SAVES", seeds: [306], steps: 300) {
            try runCounts(seed: $0, steps: $1)
        }
    }

    private func runCounts(seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        let url = folder.appendingPathComponent("counts-\(seed).store")
        func open() throws -> ModelContainer {
            try ModelContainer(for: Schema([Specimen.self]), configurations: ModelConfiguration(url: url))
        }
        container = try open()
        let otherProcess = try open()
        let writer = ModelContext(container)
        writer.autosaveEnabled = false
        try saveGroupsAndMarks(in: writer)
        let words = Self.labelWords
        var serial = 0
        var log: [String] = []

        func fail(_ message: String) throws -> Never {
            throw RandomRunDiverged.reported(message, seed: seed, log: log)
        }
        func randomPredicate() -> Predicate<Specimen>? {
            guard random.chance(85) else { return nil }
            // Conjunctions of a few parts, as a page's filters make, or any tree.
            let parts = (0..<Int.random(in: 1...3, using: &random)).map { _ in randomCondition(depth: random.chance(50) ? 0 : 2, using: &random) }
            return Predicate<Specimen> { root in
                AnyCondition(parts.dropFirst().reduce(AnyCondition(parts[0](root))) { combined, part in
                    AnyCondition(PredicateExpressions.Conjunction(lhs: combined, rhs: AnyCondition(part(root))))
                })
            }
        }
        func edit(_ specimen: Specimen, in context: ModelContext) throws -> String {
            let groups = try context.fetch(FetchDescriptor<SpecimenGroup>(sortBy: [SortDescriptor(\.name)]))
            let marks = try context.fetch(FetchDescriptor<SpecimenMark>(sortBy: [SortDescriptor(\.name)]))
            switch Int.random(in: 0..<9, using: &random) {
            case 7: specimen.scores = RandomPredicateTests.randomScores(using: &random)
            case 8: specimen.tally = RandomPredicateTests.randomTally(using: &random)
            case 0: specimen.number = Int.random(in: -5...5, using: &random)
            case 1: specimen.ratio = Double(Int.random(in: -20...20, using: &random)) / 4
            case 2: specimen.label = random.pick(words)! + "\(Int.random(in: 0..<7, using: &random))"
            case 3: specimen.maybe = random.chance(40) ? nil : Int.random(in: 0...3, using: &random)
            case 4: specimen.genre = Genre.allCases[Int.random(in: 0..<3, using: &random)]
            case 5: specimen.group = random.chance(20) ? nil : groups[Int.random(in: 0..<groups.count, using: &random)]
            default:
                let mark = marks[Int.random(in: 0..<marks.count, using: &random)]
                if specimen.marks.contains(where: { $0 === mark }) {
                    specimen.marks.removeAll { $0 === mark }
                } else {
                    specimen.marks.append(mark)
                }
            }
            return "\(specimen.label) \(specimen.number) \(specimen.ratio) \(specimen.maybe.map(String.init) ?? "nil") \(specimen.genre) "
                + "\(specimen.group?.name ?? "no group") \(specimen.marks.map(\.name).sorted()) \(specimen.scores) \(specimen.tally)"
        }

        func check(_ moment: String) throws {
            // The truth: every saved specimen, read by a container with nothing kept.
            let fresh = ModelContext(try open())
            let everyModel = try fresh.fetch(FetchDescriptor<Specimen>())
            let keyOfGroup = Dictionary(uniqueKeysWithValues: try fresh.fetch(FetchDescriptor<SpecimenGroup>()).map { ($0.persistentModelID, $0.name) })
            let keyOfMark = Dictionary(uniqueKeysWithValues: try fresh.fetch(FetchDescriptor<SpecimenMark>()).map { ($0.persistentModelID, $0.name) })
            for query in 0..<3 {
                let predicate = randomPredicate()
                let matching = try everyModel.filter { try predicate?.evaluate($0) ?? true }
                var genres: [Genre: Int] = [:], groups: [String: Int] = [:], marks: [String: Int] = [:]
                for specimen in matching {
                    genres[specimen.genre, default: 0] += 1
                    groups[specimen.group?.name ?? "no group", default: 0] += 1
                    for mark in specimen.marks { marks[mark.name, default: 0] += 1 }
                }
                let described = "query \(query) (\(predicate.map { (try? sql($0)) ?? "?" } ?? "all"))"
                for (reader, name) in [(ModelContext(container), "this process"), (ModelContext(otherProcess), "the other process")] {
                    if random.chance(15) {
                        try reader.prepareCounts(of: \Specimen.genre, where: predicate)
                        try reader.prepareCounts(ofEach: \Specimen.marks, where: predicate)
                    }
                    let counted = try reader.fetchCount(FetchDescriptor(predicate: predicate))
                    if counted != matching.count { try fail("\(moment), \(described), \(name): fetchCount \(counted), expected \(matching.count)") }
                    let byGenre = try reader.counts(of: \Specimen.genre, where: predicate)
                    if byGenre != genres { try fail("\(moment), \(described), \(name): per genre \(byGenre), expected \(genres)") }
                    let byGroup = try reader.counts(of: \Specimen.group, where: predicate)
                    let byGroupName = Dictionary(byGroup.map { (key, count) in (key.flatMap { keyOfGroup[$0] } ?? "no group", count) }, uniquingKeysWith: +)
                    if byGroupName != groups { try fail("\(moment), \(described), \(name): per group \(byGroupName), expected \(groups)") }
                    let byMark = try reader.counts(ofEach: \Specimen.marks, where: predicate)
                    let byMarkName = Dictionary(byMark.map { (key, count) in (keyOfMark[key] ?? "?", count) }, uniquingKeysWith: +)
                    if byMarkName != marks { try fail("\(moment), \(described), \(name): per mark \(byMarkName), expected \(marks)") }
                }
            }
        }

        let other = ModelContext(otherProcess)
        other.autosaveEnabled = false
        for step in 0..<steps {
            let specimens = try writer.fetch(FetchDescriptor<Specimen>())
            let chosen = specimens.isEmpty ? nil : specimens[Int.random(in: 0..<specimens.count, using: &random)]
            switch Int.random(in: 0..<100, using: &random) {
            case _ where chosen == nil, 0..<30:
                serial += 1
                let specimen = Specimen(
                    label: random.pick(words)! + "\(serial % 7)", number: Int.random(in: -5...5, using: &random),
                    ratio: Double(Int.random(in: -20...20, using: &random)) / 4,
                    maybe: random.chance(40) ? nil : Int.random(in: 0...3, using: &random),
                    genre: Genre.allCases[Int.random(in: 0..<3, using: &random)],
                    seen: Date(timeIntervalSince1970: Double(Int.random(in: 0...10, using: &random)) * 1000))
                writer.insert(specimen)
                log.append("\(step): insert \(try edit(specimen, in: writer))")
            case 30..<60:
                guard let specimen = chosen else { continue }
                log.append("\(step): edit to \(try edit(specimen, in: writer))")
            case 60..<68:
                guard let specimen = chosen else { continue }
                log.append("\(step): delete \(specimen.label)")
                writer.delete(specimen)
            case 68..<71:
                let number = Int.random(in: -5...5, using: &random)
                log.append("\(step): delete every specimen numbered \(number)")
                try writer.delete(model: Specimen.self, where: #Predicate { $0.number == number })
            case 71..<85:
                // Another process edits a specimen it reads afresh, and saves.
                let theirs = try other.fetch(FetchDescriptor<Specimen>())
                guard !theirs.isEmpty else { continue }
                let specimen = theirs[Int.random(in: 0..<theirs.count, using: &random)]
                log.append("\(step): the other process edits to \(try edit(specimen, in: other))")
                do {
                    try other.save()
                } catch let error as SwiftDataError where error.code == .saveConflict {
                    log.append("\(step): the other process's save conflicts")
                    other.rollback()
                }
                continue
            default:
                break
            }
            if random.chance(60) {
                do {
                    try writer.save()
                    log.append("\(step): save")
                } catch let error as SwiftDataError where error.code == .saveConflict {
                    log.append("\(step): the save conflicts; rolled back")
                    writer.rollback()
                }
            }
            try check("after step \(step)")
        }
    }
}
