import Foundation
import ObjectGraph
import XCTest

/// A unique model that writes a join table (a to-many relationship without an inverse).
@Model final class Playlist {
    @Attribute(.unique) var name: String
    var songs: [Song] = []
    init(name: String) { self.name = name }
}

@Model final class Song {
    var title: String
    init(title: String) { self.title = title }
}

/// Two unique attributes: an insert may collide on either.
@Model final class Subscriber {
    @Attribute(.unique) var email: String
    @Attribute(.unique) var handle: String
    var name: String
    init(email: String, handle: String, name: String) {
        self.email = email
        self.handle = handle
        self.name = name
    }
}

final class UniqueAttributeTests: StoreTestCase {
    func testAnInsertThatCollidesOnAnyUniqueAttributeTakesOverThatRow() throws {
        let container = try makeContainer(Subscriber.self)
        do {
            let context = ModelContext(container)
            context.insert(Subscriber(email: "ada@example.com", handle: "ada", name: "Ada"))
            context.insert(Subscriber(email: "alan@example.com", handle: "alan", name: "Alan"))
            try context.save()
        }
        let context = ModelContext(container)
        // The same handle as Ada's, a new e-mail; then a new handle with Alan's e-mail; then a new account.
        let renamed = Subscriber(email: "countess@example.com", handle: "ada", name: "Countess")
        let moved = Subscriber(email: "alan@example.com", handle: "turing", name: "Turing")
        let new = Subscriber(email: "grace@example.com", handle: "grace", name: "Grace")
        for account in [renamed, moved, new] { context.insert(account) }
        try context.save()

        let rows = try rawRows("SELECT _pk, email, handle, name FROM Subscriber ORDER BY _pk")
        // The first two took over rows 1 and 2. Keys are never reused (AUTOINCREMENT), and an insert
        // that collided has drawn one, so the new row's key is past 3: a gap, as a deletion leaves.
        XCTAssertEqual(rows.map { $0["_pk"] as Int64 }.prefix(2), [1, 2])
        XCTAssertGreaterThanOrEqual(rows.last?["_pk"] as Int64? ?? 0, 3)
        XCTAssertEqual(rows.map { $0["email"] as String }, ["countess@example.com", "alan@example.com", "grace@example.com"])
        XCTAssertEqual(rows.map { $0["handle"] as String }, ["ada", "turing", "grace"])
        XCTAssertEqual(rows.map { $0["name"] as String }, ["Countess", "Turing", "Grace"])
        let saved = try ModelContext(container).fetch(FetchDescriptor<Subscriber>(sortBy: [SortDescriptor(\.handle)]))
        XCTAssertEqual(saved.map(\.persistentModelID), [renamed, new, moved].map(\.persistentModelID))
    }

    func testADuplicateReplacesTheSavedRowsToManyRelationship() throws {
        let container = try makeContainer(Playlist.self)
        do {
            let context = ModelContext(container)
            let mix = Playlist(name: "mix")
            mix.songs = [Song(title: "a"), Song(title: "b")]
            context.insert(mix)
            try context.save()
        }
        let context = ModelContext(container)
        let duplicate = Playlist(name: "mix")
        duplicate.songs = [Song(title: "c")]
        context.insert(duplicate)
        try context.save()

        let fresh = ModelContext(container)
        let saved = try fresh.fetch(FetchDescriptor<Playlist>())
        XCTAssertEqual(saved.count, 1)
        XCTAssertEqual(saved.first?.songs.map(\.title), ["c"], "the upsert's songs replace the saved ones")
    }

    func testTheStoreHasAUniqueIndex() throws {
        _ = try makeContainer(Label.self)
        let indexes = try rawRows("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Label'")
            .compactMap { $0["sql"] as String? }
        XCTAssertTrue(indexes.contains { $0.contains("UNIQUE") && $0.contains("\"name\"") }, "\(indexes)")
    }

    func testInsertingADuplicateOfASavedModelUpdatesIt() throws {
        let container = try makeContainer(Label.self)
        do {
            let context = ModelContext(container)
            context.insert(Label(name: "swift", uses: 1))
            try context.save()
        }
        let context = ModelContext(container)
        let duplicate = Label(name: "swift", uses: 5)
        context.insert(duplicate)
        try context.save()

        let rows = try rawRows("SELECT name, uses FROM Label")
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(rows.first?["uses"] as Int?, 5)
        XCTAssertFalse(duplicate.persistentModelID.isTemporary, "the inserted model now stands for the saved row")
        XCTAssertTrue(try context.fetch(FetchDescriptor<Label>()).first === duplicate)
    }

    func testADuplicateOfAModelRegisteredInTheContextUpdatesThatModel() throws {
        let context = ModelContext(try makeContainer(Label.self))
        let original = Label(name: "swift", uses: 1)
        context.insert(original)
        try context.save()

        context.insert(Label(name: "swift", uses: 9))
        try context.save()
        XCTAssertEqual(original.uses, 9)
        XCTAssertEqual(try context.fetch(FetchDescriptor<Label>()).count, 1)
        XCTAssertTrue(try context.fetch(FetchDescriptor<Label>()).first === original)
    }

