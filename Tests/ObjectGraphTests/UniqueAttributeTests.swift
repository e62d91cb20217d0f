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

final class UniqueAttributeTests: StoreTestCase {
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
