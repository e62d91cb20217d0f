import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

@Model
final class HistoryTrail {
    @Attribute(.unique, .preserveValueOnDeletion) var name: String
    @Attribute(.preserveValueOnDeletion) var region: String?
    var length: Double
    @Relationship(deleteRule: .cascade, inverse: \HistoryHike.trail) var hikes: [HistoryHike] = []

    init(name: String, region: String? = nil, length: Double) {
        self.name = name
        self.region = region
        self.length = length
    }
}

@Model
final class HistoryHike {
    var note: String
    var trail: HistoryTrail?
    var companions: [HistoryCompanion] = []

    init(note: String, trail: HistoryTrail? = nil) {
        self.note = note
        self.trail = trail
    }
}

@Model
final class HistoryCompanion {
    var name: String
    @Relationship(inverse: \HistoryHike.companions) var hikes: [HistoryHike] = []

    init(name: String) { self.name = name }
}

/// SwiftData's history (iOS 18): each save that writes is a transaction listing what it inserted,
/// updated and deleted, read back with `fetchHistory(_:)` after a token.
final class HistoryTests: StoreTestCase {
    private func container() throws -> ModelContainer {
        try makeContainer(HistoryTrail.self, HistoryHike.self, HistoryCompanion.self)
    }

    private func history(_ context: ModelContext, after token: DefaultHistoryToken? = nil) throws -> [DefaultHistoryTransaction] {
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
        if let token { descriptor.predicate = #Predicate { $0.token > token } }
        return try context.fetchHistory(descriptor)
    }

    /// Each change as text, `insert HistoryTrail p1`, `update HistoryTrail p1 [length]`, in order.
    private func describe(_ transaction: DefaultHistoryTransaction) -> [String] {
        transaction.changes.map { change in
            let id = change.changedPersistentIdentifier
            let model = "\(id.entityName) \(id.id)"
            switch change {
            case .insert: return "insert \(model)"
            case .update(let update as DefaultHistoryUpdate<HistoryTrail>):
                return "update \(model) \(update.updatedAttributes.map(Self.name))"
            case .update(let update as DefaultHistoryUpdate<HistoryHike>):
                return "update \(model) \(update.updatedAttributes.map(Self.name))"
            case .update(let update as DefaultHistoryUpdate<HistoryCompanion>):
                return "update \(model) \(update.updatedAttributes.map(Self.name))"
            case .update: return "update \(model) of an unexpected type"
            case .delete: return "delete \(model)"
            }
        }
    }

    private static func name(_ keyPath: AnyKeyPath) -> String {
        switch keyPath {
        case \HistoryTrail.name, \HistoryCompanion.name: "name"
        case \HistoryTrail.region: "region"
        case \HistoryTrail.length: "length"
        case \HistoryTrail.hikes, \HistoryCompanion.hikes: "hikes"
        case \HistoryHike.note: "note"
        case \HistoryHike.trail: "trail"
        case \HistoryHike.companions: "companions"
        default: "\(keyPath)"
        }
    }

    private func key(_ model: some PersistentModel) -> String { "\(model.persistentModelID.id)" }

    func testEachSaveIsATransactionOfItsInsertsUpdatesAndDeletes() throws {
        let context = ModelContext(try container())
        XCTAssertEqual(try history(context).count, 0, "a new store has no history")
        let ridge = HistoryTrail(name: "Ridge", region: "North", length: 12)
        let lake = HistoryTrail(name: "Lake", length: 4)
        context.insert(ridge)
        context.insert(lake)
        let hike = HistoryHike(note: "windy", trail: ridge)
        context.insert(hike)
        try context.save()

        var transactions = try history(context)
        XCTAssertEqual(transactions.count, 1)
        let first = try XCTUnwrap(transactions.first)
        XCTAssertEqual(Set(describe(first)), [
            "insert HistoryTrail \(key(ridge))", "insert HistoryTrail \(key(lake))", "insert HistoryHike \(key(hike))",
        ])
        XCTAssertTrue(first.changes.contains {
            if case .insert(let insert as DefaultHistoryInsert<HistoryHike>) = $0 {
                return insert.changedPersistentIdentifier == hike.persistentModelID
            }
            return false
        }, "an insert is typed by its model, as SwiftData's are matched in a switch")
        XCTAssertEqual(first.storeIdentifier, first.token.storeIdentifier)
        XCTAssertLessThan(abs(first.timestamp.timeIntervalSinceNow), 60)

        lake.length = 4.5
        try context.save()
        try context.save() // nothing to write: no transaction
        context.delete(ridge) // its hike goes with it (cascade)
        try context.save()

        transactions = try history(context, after: first.token)
        guard transactions.count == 2 else { return XCTFail("expected 2 transactions, got \(transactions.map(describe))") }
        XCTAssertEqual(describe(transactions[0]), ["update HistoryTrail \(key(lake)) [\"length\"]"])
        XCTAssertEqual(Set(describe(transactions[1])), ["delete HistoryTrail \(key(ridge))", "delete HistoryHike \(key(hike))"])
        XCTAssertLessThan(first.token, transactions[0].token)
        XCTAssertLessThan(transactions[0].token, transactions[1].token)

        // The deleted trail's preserved values stay in its tombstone; the hike preserves none.
        for change in transactions[1].changes {
            switch change {
            case .delete(let delete as DefaultHistoryDelete<HistoryTrail>):
                XCTAssertEqual(delete.tombstone[\HistoryTrail.name] as? String, "Ridge")
                XCTAssertEqual(delete.tombstone[\HistoryTrail.region] as? String, "North")
                XCTAssertNil(delete.tombstone[\HistoryTrail.length], "not marked .preserveValueOnDeletion")
                XCTAssertEqual(Array(delete.tombstone).count, 2)
            case .delete(let delete as DefaultHistoryDelete<HistoryHike>):
                XCTAssertEqual(Array(delete.tombstone).count, 0)
            default:
                XCTFail("unexpected change \(change)")
            }
        }
    }

    /// A context's editing state carries its author both ways, and is the context's own.
    func testTheEditingStateIsTheContextsAuthorAndIdentity() throws {
        let container = try container()
        let importer = ModelContext(container), other = ModelContext(container)
        XCTAssertNil(importer.editingState.author)
        XCTAssertNotEqual(importer.editingState.id, other.editingState.id)
        let identity = importer.editingState.id
        importer.editingState.author = "importer"
        XCTAssertEqual(importer.author, "importer")
        XCTAssertEqual(importer.editingState.id, identity, "setting the author keeps the context's identity")
        other.author = "other"
        XCTAssertEqual(other.editingState.author, "other")
        importer.insert(HistoryTrail(name: "A", length: 1))
        try importer.save()
        XCTAssertEqual(try history(other).map(\.author), ["importer"])
    }

    func testAuthorsTokensOrderAndLimit() throws {
        let container = try container()
        let importer = ModelContext(container), server = ModelContext(container)
        importer.author = "importer"
        server.author = "server"
        importer.insert(HistoryTrail(name: "A", length: 1))
        try importer.save()
        server.insert(HistoryTrail(name: "B", length: 2))
        try server.save()
        importer.insert(HistoryTrail(name: "C", length: 3))
        try importer.save()
        let unnamed = ModelContext(container)
        unnamed.insert(HistoryTrail(name: "D", length: 4))
        try unnamed.save()

        let all = try history(server)
        guard all.count == 4 else { return XCTFail("expected 4 transactions, got \(all.count)") }
        XCTAssertEqual(all.map(\.author), ["importer", "server", "importer", nil])
        XCTAssertEqual(all.map(\.token), all.map(\.token).sorted(), "oldest first")
        let first = all[0].token

        // What a reader that kept the first token and skips its own saves asks for.
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>()
        descriptor.predicate = #Predicate { $0.token > first && $0.author != "server" }
        XCTAssertEqual(try server.fetchHistory(descriptor).map(\.transactionIdentifier),
                       [all[2].transactionIdentifier, all[3].transactionIdentifier])

        descriptor = HistoryDescriptor(sortBy: [SortDescriptor(\.transactionIdentifier, order: .reverse)])
        descriptor.fetchLimit = 2
        XCTAssertEqual(try server.fetchHistory(descriptor).map(\.transactionIdentifier),
                       [all[3].transactionIdentifier, all[2].transactionIdentifier], "newest two")

        // A token kept as JSON (in user defaults, say) compares as before.
        let kept = try JSONDecoder().decode(DefaultHistoryToken.self, from: JSONEncoder().encode(all[1].token))
        XCTAssertEqual(kept, all[1].token)
        XCTAssertEqual(try history(server, after: kept).count, 2)
    }

    func testDeletedHistoryIsGoneAndLaterTokensStillGrow() throws {
        let container = try container()
        let context = ModelContext(container)
        for name in ["A", "B", "C"] {
            context.insert(HistoryTrail(name: name, length: 1))
            try context.save()
        }
        let before = try history(context)
        guard before.count == 3 else { return XCTFail("expected 3 transactions, got \(before.count)") }
        let second = before[1].token
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token <= second }))
        XCTAssertEqual(try history(context).map(\.token), [before[2].token])
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<HistoryTrail>()), 3, "the models stay")

        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        XCTAssertEqual(try history(context).count, 0)
        context.insert(HistoryTrail(name: "D", length: 1))
        try context.save()
        let after = try history(context)
        guard after.count == 1 else { return XCTFail("expected 1 transaction, got \(after.count)") }
        XCTAssertGreaterThan(after[0].token, before[2].token, "a deleted transaction's number is never given again")

        container.deleteAllData()
        XCTAssertEqual(try history(context).count, 0, "deleteAllData takes the history too")
    }

    func testASaveThatFailsRecordsNothing() throws {
        let context = ModelContext(try container())
        let ridge = HistoryTrail(name: "Ridge", length: 1), lake = HistoryTrail(name: "Lake", length: 1)
        context.insert(ridge)
        context.insert(lake)
        try context.save()
        lake.name = "Ridge"
        XCTAssertThrowsError(try context.save())
        XCTAssertEqual(try history(context).count, 1, "the failed save's transaction rolled back with it")
    }

    func testBatchDeletesAndUpsertsAreRecordedAsWhatTheyDid() throws {
        let container = try container()
        let context = ModelContext(container)
        context.insert(HistoryTrail(name: "Ridge", region: "North", length: 12))
        context.insert(HistoryTrail(name: "Lake", length: 4))
        try context.save()
        let ridgeID = try XCTUnwrap(try context.fetch(FetchDescriptor<HistoryTrail>(predicate: #Predicate { $0.name == "Ridge" })).first)
            .persistentModelID
        let token = try XCTUnwrap(try history(context).last).token

        // An insert of a name already saved takes that row over: an update, not an insert.
        let other = ModelContext(container)
        other.insert(HistoryTrail(name: "Ridge", region: "South", length: 13))
        try other.save()
        // A batch delete removes rows the context never loaded; their tombstones are read from the store.
        try other.delete(model: HistoryTrail.self, where: #Predicate { $0.length > 10 })
        try other.save()

        let transactions = try history(context, after: token)
        guard transactions.count == 2 else { return XCTFail("expected 2 transactions, got \(transactions.map(describe))") }
        XCTAssertEqual(describe(transactions[0]),
                       ["update HistoryTrail \(ridgeID.id) [\"name\", \"region\", \"length\", \"hikes\"]"])
        XCTAssertEqual(describe(transactions[1]), ["delete HistoryTrail \(ridgeID.id)"])
        guard case .delete(let delete as DefaultHistoryDelete<HistoryTrail>) = transactions[1].changes.first else {
            return XCTFail("expected the trail's delete")
        }
        XCTAssertEqual(delete.tombstone[\HistoryTrail.region] as? String, "South", "the values the row had when deleted")
    }

    func testRelationshipChangesAreUpdatesOfBothSides() throws {
        let context = ModelContext(try container())
        let ridge = HistoryTrail(name: "Ridge", length: 12), lake = HistoryTrail(name: "Lake", length: 4)
        let hike = HistoryHike(note: "windy", trail: ridge)
        let ana = HistoryCompanion(name: "Ana")
        context.insert(hike)
        context.insert(lake)
        context.insert(ana)
        try context.save()
        let token = try XCTUnwrap(try history(context).last).token

        hike.trail = lake
        try context.save()
        ana.hikes.append(hike)
        try context.save()

        let transactions = try history(context, after: token)
        guard transactions.count == 2 else { return XCTFail("expected 2 transactions, got \(transactions.map(describe))") }
        XCTAssertEqual(Set(describe(transactions[0])), [
            "update HistoryHike \(key(hike)) [\"trail\"]",
            "update HistoryTrail \(key(ridge)) [\"hikes\"]",
            "update HistoryTrail \(key(lake)) [\"hikes\"]",
        ])
        XCTAssertEqual(Set(describe(transactions[1])), [
            "update HistoryHike \(key(hike)) [\"companions\"]",
            "update HistoryCompanion \(key(ana)) [\"hikes\"]",
        ])
    }

    func testADeleteOfARowAlreadyGoneIsNotRecordedAgain() throws {
        let container = try container()
        let first = ModelContext(container), second = ModelContext(container)
        first.insert(HistoryTrail(name: "Ridge", length: 12))
        try first.save()
        let trail = try XCTUnwrap(try second.fetch(FetchDescriptor<HistoryTrail>()).first)
        let mine = try XCTUnwrap(try first.fetch(FetchDescriptor<HistoryTrail>()).first)
        second.delete(trail)
        try second.save()
        first.delete(mine)
        try first.save()
        XCTAssertEqual(try history(first).map { describe($0).count }, [1, 1], "one insert, then one delete, not two")
    }

    func testRunsReadBackAsTheyWereWritten() throws {
        let runs = [
            HistoryLog.Run(entity: "Trail", kind: .insert, keys: [1, 0, 42, Int64.max, -7]),
            HistoryLog.Run(entity: "Trail", kind: .update, properties: ["name", "length"], keys: [9]),
            HistoryLog.Run(entity: "Trail", kind: .update, properties: [], keys: [10]),
            HistoryLog.Run(entity: "Hike", kind: .delete, keys: [3, 4], preserved: ["note"],
                           tombstones: [[.text("a\tb\nc")], [.null]]),
            HistoryLog.Run(entity: "Photo", kind: .delete, keys: [5], preserved: ["data", "size", "ratio"],
                           tombstones: [[.blob(Data([0, 255])), .integer(-3), .real(0.5)]]),
        ]
        XCTAssertEqual(try HistoryLog.decode(try HistoryLog.encode(runs), transaction: 1), runs)
    }

    func testTombstoneValuesKeepTabsNewlinesAndQuotes() throws {
        let context = ModelContext(try container())
        let odd = "North\tEast\n\"side\", 北"
        let trail = HistoryTrail(name: "a,b\tc", region: odd, length: 1)
        context.insert(trail)
        try context.save()
        context.delete(trail)
        try context.save()
        guard case .delete(let delete as DefaultHistoryDelete<HistoryTrail>) = try history(context).last?.changes.first else {
            return XCTFail("expected the trail's delete")
        }
        XCTAssertEqual(delete.tombstone[\HistoryTrail.region] as? String, odd)
        XCTAssertEqual(delete.tombstone[\HistoryTrail.name] as? String, "a,b\tc")
    }

    func testAnUnreadableHistoryIsAClearErrorAndLosesNothing() throws {
        let container = try container()
        let context = ModelContext(container)
        context.insert(HistoryTrail(name: "Ridge", length: 12))
        try context.save()
        XCTAssertEqual(try context.counts(of: \HistoryTrail.length), [12: 1])
        try DatabaseQueue(path: storeURL.path).write { db in
            try db.execute(sql: "UPDATE _objectgraph_history SET changes = 'insert\tHistoryTrail\t\tnot-a-key\n'")
        }
        XCTAssertThrowsError(try history(context)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .storeFailure)
            XCTAssertTrue("\(error)".contains("cannot be read"), "\(error)")
        }
        // The write that broke it is a stranger's: what was kept is dropped, and read again right.
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<HistoryTrail>()), 1)
        XCTAssertEqual(try context.counts(of: \HistoryTrail.length), [12: 1])
        context.insert(HistoryTrail(name: "Lake", length: 4))
        try context.save()
        XCTAssertEqual(try context.counts(of: \HistoryTrail.length), [12: 1, 4: 1])

        // Changes that are not even text: the same, where they are read and for what was kept.
        try DatabaseQueue(path: storeURL.path).write { db in
            try db.execute(sql: "UPDATE \"HistoryTrail\" SET \"length\" = 5")
            try db.execute(sql: "UPDATE _objectgraph_history SET changes = x'ff00fe'")
        }
        XCTAssertThrowsError(try history(context)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .storeFailure, "\(error)")
        }
        XCTAssertEqual(try context.counts(of: \HistoryTrail.length), [5: 2], "the outside write is seen")
    }

    /// A predicate on the token, the time or the author reads no transaction's changes: old history
    /// is deleted without decoding it (even a record that cannot be read), while a predicate that
    /// reads the changes of such a record is its error, as the fetch of it is.
    func testAPredicateOnTheTokenOrTimeReadsNoChanges() throws {
        let context = ModelContext(try container())
        for name in ["Ridge", "Lake", "Pass"] {
            context.insert(HistoryTrail(name: name, length: 1))
            try context.save()
            // Apart in time, so that the cutoff below falls between two of them.
            Thread.sleep(forTimeInterval: 0.002)
        }
        let all = try history(context)
        guard all.count == 3 else { return XCTFail("expected 3 transactions, got \(all.count)") }
        let first = all[0].transactionIdentifier
        try DatabaseQueue(path: storeURL.path).write { db in
            try db.execute(sql: "UPDATE _objectgraph_history SET changes = 'insert\tHistoryTrail\t\tnot-a-key\n' WHERE \"transaction\" = ?",
                           arguments: [first])
        }
        XCTAssertThrowsError(try history(context), "the fetch returns the unreadable record")

        let readsChanges = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.changes.count == 0 })
        XCTAssertThrowsError(try context.fetchHistory(readsChanges)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .storeFailure, "\(error)")
        }
        XCTAssertThrowsError(try context.deleteHistory(readsChanges), "it would delete by changes it could not read")
        XCTAssertEqual(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>(
            predicate: #Predicate { $0.transactionIdentifier > first })).count, 2, "the others are read")

        // Old history goes by its time, as an app prunes it, without reading what it changed.
        let cutoff = all[1].timestamp
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.timestamp < cutoff }))
        let left = try history(context)
        XCTAssertEqual(left.map(\.transactionIdentifier), all[1...].map(\.transactionIdentifier))
        XCTAssertEqual(left.map { describe($0) }, [["insert HistoryTrail \(all[1].changes[0].changedPersistentIdentifier.id)"],
                                                  ["insert HistoryTrail \(all[2].changes[0].changedPersistentIdentifier.id)"]])
    }

    /// A reader asks for the transactions after the token it kept: the store reads only those (a
    /// transaction before it that cannot be read is not reached), and every form of the predicate
    /// selects what testing it on every transaction selects.
    func testAPredicateOnTheTokenReadsOnlyTheTransactionsItCanSelect() throws {
        let context = ModelContext(try container())
        for name in ["A", "B", "C", "D", "E"] {
            context.insert(HistoryTrail(name: name, length: 1))
            try context.save()
        }
        let all = try history(context)
        guard all.count == 5 else { return XCTFail("expected 5 transactions, got \(all.count)") }
        let token = all[1].token, number = all[2].transactionIdentifier, first = all[0].transactionIdentifier
        let otherStore = DefaultHistoryToken(storeIdentifier: "another store", transaction: number)
        let predicates: [(String, Predicate<DefaultHistoryTransaction>)] = [
            ("after", #Predicate { $0.token > token }),
            ("from", #Predicate { $0.token >= token }),
            ("after, written the other way", #Predicate { token < $0.token }),
            ("from, written the other way", #Predicate { token <= $0.token }),
            ("after a number", #Predicate { $0.transactionIdentifier > number }),
            ("after, and an author", #Predicate { $0.token > token && $0.author == nil }),
            ("the later of two starts", #Predicate { $0.author == nil && $0.transactionIdentifier >= number && $0.token > token }),
            ("either", #Predicate { $0.token > token || $0.transactionIdentifier == first }),
            ("before", #Predicate { $0.token < token }),
            ("not up to", #Predicate { !($0.token <= token) }),
            ("another store's token", #Predicate { $0.token > otherStore }),
        ]
        for (name, predicate) in predicates {
            let expected = try all.filter { try predicate.evaluate($0) }.map(\.transactionIdentifier)
            let fetched = try context.fetchHistory(HistoryDescriptor(predicate: predicate)).map(\.transactionIdentifier)
            XCTAssertEqual(fetched, expected, name)
        }

        // The first transaction's row spoilt from outside: reading it is an error that names it.
        try DatabaseQueue(path: storeURL.path).write { db in
            try db.execute(sql: "UPDATE _objectgraph_history SET \"timestamp\" = 'noon' WHERE \"transaction\" = ?", arguments: [first])
        }
        XCTAssertThrowsError(try history(context)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .storeFailure, "\(error)")
            XCTAssertTrue("\(error)".contains("transaction \(first)"), "\(error)")
        }
        XCTAssertEqual(try history(context, after: token).map(\.transactionIdentifier), all[2...].map(\.transactionIdentifier),
                       "the transactions after the token are read without the first")
        let noStart = #Predicate<DefaultHistoryTransaction> { $0.token > token || $0.author != nil }
        XCTAssertThrowsError(try context.fetchHistory(HistoryDescriptor(predicate: noStart)), "a predicate that says no start reads them all")
    }

    /// SwiftData: fetching deleted history throws `historyTokenExpired`. A reader whose token is
    /// older than what was deleted learns that it missed changes, instead of reading on as if it had not.
    func testTransactionsAfterATokenThatWereDeletedAreAnExpiredToken() throws {
        let context = ModelContext(try container())
        for name in ["A", "B", "C", "D"] {
            context.insert(HistoryTrail(name: name, length: 1))
            try context.save()
        }
        let all = try history(context)
        guard all.count == 4 else { return XCTFail("expected 4 transactions, got \(all.count)") }
        let (first, second, last) = (all[0].token, all[1].token, all[3].token)
        let secondNumber = all[1].transactionIdentifier
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token <= second }))

        func assertExpired(_ predicate: Predicate<DefaultHistoryTransaction>, _ message: String, line: UInt = #line) {
            XCTAssertThrowsError(try context.fetchHistory(HistoryDescriptor(predicate: predicate)), message, line: line) { error in
                XCTAssertEqual((error as? SwiftDataError)?.code, .historyTokenExpired, "\(error)", line: line)
            }
        }
        assertExpired(#Predicate { $0.token > first }, "the second transaction, after the token, is gone")
        assertExpired(#Predicate { $0.token > first && $0.author == nil }, "whatever else the predicate asks")
        assertExpired(#Predicate { $0.token >= second }, "from a deleted transaction on")
        XCTAssertEqual(try history(context, after: second).map(\.token), [all[2].token, last], "the reader had seen the second")
        XCTAssertEqual(try history(context, after: last).count, 0, "nothing new")
        typealias Transactions = HistoryDescriptor<DefaultHistoryTransaction>
        XCTAssertEqual(try context.fetchHistory(Transactions(predicate: #Predicate { $0.transactionIdentifier >= secondNumber })).count,
                       2, "a number is not a reader's token")
        let otherStore = DefaultHistoryToken(storeIdentifier: "another store", transaction: 1)
        XCTAssertEqual(try context.fetchHistory(Transactions(predicate: #Predicate { $0.token > otherStore })).count,
                       try context.fetchHistory(Transactions(predicate: #Predicate { $0.token > otherStore && $0.author == nil })).count,
                       "another store's token says nothing of this one's numbers")
        XCTAssertNoThrow(try context.deleteHistory(Transactions(predicate: #Predicate { $0.token > first })), "deleting is not reading")

        // All deleted: a token with nothing given after it still reads nothing new; one more save, deleted, expires it.
        XCTAssertEqual(try history(context, after: last).count, 0)
        context.insert(HistoryTrail(name: "E", length: 1))
        try context.save()
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        assertExpired(#Predicate { $0.token > last }, "the fifth transaction was given and deleted")
    }

    /// Another process's saves are what history is for: a second container on the same file
    /// stands in for it.
    func testAnotherContainerReadsTheHistoryOfTheStore() throws {
        let writer = ModelContext(try container())
        writer.author = "widget"
        writer.insert(HistoryTrail(name: "Ridge", length: 12))
        try writer.save()
        let reader = ModelContext(try container())
        let transactions = try history(reader)
        XCTAssertEqual(transactions.map(\.author), ["widget"])
        XCTAssertEqual(transactions.first?.processIdentifier, String(ProcessInfo.processInfo.processIdentifier))
        let id = try XCTUnwrap(transactions.first?.changes.first?.changedPersistentIdentifier)
        XCTAssertEqual((reader.model(for: id) as? HistoryTrail)?.name, "Ridge", "its identifiers find the models")
    }
}