    func testTwoPendingInsertsWithTheSameValueResolveInTheContext() throws {
        let context = ModelContext(try makeContainer(Label.self))
        let earlier = Label(name: "dup", uses: 1)
        let later = Label(name: "dup", uses: 2)
        context.insert(earlier)
        context.insert(later)
        try context.save()

        let rows = try rawRows("SELECT uses FROM Label")
        XCTAssertEqual(rows.map { $0["uses"] as Int }, [2], "the later insert's values win, in one row")
        XCTAssertEqual(earlier.uses, 2)
        XCTAssertEqual(later.persistentModelID, earlier.persistentModelID)
    }

    func testEveryPendingInsertOfOneValueShowsTheRowItBecame() throws {
        let context = ModelContext(try makeContainer(Label.self))
        let inserts = [1, 2, 3].map { Label(name: "dup", uses: $0) }
        for label in inserts { context.insert(label) }
        try context.save()

        XCTAssertEqual(try storedLabels(), ["dup=3"])
        XCTAssertEqual(inserts.map(\.uses), [3, 3, 3], "the middle insert as well as the first shows the last one's values")
        XCTAssertEqual(Set(inserts.map(\.persistentModelID)).count, 1)
    }

    func testAnInsertThatTookOverARegisteredModelsRowKeepsSavingItsEdits() throws {
        let context = ModelContext(try makeContainer(Label.self))
        let original = Label(name: "swift", uses: 1)
        context.insert(original)
        try context.save()
        let duplicate = Label(name: "swift", uses: 2)
        context.insert(duplicate)
        try context.save()

        // The usual upsert: insert, save, then go on editing the model just inserted.
        duplicate.uses = 7
        XCTAssertTrue(context.hasChanges)
        try context.save()
        XCTAssertEqual(try storedLabels(), ["swift=7"])
        XCTAssertEqual(original.uses, 7, "both models stand for the one row")
        original.uses = 8
        XCTAssertEqual(duplicate.uses, 8)

        context.delete(duplicate)
        try context.save()
        XCTAssertEqual(try storedLabels(), [])
        XCTAssertTrue(original.isDeleted)
    }

    func testAPendingInsertMergedIntoAnotherKeepsSavingItsEdits() throws {
        let (context, labels) = try savedLabels(named: ["dup", "dup"])
        let (earlier, later) = (labels[0], labels[1])

        later.uses = 9
        try context.save()
        XCTAssertEqual(try storedLabels(), ["dup=9"])
        XCTAssertEqual(earlier.uses, 9)
        XCTAssertTrue(later.modelContext === context)
    }

    func testInsertsMergedInASaveThatThrewFollowTheRowTheNextSaveGivesThem() throws {
        let context = ModelContext(try makeContainer(Label.self))
        let original = Label(name: "swift", uses: 1)
        let go = Label(name: "go")
        let zig = Label(name: "zig")
        for label in [original, go, zig] { context.insert(label) }
        try context.save()

        let earlier = Label(name: "swift", uses: 2)
        let later = Label(name: "swift", uses: 3)
        context.insert(earlier)
        context.insert(later)
        go.name = "zig"
        XCTAssertThrowsError(try context.save(), "go cannot take zig's name")
        go.name = "c"
        try context.save()

        // `later` met `earlier` in the first save; the second gave `earlier` the row `original` holds.
        XCTAssertEqual([original, earlier, later].map(\.uses), [3, 3, 3])
        later.uses = 9
        try context.save()
        XCTAssertEqual(try storedLabels(), ["c=0", "swift=9", "zig=0"])
        XCTAssertEqual([original, earlier].map(\.uses), [9, 9])
    }

    func testAModelMergedIntoAnotherOutlivesThatModelAndItsContext() throws {
        let container = try makeContainer(Playlist.self)
        var kept: Playlist?
        do {
            let context = ModelContext(container)
            context.insert(Playlist(name: "mix"))    // held by the context alone
            try context.save()
            let duplicate = Playlist(name: "mix")
            duplicate.songs = [Song(title: "a")]
            context.insert(duplicate)
            try context.save()
            kept = duplicate
        }
        // The context is gone, and with it the model the row was registered under; the one kept reads
        // and changes the row's values, relationships included, without a context.
        let playlist = try XCTUnwrap(kept)
        XCTAssertEqual(playlist.name, "mix")
        playlist.songs.append(Song(title: "b"))
        XCTAssertEqual(playlist.songs.map(\.title), ["a", "b"])
        let context = ModelContext(container)
        XCTAssertEqual(try context.fetch(FetchDescriptor<Playlist>()).first?.songs.map(\.title), ["a"])
    }

