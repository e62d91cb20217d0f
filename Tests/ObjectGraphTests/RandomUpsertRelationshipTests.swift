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

    /// `refetching`: after each comparison the test lists the records again through the context,
    /// which reads each row's version afresh; without it the test goes on with the instances it
    /// made, so a version or a value the context left stale shows up at the next save.
    private func run(seed: UInt64, steps: Int, refetching: Bool) throws {
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
            throw RandomRunDiverged.reported(message, seed: seed, log: log)
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
            if refetching { held = try context.fetch(FetchDescriptor<Vinyl>()) }
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
            case let drawn:
                log.append(try saveOrRollBack(context, saving: drawn < 97, moment: moment, fail: fail))
                try compareWithStore(moment)
            }
        }
    }

    /// Stations of a few call signs (unique), upserted with new broadcasts, which live in their own
    /// rows: an upsert keeps a station's broadcasts and adds its own. Broadcasts move between
    /// stations from either side and are deleted; deleting a station deletes its broadcasts.
    private func runStations(seed: UInt64, steps: Int, refetching: Bool) throws {
        var random = SeededGenerator(seed: seed)
        let url = folder.appendingPathComponent("stations-\(seed).store")
        let types: [any PersistentModel.Type] = [Station.self, Broadcast.self]
        let container = try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: url))
        let otherProcess = try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        var stations: [Station] = []
        var broadcasts: [Broadcast] = []
        var log: [String] = []

        func fail(_ message: String) throws -> Never {
            throw RandomRunDiverged.reported(message, seed: seed, log: log)
        }
        func titles(_ list: [Broadcast]) -> [String] { list.map(\.title).sorted() }

        func compareWithStore(_ moment: String) throws {
            let reader = ModelContext(otherProcess)
            let stored = try reader.fetch(FetchDescriptor<Station>())
            let storedByCallSign = Dictionary(stored.map { ($0.callSign, $0) }, uniquingKeysWith: { first, _ in first })
            if storedByCallSign.count != stored.count { try fail("\(moment), the store holds a call sign twice") }
            for station in stations where station.modelContext != nil {
                guard let inStore = storedByCallSign[station.callSign] else {
                    try fail("\(moment), station \(station.callSign) is not in the store")
                }
                if station.frequency != inStore.frequency { try fail("\(moment), \(station.callSign) shows \(station.frequency), the store \(inStore.frequency)") }
                if titles(station.broadcasts) != titles(inStore.broadcasts) {
                    try fail("\(moment), \(station.callSign) lists \(titles(station.broadcasts)), the store \(titles(inStore.broadcasts))")
                }
            }
            let storedBroadcasts = Dictionary(try reader.fetch(FetchDescriptor<Broadcast>()).map { ($0.title, $0.station?.callSign) },
                                              uniquingKeysWith: { first, _ in first })
            for broadcast in broadcasts where broadcast.modelContext != nil {
                guard let inStore = storedBroadcasts[broadcast.title] else { try fail("\(moment), broadcast \(broadcast.title) is not in the store") }
                if broadcast.station?.callSign != inStore {
                    try fail("\(moment), \(broadcast.title) is on \(broadcast.station?.callSign ?? "-"), the store \(inStore ?? "-")")
                }
            }
            if refetching {
                stations = try context.fetch(FetchDescriptor<Station>())
                broadcasts = try context.fetch(FetchDescriptor<Broadcast>())
            }
        }

        for step in 0..<steps {
            let moment = "step \(step)"
            let liveStations = stations.filter { $0.modelContext != nil && !$0.isDeleted }
            let liveBroadcasts = broadcasts.filter { $0.modelContext != nil && !$0.isDeleted }
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<25:
                let callSign = random.pick(["KAAA", "KBBB", "KCCC"])!
                let station = Station(callSign: callSign, frequency: Double(step))
                let fresh = (0..<Int.random(in: 0...2, using: &random)).map { Broadcast(title: "b\(step)-\($0)") }
                let before = random.chance(50)
                if before { station.broadcasts = fresh }
                context.insert(station)
                if !before { station.broadcasts = fresh }
                stations.append(station)
                broadcasts += fresh
                log.append("insert \(callSign) at \(step) with \(titles(fresh)), set \(before ? "before" : "after")")
            case 25..<40:
                guard let broadcast = liveBroadcasts.randomElement(using: &random) else { continue }
                let station = random.chance(85) ? liveStations.randomElement(using: &random) : nil
                if random.chance(50) || station == nil {
                    broadcast.station = station
                    log.append("\(broadcast.title).station = \(station?.callSign ?? "-")")
                } else {
                    station?.broadcasts.append(broadcast)
                    log.append("\(station?.callSign ?? "-").broadcasts.append(\(broadcast.title))")
                }
            case 40..<50:
                guard let station = liveStations.randomElement(using: &random) else { continue }
                let broadcast = Broadcast(title: "b\(step)-new")
                station.broadcasts.append(broadcast)
                broadcasts.append(broadcast)
                log.append("\(station.callSign).broadcasts.append(new \(broadcast.title))")
            case 50..<56:
                guard let broadcast = liveBroadcasts.randomElement(using: &random) else { continue }
                context.delete(broadcast)
                log.append("delete \(broadcast.title)")
            case 56..<60:
                guard let station = liveStations.randomElement(using: &random) else { continue }
                context.delete(station)
                log.append("delete \(station.callSign) (\(station.frequency))")
            case 60..<62:
                guard let station = liveStations.randomElement(using: &random) else { continue }
                station.frequency += 0.5
                log.append("retune \(station.callSign) to \(station.frequency)")
            case 62..<80:
                guard let station = liveStations.randomElement(using: &random) else { continue }
                log.append("read \(station.callSign): \(titles(station.broadcasts))")
            case let drawn:
                log.append(try saveOrRollBack(context, saving: drawn < 97, moment: moment, fail: fail))
                try compareWithStore(moment)
            }
        }
    }

    /// Profiles of a few accounts, one per account (`@Relationship(.unique)` to-one): a profile
    /// inserted for an account that has one upserts it, from either side and whether the account is
    /// saved or new. Profiles move only to accounts without one, so no save has reason to throw;
    /// they are deleted, and deleting an account deletes its profile.
    private func runProfiles(seed: UInt64, steps: Int, refetching: Bool) throws {
        var random = SeededGenerator(seed: seed)
        let url = folder.appendingPathComponent("profiles-\(seed).store")
        let types: [any PersistentModel.Type] = [ForumAccount.self, ForumProfile.self]
        let container = try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: url))
        let otherProcess = try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        var accounts: [ForumAccount] = []
        var profiles: [ForumProfile] = []
        var log: [String] = []
        for handle in ["ada", "alan", "grace"] {
            let account = ForumAccount(handle: handle)
            context.insert(account)
            accounts.append(account)
        }
        try context.save()

        func fail(_ message: String) throws -> Never {
            throw RandomRunDiverged.reported(message, seed: seed, log: log)
        }
        func bios(_ list: [ForumProfile]) -> [String] { list.map(\.bio).sorted() }

        func compareWithStore(_ moment: String) throws {
            let reader = ModelContext(otherProcess)
            let storedAccounts = try reader.fetch(FetchDescriptor<ForumAccount>())
            let storedByHandle = Dictionary(storedAccounts.map { ($0.handle, bios($0.profiles)) }, uniquingKeysWith: { first, _ in first })
            if storedByHandle.count != storedAccounts.count { try fail("\(moment), the store holds a handle twice") }
            for account in accounts where account.modelContext != nil {
                guard let inStore = storedByHandle[account.handle] else { try fail("\(moment), account \(account.handle) is not in the store") }
                if bios(account.profiles) != inStore { try fail("\(moment), \(account.handle) lists \(bios(account.profiles)), the store \(inStore)") }
            }
            let storedProfiles = try reader.fetch(FetchDescriptor<ForumProfile>())
            let accountOfBio = Dictionary(storedProfiles.map { ($0.bio, $0.account?.handle) }, uniquingKeysWith: { first, _ in first })
            if accountOfBio.count != storedProfiles.count { try fail("\(moment), the store holds a bio twice") }
            for profile in profiles where profile.modelContext != nil {
                guard let inStore = accountOfBio[profile.bio] else { try fail("\(moment), profile \(profile.bio) is not in the store") }
                if profile.account?.handle != inStore {
                    try fail("\(moment), \(profile.bio) is \(profile.account?.handle ?? "-")'s, the store says \(inStore ?? "-")'s")
                }
            }
            if try context.fetchCount(FetchDescriptor<ForumProfile>()) != storedProfiles.count {
                try fail("\(moment), the context counts another number of profiles")
            }
            if refetching {
                accounts = try context.fetch(FetchDescriptor<ForumAccount>())
                profiles = try context.fetch(FetchDescriptor<ForumProfile>())
            }
        }

        for step in 0..<steps {
            let moment = "step \(step)"
            let liveAccounts = accounts.filter { $0.modelContext != nil && !$0.isDeleted }
            let liveProfiles = profiles.filter { $0.modelContext != nil && !$0.isDeleted }
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<30:
                let profile = ForumProfile(bio: "p\(step)")
                let account: ForumAccount
                if random.chance(15) || liveAccounts.isEmpty {
                    account = ForumAccount(handle: "h\(step)")
                    accounts.append(account)
                } else {
                    account = random.pick(liveAccounts.map(\.handle)).flatMap { handle in liveAccounts.first { $0.handle == handle } }!
                }
                let before = random.chance(50)
                let fromAccount = random.chance(40)
                if before { fromAccount ? account.profiles.append(profile) : (profile.account = account) }
                context.insert(profile)
                if !before { fromAccount ? account.profiles.append(profile) : (profile.account = account) }
                profiles.append(profile)
                log.append("insert \(profile.bio) for \(account.handle) \(fromAccount ? "from the account" : "from the profile"), \(before ? "before" : "after")")
            case 30..<42:
                guard let profile = liveProfiles.randomElement(using: &random) else { continue }
                let free = liveAccounts.filter { $0.profiles.isEmpty }
                let account = random.chance(80) ? free.randomElement(using: &random) : nil
                if random.chance(50) || account == nil {
                    profile.account = account
                    log.append("\(profile.bio).account = \(account?.handle ?? "-")")
                } else {
                    account?.profiles.append(profile)
                    log.append("\(account?.handle ?? "-").profiles.append(\(profile.bio))")
                }
            case 42..<50:
                guard let profile = liveProfiles.randomElement(using: &random) else { continue }
                context.delete(profile)
                log.append("delete \(profile.bio)")
            case 50..<54:
                guard let account = liveAccounts.randomElement(using: &random) else { continue }
                context.delete(account)
                log.append("delete \(account.handle)")
            case 54..<60:
                guard let profile = liveProfiles.randomElement(using: &random) else { continue }
                profile.bio += "+"
                log.append("edit \(profile.bio)")
            case 60..<78:
                guard let account = liveAccounts.randomElement(using: &random) else { continue }
                log.append("read \(account.handle): \(bios(account.profiles))")
            case let drawn:
                log.append(try saveOrRollBack(context, saving: drawn < 96, moment: moment, fail: fail))
                try compareWithStore(moment)
            }
        }
    }

    func testProfilesUpsertedByAccountShowWhatTheStoreHolds() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_UPSERT", seeds: [20_261_128, 7, 19], steps: 600) {
            try runProfiles(seed: $0, steps: $1, refetching: true)
        }
    }

    func testProfilesUpsertedByAccountShowWhatTheStoreHoldsWithoutBeingFetchedAgain() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_UPSERT", seeds: [20_261_128, 7, 19], steps: 600) {
            try runProfiles(seed: $0, steps: $1, refetching: false)
        }
    }

    /// Saves or rolls back, and says which for the log. Nothing in these runs has reason to make a
    /// save throw: one that does ends the run.
    private func saveOrRollBack(_ context: ModelContext, saving: Bool, moment: String, fail: (String) throws -> Never) throws -> String {
        guard saving else {
            context.rollback()
            return "rollback"
        }
        do {
            try context.save()
        } catch {
            try fail("\(moment), the save threw \(error)")
        }
        return "save"
    }

    func testStationsUpsertedWithTheirBroadcastsShowWhatTheStoreHolds() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_UPSERT", seeds: [20_261_128, 7, 19], steps: 600) {
            try runStations(seed: $0, steps: $1, refetching: true)
        }
    }

    func testStationsUpsertedWithTheirBroadcastsShowWhatTheStoreHoldsWithoutBeingFetchedAgain() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_UPSERT", seeds: [20_261_128, 7, 19], steps: 600) {
            try runStations(seed: $0, steps: $1, refetching: false)
        }
    }

    func testRecordsUpsertedAcrossBinsAndStylesShowWhatTheStoreHolds() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_UPSERT", seeds: [20_261_128, 7, 19], steps: 600) {
            try run(seed: $0, steps: $1, refetching: true)
        }
    }

    func testRecordsUpsertedAcrossBinsAndStylesShowWhatTheStoreHoldsWithoutBeingFetchedAgain() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_UPSERT", seeds: [20_261_128, 7, 19], steps: 600) {
            try run(seed: $0, steps: $1, refetching: false)
        }
    }
}
