import Foundation
@testable import ObjectGraph
import XCTest

/// Fetches of a context with unsaved changes, against the same context's models in memory. One
/// context inserts specimens, edits their attributes, sets their group and marks from either side,
/// deletes them one by one and by predicate, renames, adds and deletes groups, saves and rolls back
/// in random turns; after each step, random fetches (a predicate of `RandomPredicateTests`' kinds or
/// none, one or two sort descriptors, an offset and a limit or not) must give what README promises:
/// the context's every model that `Predicate.evaluate` keeps, in the descriptors' order, ties broken
/// as the save will break them (saved rows by key, then unsaved models in the order they were
/// inserted, all in the direction of the last descriptor), cut to the window; and `fetchCount` must
/// count that window.
/// `RANDOM_PENDING_FETCH_SEED` and `RANDOM_PENDING_FETCH_STEPS` run other sequences.
extension RandomPredicateTests {
    func testFetchesWithUnsavedChangesMatchTheContextInMemory() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_PENDING_FETCH", seeds: [20_261_128, 5, 17], steps: 150) {
            try runPendingFetches(seed: $0, steps: $1)
        }
    }

    private static let sortChoices: [(String, @Sendable (SortOrder) -> SortDescriptor<Specimen>)] = [
        ("number", { SortDescriptor(\.number, order: $0) }),
        ("ratio", { SortDescriptor(\.ratio, order: $0) }),
        ("label", { SortDescriptor(\.label, order: $0) }),
        ("maybe", { SortDescriptor(\.maybe, order: $0) }),
        ("seen", { SortDescriptor(\.seen, order: $0) }),
        ("genre", { SortDescriptor(\.genre.rawValue, order: $0) }),
        ("group?.name", { SortDescriptor(\.group?.name, order: $0) }),
        ("group?.rank", { SortDescriptor(\.group?.rank, order: $0) }),
    ]

    private func runPendingFetches(seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        container = try ModelContainer(
            for: Schema([Specimen.self]), configurations: ModelConfiguration(url: folder.appendingPathComponent("pending-\(seed).store")))
        let context = ModelContext(container)
        context.autosaveEnabled = false
        try saveGroupsAndMarks(in: context)
        let words = Self.labelWords
        var serial = 0
        /// The specimens inserted since the last save or rollback, in order: the order their keys will follow.
        var unsaved: [Specimen] = []
        var log: [String] = []

        func fail(_ message: String) throws -> Never {
            throw RandomRunDiverged.reported(message, seed: seed, log: log)
        }
        func name(_ specimen: Specimen) -> String {
            "\(specimen.label)#\(specimen.storage.primaryKey.map(String.init) ?? "new")"
        }
        func newSpecimen() -> Specimen {
            serial += 1
            let specimen = Specimen(
                label: random.pick(words)! + "\(serial % 7)",
                number: Int.random(in: -5...5, using: &random),
                ratio: Double(Int.random(in: -20...20, using: &random)) / 4,
                maybe: random.chance(40) ? nil : Int.random(in: 0...3, using: &random),
                genre: Genre.allCases[Int.random(in: 0..<3, using: &random)],
                seen: Date(timeIntervalSince1970: Double(Int.random(in: 0...10, using: &random)) * 1000))
            specimen.scores = RandomPredicateTests.randomScores(using: &random)
            specimen.tally = RandomPredicateTests.randomTally(using: &random)
            return specimen
        }

        func check(_ moment: String) throws {
            let everyModel = try context.fetch(FetchDescriptor<Specimen>())
            // What the context shows of each model's relationships: no fetch may change it (a prefetch
            // that read the saved rows over unsaved changes would).
            func relationships() -> [String] {
                everyModel.map { "\(name($0)): \($0.group?.name ?? "no group"), \($0.marks.map(\.name))" }
            }
            let shown = relationships()
            for query in 0..<3 {
                let tree = random.chance(80) ? randomCondition(depth: 2, using: &random) : nil
                let predicate = tree.map { tree in Predicate<Specimen> { root in AnyCondition(tree(root)) } }
                var sortNames: [String] = []
                let sorts = (0..<Int.random(in: 0...2, using: &random)).map { _ in
                    let (sortName, make) = Self.sortChoices[Int.random(in: 0..<Self.sortChoices.count, using: &random)]
                    let order: SortOrder = Bool.random(using: &random) ? .forward : .reverse
                    sortNames.append(sortName + (order == .forward ? "" : " desc"))
                    return make(order)
                }
                var descriptor = FetchDescriptor(predicate: predicate, sortBy: sorts)
                if random.chance(60) { descriptor.fetchLimit = Int.random(in: 1...8, using: &random) }
                if random.chance(50) { descriptor.fetchOffset = Int.random(in: 0...6, using: &random) }
                if random.chance(40) { descriptor.relationshipKeyPathsForPrefetching = random.chance(50) ? [\.marks] : [\.group, \.marks] }

                let descending = sorts.last?.order == .reverse
                func tieKey(_ specimen: Specimen) throws -> (Int, Int64) {
                    if let key = specimen.storage.primaryKey { return (0, key) }
                    guard let position = unsaved.firstIndex(where: { $0 === specimen }) else {
                        try fail("\(moment): \(name(specimen)) is listed but neither saved nor inserted")
                    }
                    return (1, Int64(position))
                }
                var ordered: [(Specimen, (Int, Int64))] = []
                for specimen in everyModel where try predicate?.evaluate(specimen) ?? true {
                    ordered.append((specimen, try tieKey(specimen)))
                }
                ordered.sort { left, right in
                    for sort in sorts {
                        switch sort.compare(left.0, right.0) {
                        case .orderedAscending: return true
                        case .orderedDescending: return false
                        case .orderedSame: continue
                        }
                    }
                    return descending ? left.1 > right.1 : left.1 < right.1
                }
                let start = min(descriptor.fetchOffset ?? 0, ordered.count)
                let end = descriptor.fetchLimit.map { min(start + $0, ordered.count) } ?? ordered.count
                let expected = ordered[start..<end].map { name($0.0) }
                let fetched = try context.fetch(descriptor).map(name)
                let described = "query \(query) (\(predicate.map { (try? sql($0)) ?? "?" } ?? "all"), sorted by \(sortNames), "
                    + "offset \(descriptor.fetchOffset.map(String.init) ?? "-"), limit \(descriptor.fetchLimit.map(String.init) ?? "-"))"
                if fetched != expected { try fail("\(moment), \(described): fetch gave \(fetched), in memory \(expected)") }
                // The batch size follows the query's number, so that the seeds' draws stay as they were.
                let batchSize = 1 + query % 4
                let batched = try context.fetch(descriptor, batchSize: batchSize).map(name)
                if batched != expected {
                    try fail("\(moment), \(described): fetch in batches of \(batchSize) gave \(batched), in memory \(expected)")
                }
                let identified = try context.fetchIdentifiers(descriptor)
                if identified != ordered[start..<end].map(\.0.persistentModelID) {
                    try fail("\(moment), \(described): fetchIdentifiers gave \(identified), in memory \(expected)")
                }
                let counted = try context.fetchCount(descriptor)
                if counted != expected.count { try fail("\(moment), \(described): fetchCount gave \(counted), in memory \(expected.count)") }
                let shownNow = relationships()
                if shownNow != shown {
                    try fail("\(moment), \(described), prefetching \(descriptor.relationshipKeyPathsForPrefetching.count) relationships: "
                             + "relationships changed by the fetch: \(zip(shown, shownNow).filter { $0 != $1 })")
                }
            }
        }

        for step in 0..<steps {
            let specimens = try context.fetch(FetchDescriptor<Specimen>())
            let groups = try context.fetch(FetchDescriptor<SpecimenGroup>())
            let marks = try context.fetch(FetchDescriptor<SpecimenMark>())
            let chosen = specimens.isEmpty ? nil : specimens[Int.random(in: 0..<specimens.count, using: &random)]
            let group = random.chance(20) ? nil : groups[Int.random(in: 0..<groups.count, using: &random)]
            let mark = marks[Int.random(in: 0..<marks.count, using: &random)]
            let roll = Int.random(in: 0..<100, using: &random)
            switch roll {
            case _ where chosen == nil, 0..<22:
                let specimen = newSpecimen()
                let related = random.chance(50)
                if related {
                    specimen.group = group
                    specimen.marks = marks.filter { _ in random.chance(30) }
                }
                context.insert(specimen)
                unsaved.append(specimen)
                log.append("\(step): insert \(name(specimen)) in \(specimen.group?.name ?? "no group") with \(specimen.marks.map(\.name))")
            case 22..<42:
                guard let specimen = chosen else { continue }
                let value = newSpecimen()
                switch Int.random(in: 0..<8, using: &random) {
                case 0: specimen.number = value.number
                case 1: specimen.ratio = value.ratio
                case 2: specimen.label = value.label
                case 3: specimen.maybe = value.maybe
                case 4: specimen.genre = value.genre
                case 5: specimen.scores = value.scores
                case 6: specimen.tally = value.tally
                default: specimen.seen = value.seen
                }
                log.append("\(step): edit \(name(specimen)): number \(specimen.number), ratio \(specimen.ratio), maybe \(specimen.maybe.map(String.init) ?? "nil"), "
                           + "genre \(specimen.genre), seen \(specimen.seen.timeIntervalSince1970), scores \(specimen.scores), tally \(specimen.tally)")
            case 42..<50:
                guard let specimen = chosen else { continue }
                if let group, random.chance(50) {
                    group.specimens.append(specimen)
                    log.append("\(step): \(group.name).specimens gains \(name(specimen))")
                } else {
                    specimen.group = group
                    log.append("\(step): \(name(specimen)).group = \(group?.name ?? "nil")")
                }
            case 50..<60:
                guard let specimen = chosen else { continue }
                let fromMark = random.chance(50)
                if specimen.marks.contains(where: { $0 === mark }) {
                    if fromMark { mark.specimens.removeAll { $0 === specimen } } else { specimen.marks.removeAll { $0 === mark } }
                    log.append("\(step): \(name(specimen)) loses \(mark.name)\(fromMark ? " (from the mark)" : "")")
                } else {
                    if fromMark { mark.specimens.append(specimen) } else { specimen.marks.append(mark) }
                    log.append("\(step): \(name(specimen)) gains \(mark.name)\(fromMark ? " (from the mark)" : "")")
                }
            case 60..<68:
                guard let specimen = chosen else { continue }
                log.append("\(step): delete \(name(specimen))")
                context.delete(specimen)
                unsaved.removeAll { $0 === specimen }
            case 68..<71:
                let number = Int.random(in: -5...5, using: &random)
                log.append("\(step): delete every specimen numbered \(number)")
                try context.delete(model: Specimen.self, where: #Predicate { $0.number == number })
                unsaved.removeAll { $0.number == number }
            case 71..<74:
                guard let group else { continue }
                group.name = "g\(Int.random(in: 0..<6, using: &random))"
                group.rank = Int.random(in: 0..<6, using: &random)
                log.append("\(step): group renamed \(group.name), rank \(group.rank)")
            case 74..<76:
                if let group, groups.count > 2, random.chance(50) {
                    // Its specimens keep it until the save applies the delete rule (nullify).
                    log.append("\(step): delete group \(group.name)")
                    context.delete(group)
                } else if let specimen = chosen {
                    let rank = Int.random(in: 0..<6, using: &random)
                    specimen.group = SpecimenGroup(name: "g\(rank)", rank: rank)
                    log.append("\(step): \(name(specimen)) in a new group g\(rank)")
                }
            case 76..<95:
                log.append("\(step): save")
                try context.save()
                unsaved = []
            default:
                log.append("\(step): rollback")
                context.rollback()
                unsaved = []
            }
            try check("after step \(step)")
        }
    }
}
