import Foundation
@testable import ObjectGraph
import XCTest

/// Random inserts, renames, swaps and deletes of labels whose names are unique, drawn from a handful
/// of names so that they collide all the time, against a plain model of what README promises:
///
/// - a save applies its deletes, then its edits, then its inserts; the edits are checked as a whole,
///   so names may move between labels in one save (a swap), and a name two labels would hold once
///   every edit is made throws `.uniqueConstraintViolation` and writes nothing;
/// - an insert whose name a label holds (once the edits are made) takes over that label's row, its
///   values replacing the row's; two pending inserts of one name end as one row, the later's values;
/// - another process's new labels are there to collide with, though this context never read them.
///
/// After every save and rollback the labels the context shows, their identities (a label stands for
/// the same row until it is deleted, whatever its name; an inserted label that became another's row
/// stands for that row, and goes on being edited) and the store read by another container are
/// compared with the plain model. `RANDOM_UNIQUE_SEED` and `RANDOM_UNIQUE_STEPS` run other sequences.
///
/// The same run goes through `PairedLabel`, whose name is two properties unique together (`#Unique`):
/// names that share one half must not collide, and those that share both must.
final class RandomUniqueTests: StoreTestCase {
    /// A row of the plain model's store.
    struct Row: Equatable, CustomStringConvertible {
        var name: String
        var uses: Int
        var description: String { "\(name)=\(uses)" }
    }

    private func run<Model: RandomlyNamedLabel>(_: Model.Type, names: [String], seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        let url = folder.appendingPathComponent("unique-\(seed).store")
        let container = try ModelContainer(for: Model.self, configurations: ModelConfiguration(url: url))
        let otherProcess = try ModelContainer(for: Model.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        // The store, by the plain model's own row numbers; and which row each label the context holds stands for.
        var rows: [Int: Row] = [:]
        var nextRow = 0
        var saved: [(label: Model, row: Int)] = []
        var deleted: Set<Int> = []
        var inserted: [Model] = []
        var log: [String] = []

        func fail(_ message: String) throws -> Never {
            throw RandomRunDiverged.reported(message, seed: seed, log: log)
        }
        func describe(_ values: some Sequence<Row>) -> String { values.map(\.description).sorted().joined(separator: ", ") }

        /// After a save or a rollback: the context's labels are the store's rows, each the same object
        /// and identifier as before, and another container reads the same rows.
        func resynchronize(_ moment: String, standingFor expected: [(label: Model, row: Int)]) throws {
            let fetched = try context.fetch(FetchDescriptor<Model>())
            let shown = fetched.map { Row(name: $0.name, uses: $0.uses) }
            if describe(shown) != describe(rows.values) { try fail("\(moment), the context shows \(describe(shown)) vs \(describe(rows.values))") }
            let stored = try ModelContext(otherProcess).fetch(FetchDescriptor<Model>()).map { Row(name: $0.name, uses: $0.uses) }
            if describe(stored) != describe(rows.values) { try fail("\(moment), another container reads \(describe(stored)) vs \(describe(rows.values))") }
            let rowNamed = Dictionary(uniqueKeysWithValues: rows.map { ($0.value.name, $0.key) })
            var identifiers: [Int: PersistentIdentifier] = [:]
            saved = []
            for label in fetched {
                guard let row = rowNamed[label.name] else { continue }
                saved.append((label, row))
                identifiers[row] = label.persistentModelID
            }
            for (label, row) in expected {
                guard let values = rows[row] else { continue }
                if Row(name: label.name, uses: label.uses) != values { try fail("\(moment), a label of \(values) shows \(label.name)=\(label.uses)") }
                if label.persistentModelID != identifiers[row] { try fail("\(moment), a label of \(values) has another row's identifier") }
                // A label merged into another by its name stays in use: its edits reach the row.
                if !saved.contains(where: { $0.label === label }) { saved.append((label, row)) }
            }
        }

        /// What a save should do: throw when a name would be held twice once every edit is made; else
        /// the store it leaves, and the row each of the context's labels then stands for.
        func plannedSave() -> (collides: Bool, final: [Int: Row], standing: [(label: Model, row: Int)]) {
            var final = rows
            for row in deleted { final[row] = nil }
            for (label, row) in saved where !deleted.contains(row) { final[row] = Row(name: label.name, uses: label.uses) }
            if Set(final.values.map(\.name)).count != final.count { return (true, final, saved) }
            var standing = saved.filter { !deleted.contains($0.row) }
            var next = nextRow
            for label in inserted {
                let row = final.first { $0.value.name == label.name }?.key ?? next
                if row == next { next += 1 }
                final[row] = Row(name: label.name, uses: label.uses)
                standing.append((label, row))
            }
            return (false, final, standing)
        }

        for step in 0..<steps {
            let moment = "step \(step)"
            let live = saved.filter { !deleted.contains($0.row) }.map(\.label) + inserted
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<20:
                guard let name = random.pick(names) else { continue }
                let label = Model(name: name, uses: step)
                context.insert(label)
                inserted.append(label)
                log.append("insert \(name)=\(step)")
            case 20..<38:
                guard let index = random.pick(Array(live.indices)), let name = random.pick(names) else { continue }
                log.append("rename \(live[index].name) to \(name)")
                live[index].name = name
            case 38..<46:
                guard let index = random.pick(Array(live.indices)) else { continue }
                live[index].uses = step
                log.append("\(live[index].name) uses \(step)")
            case 46..<54:
                // Two labels trade names: the final state is valid, the first UPDATE alone is not.
                let indices = live.indices.shuffled(using: &random).prefix(2)
                guard indices.count == 2, let first = indices.first, let second = indices.last else { continue }
                (live[first].name, live[second].name) = (live[second].name, live[first].name)
                log.append("swap \(live[first].name) and \(live[second].name)")
            case 54..<62:
                guard let index = random.pick(Array(live.indices)) else { continue }
                let label = live[index]
                context.delete(label)
                if let position = inserted.firstIndex(where: { $0 === label }) {
                    inserted.remove(at: position)
                } else if let entry = saved.first(where: { $0.label === label }) {
                    deleted.insert(entry.row)
                }
                log.append("delete \(label.name)")
            case 62..<67:
                // Another process adds a label of a name the store does not hold yet.
                let free = Set(names).subtracting(rows.values.map(\.name))
                guard let name = random.pick(free) else { continue }
                let other = ModelContext(otherProcess)
                other.insert(Model(name: name, uses: 1_000 + step))
                try other.save()
                rows[nextRow] = Row(name: name, uses: 1_000 + step)
                nextRow += 1
                log.append("another process inserts \(name)=\(1_000 + step)")
            case 67..<92:
                var plan = plannedSave()
                do {
                    try context.save()
                    if plan.collides { try fail("\(moment), the save went through a collision") }
                    log.append("save")
                } catch let error as SwiftDataError where error.code == .uniqueConstraintViolation {
                    if !plan.collides { try fail("\(moment), the save threw \(error)") }
                    if random.chance(50) {
                        log.append("save: collision, rolled back")
                        context.rollback()
                        plan = (false, rows, saved)
                    } else {
                        // What the error says to do instead: change the values, and save again.
                        let held = Dictionary(grouping: plan.final.values, by: \.name)
                        for (number, entry) in saved.enumerated() where !deleted.contains(entry.row) && held[entry.label.name, default: []].count > 1 {
                            entry.label.name += "~\(step)~\(number)"
                        }
                        plan = plannedSave()
                        if plan.collides { try fail("\(moment), renaming did not end the collision") }
                        do {
                            try context.save()
                        } catch {
                            try fail("\(moment), the save after a collision and renames threw \(error)")
                        }
                        log.append("save: collision, renamed, saved")
                    }
                }
                rows = plan.final
                nextRow = max(nextRow, (rows.keys.max() ?? -1) + 1)
                deleted = []
                inserted = []
                try resynchronize(moment, standingFor: plan.standing)
            default:
                context.rollback()
                let standing = saved
                deleted = []
                inserted = []
                log.append("rollback")
                try resynchronize(moment, standingFor: standing)
            }
        }
    }

