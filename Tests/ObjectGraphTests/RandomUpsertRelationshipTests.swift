import Foundation
@testable import ObjectGraph
import XCTest

/// One long-lived context filing records (`Vinyl`, unique catalogue numbers drawn from a handful, so
/// that inserts upsert all the time) in bins and under styles: inserting records with a bin and
/// styles set before or after the insert, moving them, styling them from either side, deleting
/// them, reading bins' and styles' records (which keeps them loaded), saving and rolling back in
/// random turns. What README promises of upserts is that the context then shows what the store holds.
///
/// After every save and rollback the store is read through another container and compared with
/// the context: each bin's and style's records as the context lists them (loaded lists included,
/// which an upsert used to leave stale), and each record the test still holds: its title, bin and
/// styles. `RANDOM_UPSERT_SEED` and `RANDOM_UPSERT_STEPS` run other sequences.
final class RandomUpsertRelationshipTests: StoreTestCase {
    private static let catalogueNumbers = ["BN-1", "BN-2", "BN-3", "BN-4"]
    private static let binLabels = ["A", "B", "C"]
    private static let styleNames = ["jazz", "soul", "funk"]

    /// A record as the store or the context shows it.
    struct Filed: Equatable, CustomStringConvertible {
        var title: String
        var bin: String?
        var styles: [String]
        var description: String { "\(title) in \(bin ?? "-") [\(styles.joined(separator: ","))]" }
    }

    private func run(seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        let url = folder.appendingPathComponent("upsert-\(seed).store")
        let types: [any PersistentModel.Type] = [Vinyl.self, VinylBin.self, VinylStyle.self]
        let container = try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: url))
        let otherProcess = try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        for label in Self.binLabels { context.insert(VinylBin(label: label)) }
        for name in Self.styleNames { context.insert(VinylStyle(name: name)) }
        try context.save()
        let bins = try context.fetch(FetchDescriptor<VinylBin>(sortBy: [SortDescriptor(\.label)]))
        let styles = try context.fetch(FetchDescriptor<VinylStyle>(sortBy: [SortDescriptor(\.name)]))
        var held: [Vinyl] = []
        var log: [String] = []

        func fail(_ message: String) throws -> Never {
            XCTFail("seed \(seed): \(message)\nlast steps:\n\(log.suffix(30).joined(separator: "\n"))")
            throw RandomRunDiverged()
        }
        func filed(_ record: Vinyl) -> Filed {
            Filed(title: record.title, bin: record.bin?.label, styles: record.styles.map(\.name).sorted())
        }
        func numbers(_ records: [Vinyl]) -> [String] { records.map(\.catalogueNumber).sorted() }

        /// The context against the store, after a save or a rollback.
        func compareWithStore(_ moment: String) throws {
            let reader = ModelContext(otherProcess)
            let stored = try reader.fetch(FetchDescriptor<Vinyl>())
            let storedByNumber = Dictionary(stored.map { ($0.catalogueNumber, filed($0)) }, uniquingKeysWith: { first, _ in first })
            if storedByNumber.count != stored.count { try fail("\(moment), the store holds a catalogue number twice") }
            for bin in bins {
                let label = bin.label
                let inStore = numbers(try reader.fetch(FetchDescriptor<VinylBin>(predicate: #Predicate { $0.label == label })).first?.records ?? [])
                if numbers(bin.records) != inStore { try fail("\(moment), bin \(label) lists \(numbers(bin.records)), the store \(inStore)") }
            }
            for style in styles {
                let name = style.name
                let inStore = numbers(try reader.fetch(FetchDescriptor<VinylStyle>(predicate: #Predicate { $0.name == name })).first?.records ?? [])
                if numbers(style.records) != inStore { try fail("\(moment), style \(name) lists \(numbers(style.records)), the store \(inStore)") }
            }
            for record in held where record.modelContext != nil {
                guard let expected = storedByNumber[record.catalogueNumber] else {
                    try fail("\(moment), a record the context holds, \(record.catalogueNumber), is not in the store")
                }
                if filed(record) != expected { try fail("\(moment), \(record.catalogueNumber) shows \(filed(record)), the store \(expected)") }
            }
            if try context.fetchCount(FetchDescriptor<Vinyl>()) != stored.count { try fail("\(moment), the context counts another number of records") }
            held = try context.fetch(FetchDescriptor<Vinyl>())
        }

        for step in 0..<steps {
            let moment = "step \(step)"
            let live = held.filter { $0.modelContext != nil && !$0.isDeleted }
            let roll = Int.random(in: 0..<100, using: &random)
            switch roll {
            case 0..<28:
                let number = random.pick(Self.catalogueNumbers)!
                let record = Vinyl(catalogueNumber: number, title: "t\(step)")
                let bin = random.chance(75) ? bins.randomElement(using: &random) : nil
                let chosen = styles.filter { _ in random.chance(40) }
                let before = random.chance(50)
                if before {
                    record.bin = bin
                    record.styles = chosen
                }
                context.insert(record)
                if !before {
                    record.bin = bin
                    record.styles = chosen
                }
                held.append(record)
                log.append("insert \(number) t\(step) in \(bin?.label ?? "-") [\(chosen.map(\.name).joined(separator: ","))], set \(before ? "before" : "after")")
            case 28..<42:
                guard let record = live.randomElement(using: &random) else { continue }
                let bin = random.chance(80) ? bins.randomElement(using: &random) : nil
                record.bin = bin
                log.append("move \(record.catalogueNumber) (\(record.title)) to \(bin?.label ?? "-")")
            case 42..<56:
                guard let record = live.randomElement(using: &random), let style = styles.randomElement(using: &random) else { continue }
                if record.styles.contains(where: { $0 === style }) {
                    record.styles.removeAll { $0 === style }
                    log.append("unstyle \(record.catalogueNumber) (\(record.title)) \(style.name)")
                } else {
                    record.styles.append(style)
                    log.append("style \(record.catalogueNumber) (\(record.title)) \(style.name)")
                }
            case 56..<64:
                guard let record = live.randomElement(using: &random), let style = styles.randomElement(using: &random) else { continue }
                if style.records.contains(where: { $0 === record }) {
                    style.records.removeAll { $0 === record }
                    log.append("from \(style.name): unstyle \(record.catalogueNumber) (\(record.title))")
                } else {
                    style.records.append(record)
                    log.append("from \(style.name): style \(record.catalogueNumber) (\(record.title))")
                }
            case 64..<70:
                guard let record = live.randomElement(using: &random) else { continue }
                context.delete(record)
                log.append("delete \(record.catalogueNumber) (\(record.title))")
            case 70..<82:
                if random.chance(50), let bin = bins.randomElement(using: &random) {
                    log.append("read bin \(bin.label): \(numbers(bin.records))")
                } else if let style = styles.randomElement(using: &random) {
                    log.append("read style \(style.name): \(numbers(style.records))")
                }
            case 82..<97:
                do {
                    try context.save()
                } catch {
                    try fail("\(moment), the save threw \(error)")
                }
                log.append("save")
                try compareWithStore(moment)
            default:
                context.rollback()
                log.append("rollback")
                try compareWithStore(moment)
            }
        }
    }

    func testRecordsUpsertedAcrossBinsAndStylesShowWhatTheStoreHolds() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_UPSERT", seeds: [20_261_128, 7, 19], steps: 600) { try run(seed: $0, steps: $1) }
    }
}