    func testChangingAUniqueValueToOneAnotherModelHoldsThrowsAndRollbackRecovers() throws {
        let context = ModelContext(try makeContainer(Label.self))
        let swift = Label(name: "swift")
        let rust = Label(name: "rust")
        context.insert(swift)
        context.insert(rust)
        try context.save()

        rust.name = "swift"
        XCTAssertThrowsError(try context.save()) { error in
            let error = error as? SwiftDataError
            XCTAssertEqual(error?.code, .uniqueConstraintViolation)
            XCTAssertEqual(error?.entityName, "Label")
            XCTAssertEqual(error?.propertyName, "name")
            XCTAssertTrue(error?.message.contains("Label.name") ?? false, error?.message ?? "")
        }
        XCTAssertTrue(context.hasChanges, "the failed change is still pending")
        context.rollback()
        XCTAssertEqual(rust.name, "rust")
        XCTAssertFalse(context.hasChanges)
        try context.save()

        rust.name = "go"
        try context.save()
        let names = try rawRows("SELECT name FROM Label ORDER BY name").map { $0["name"] as String }
        XCTAssertEqual(names, ["go", "swift"])
    }

    /// The labels' names, as the store holds them, by name.
    private func storedLabels() throws -> [String] {
        try rawRows("SELECT name, uses FROM Label ORDER BY name").map { "\($0["name"] as String)=\($0["uses"] as Int)" }
    }

    /// A context holding saved labels of these names, each used as often as its place in the list.
    private func savedLabels(named names: [String]) throws -> (ModelContext, [Label]) {
        let context = ModelContext(try makeContainer(Label.self))
        let labels = names.enumerated().map { Label(name: $0.element, uses: $0.offset) }
        for label in labels { context.insert(label) }
        try context.save()
        return (context, labels)
    }

    func testTwoModelsSwappingTheirUniqueValuesSave() throws {
        let container = try makeContainer(Label.self)
        let context = ModelContext(container)
        let first = Label(name: "swift", uses: 1)
        let second = Label(name: "rust", uses: 2)
        context.insert(first)
        context.insert(second)
        try context.save()

        first.name = "rust"
        second.name = "swift"
        try context.save()
        XCTAssertEqual(try storedLabels(), ["rust=1", "swift=2"])
        let fresh = try ModelContext(container).fetch(FetchDescriptor<Label>(sortBy: [SortDescriptor(\.name)]))
        XCTAssertEqual(fresh.map(\.persistentModelID), [first, second].map(\.persistentModelID))
    }

    func testAUniqueValuePassedAlongAChainSavesInTheOrderItWasEdited() throws {
        let (context, labels) = try savedLabels(named: ["a", "b", "c"])

        // Each takes the next one's name, the first edit first: "b" is still held when "a" takes it.
        labels[0].name = "b"
        labels[1].name = "c"
        labels[2].name = "d"
        try context.save()
        XCTAssertEqual(try storedLabels(), ["b=0", "c=1", "d=2"])
    }

    func testAValueThatStillCollidesAfterTheOthersMoveThrowsAndWritesNothing() throws {
        let (context, labels) = try savedLabels(named: ["a", "b", "c"])

        labels[0].name = "x"
        labels[1].name = "c"        // "c" keeps its name
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .uniqueConstraintViolation)
            XCTAssertEqual((error as? SwiftDataError)?.propertyName, "name")
        }
        XCTAssertEqual(try storedLabels(), ["a=0", "b=1", "c=2"], "no row keeps a placeholder or a half-made move")
        context.rollback()
        labels[1].name = "z"
        labels[2].name = "b"
        try context.save()
        XCTAssertEqual(try storedLabels(), ["a=0", "b=2", "z=1"])
    }

    /// Two pending inserts with one unique UUID are one model before the save (the later one's values),
    /// and a third with another UUID stays apart: the UUID is compared as it is, not encoded.
    func testPendingInsertsWithTheSameUniqueUUIDAreMerged() throws {
        let shared = UUID()
        let context = ModelContext(try makeContainer(Ticket.self))
        let first = Ticket(id: shared, subject: "first")
        let other = Ticket(id: UUID(), subject: "other")
        let second = Ticket(id: shared, subject: "second")
        [first, other, second].forEach(context.insert)
        try context.save()
        XCTAssertEqual(first.subject, "second", "the earlier insert took the later one's values")
        XCTAssertEqual(first.persistentModelID, second.persistentModelID)
        XCTAssertNotEqual(first.persistentModelID, other.persistentModelID)
        XCTAssertEqual(try rawRows("SELECT subject FROM Ticket ORDER BY subject").map { $0["subject"] as String }, ["other", "second"])
        // Merged before the save: two rows inserted. Had the two gone to the store apart, the second
        // would have met the first's row there and taken it over, an update.
        let changes = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).flatMap(\.changes)
        XCTAssertEqual(changes.map { change -> String in
            switch change {
            case .insert: "insert"
            case .update: "update"
            case .delete: "delete"
            }
        }, ["insert", "insert"])
    }

    func testAUniqueAttributeNamedIDUpserts() throws {
        let id = UUID()
        let context = ModelContext(try makeContainer(Ticket.self))
        context.insert(Ticket(id: id, subject: "first"))
        try context.save()
        context.insert(Ticket(id: id, subject: "second"))
        try context.save()
        XCTAssertEqual(try rawRows("SELECT subject FROM Ticket").map { $0["subject"] as String }, ["second"])
    }
}