    func testLabelsOfCollidingNamesMatchThePlainModel() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_UNIQUE", seeds: [20_261_127, 5, 41], steps: 500) {
            try run(Label.self, names: ["go", "rust", "swift", "zig", "c", "lua"], seed: $0, steps: $1)
        }
    }

    func testPairedLabelsMatchThePlainModel() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_UNIQUE", seeds: [20_261_128, 6, 42], steps: 500) {
            try run(PairedLabel.self, names: ["go/a", "go/b", "rust/a", "rust/b", "zig/a", "a/go"], seed: $0, steps: $1)
        }
    }
}

/// What the random run needs of a label: a name that is unique, and a count that is not.
protocol RandomlyNamedLabel: PersistentModel {
    var name: String { get set }
    var uses: Int { get set }
    init(name: String, uses: Int)
}

extension Label: RandomlyNamedLabel {}

/// A label whose name is kept as two properties unique together: "go/a" is `head` "go", `tail` "a".
@Model final class PairedLabel: RandomlyNamedLabel {
    #Unique<PairedLabel>([\.head, \.tail])
    var head: String
    var tail: String
    var uses: Int = 0

    init(name: String, uses: Int) {
        let halves = Self.halves(of: name)
        head = halves.head
        tail = halves.tail
        self.uses = uses
    }

    /// A renaming edits both halves, though often only one of them changes.
    var name: String {
        get { head + "/" + tail }
        set {
            let halves = Self.halves(of: newValue)
            head = halves.head
            tail = halves.tail
        }
    }

    private static func halves(of name: String) -> (head: String, tail: String) {
        let parts = name.split(separator: "/", maxSplits: 1)
        return (parts.first.map(String.init) ?? "", parts.count > 1 ? String(parts[1]) : "")
    }
}
