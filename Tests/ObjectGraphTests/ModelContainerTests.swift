import Foundation
import GRDB
import ObjectGraph
import XCTest

final class ModelContainerTests: StoreTestCase {
    func testTheSchemaIncludesModelsReachableThroughRelationships() throws {
        let schema = Schema(Budget.self)
        XCTAssertEqual(schema.entities.map(\.name), ["Budget", "Transaction"])
        let budget = try XCTUnwrap(schema.entity(for: Budget.self))
        let transactions = try XCTUnwrap(budget.relationshipsByName["transactions"])
        XCTAssertEqual(transactions.destination, "Transaction")
        XCTAssertFalse(transactions.isToOneRelationship)
        XCTAssertEqual(transactions.deleteRule, .cascade)
        let back = try XCTUnwrap(schema.entitiesByName["Transaction"]?.relationshipsByName["budget"])
        XCTAssertTrue(back.isToOneRelationship)
        XCTAssertTrue(back.isOptional)
    }

    func testAttributesDescribeTheirOptions() throws {
        let label = try XCTUnwrap(Schema(Label.self).entity(for: Label.self))
        XCTAssertEqual(label.uniquenessConstraints, [["name"]])
        XCTAssertTrue(label.attributesByName["name"]?.isUnique ?? false)
        XCTAssertEqual(label.attributesByName["uses"]?.defaultValue as? Int, 0)
        let thing = try XCTUnwrap(Schema(PublicThing.self).entity(for: PublicThing.self))
        XCTAssertEqual(thing.attributesByName["weight"]?.originalName, "size")
        XCTAssertEqual(Schema.entityName(for: LibrarySchemaV1.Book.self), "Book")
    }

    func testTheStoreRecordsItsSchemaAndVersion() throws {
        _ = try ModelContainer(
            for: Schema([PublicThing.self, Label.self], version: Schema.Version(2, 1, 0)),
            configurations: ModelConfiguration(url: storeURL))
        let rows = try rawRows("SELECT key, value FROM _objectgraph_metadata ORDER BY key")
        let values = Dictionary(uniqueKeysWithValues: rows.map { ($0["key"] as String, $0["value"] as String) })
        XCTAssertEqual(values["schemaVersion"], "2.1.0")
        let schema = try XCTUnwrap(values["schema"])
        XCTAssertTrue(schema.contains("\"originalName\":\"size\""), schema)
        XCTAssertTrue(schema.contains("\"name\":\"Label\""), schema)
        XCTAssertTrue(schema.contains("unique"), schema)
    }

    /// A configuration's store identifier is the one its models' identifiers carry, found by the
    /// configuration's name (SwiftData, 2026).
    func testTheStoreIdentifierIsFoundByItsConfigurationsName() throws {
        let container = try ModelContainer(
            for: Schema([Label.self]), configurations: ModelConfiguration("labels", url: storeURL))
        let context = ModelContext(container)
        let label = Label(name: "urgent")
        context.insert(label)
        try context.save()
        let identifier = try XCTUnwrap(container.storeIdentifier(forConfigurationNamed: "labels"))
        XCTAssertEqual(identifier, label.persistentModelID.storeIdentifier)
        XCTAssertNil(container.storeIdentifier(forConfigurationNamed: "other"))
    }

    func testAContainerThatDoesNotAllowSavingRefusesToSave() throws {
        do {
            let context = ModelContext(try makeContainer(Note.self))
            context.insert(Note(title: "existing"))
            try context.save()
        }
        let readOnly = try makeContainer(Note.self, allowsSave: false)
        let context = ModelContext(readOnly)
        XCTAssertEqual(try context.fetch(FetchDescriptor<Note>()).map(\.title), ["existing"])
        context.insert(Note(title: "new"))
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .saveNotAllowed)
        }
        XCTAssertEqual(try rawRows("SELECT COUNT(*) AS n FROM Note").first?["n"] as Int?, 1)
    }

    func testInMemoryContainersAreSeparateAndLeaveNoFile() throws {
        let first = try ModelContainer(for: Note.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let second = try ModelContainer(for: Note.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = ModelContext(first)
        context.insert(Note(title: "only here"))
        try context.save()
        XCTAssertEqual(try ModelContext(first).fetchCount(FetchDescriptor<Note>()), 1)
        XCTAssertEqual(try ModelContext(second).fetchCount(FetchDescriptor<Note>()), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "/dev/null.external"))
    }

    func testTheDefaultStoreIsInTheDataFolderOfTheWorkingDirectory() {
        let configuration = ModelConfiguration()
        let expected = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appendingPathComponent("data").appendingPathComponent("default.store")
        XCTAssertEqual(configuration.url.standardizedFileURL, expected.standardizedFileURL)
        XCTAssertEqual(ModelConfiguration("snippets").url.lastPathComponent, "snippets.store")
    }

    func testTheStoreIsInWALMode() throws {
        let container = try makeContainer(Note.self)
        let context = ModelContext(container)
        context.insert(Note(title: "x"))
        try context.save()
        XCTAssertEqual(try rawRows("PRAGMA journal_mode").first?[0] as String?, "wal")
    }

    func testGivingTwoConfigurationsIsAClearError() throws {
        XCTAssertThrowsError(try ModelContainer(
            for: Note.self,
            configurations: ModelConfiguration(url: storeURL), ModelConfiguration(url: folder.appendingPathComponent("b.store")))
        ) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .loadIssueModelContainer)
        }
        let same = ModelConfiguration(url: storeURL)
        XCTAssertThrowsError(try ModelContainer(for: Note.self, configurations: same, same)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .duplicateConfiguration)
        }
    }

    func testAStoreThatCannotBeOpenedIsAClearError() throws {
        let notAFolder = folder.appendingPathComponent("file")
        try Data("x".utf8).write(to: notAFolder)
        XCTAssertThrowsError(try ModelContainer(
            for: Note.self, configurations: ModelConfiguration(url: notAFolder.appendingPathComponent("x.store")))
        ) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .loadIssueModelContainer)
        }
    }

    func testANewOptionalOrDefaultedAttributeIsAddedToAnExistingTable() throws {
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE "Note" ("_pk" INTEGER PRIMARY KEY AUTOINCREMENT, "_version" INTEGER NOT NULL DEFAULT 1,
                                     "title" TEXT NOT NULL);
                INSERT INTO "Note" ("title") VALUES ('old');
                """)
        }
        let context = ModelContext(try makeContainer(Note.self))
        let note = try XCTUnwrap(context.fetch(FetchDescriptor<Note>()).first)
        XCTAssertEqual(note.title, "old")
        XCTAssertEqual(note.body, "")
        XCTAssertNil(note.priority)
    }

    @MainActor
    func testTheMainContextAutosavesShortlyAfterAChange() async throws {
        let container = try makeContainer(Note.self)
        XCTAssertTrue(container.mainContext.autosaveEnabled)
        XCTAssertTrue(container.mainContext === container.mainContext)
        container.mainContext.insert(Note(title: "autosaved"))
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<Note>()), 0)
        for _ in 0..<50 where try ModelContext(container).fetchCount(FetchDescriptor<Note>()) == 0 {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<Note>()), 1)
        XCTAssertFalse(container.mainContext.hasChanges)
    }

    @MainActor
    func testTheMainContextSavesPendingChangesWhenTheContainerCloses() throws {
        do {
            let container = try makeContainer(Note.self)
            container.mainContext.insert(Note(title: "saved on close"))
        }
        XCTAssertEqual(try rawRows("SELECT title FROM Note").map { $0["title"] as String }, ["saved on close"])
    }

    func testOtherContextsDoNotAutosaveByDefault() throws {
        let container = try makeContainer(Note.self)
        let context = ModelContext(container)
        XCTAssertFalse(context.autosaveEnabled)
        context.insert(Note(title: "pending"))
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<Note>()), 0)
    }

    /// An identifier names a row of one store: another store's context found its own row with the same
    /// key (by `model(for:)`, a predicate, or a model actor), a note of another library.
    func testAnIdentifierOfAnotherStoreFindsNothingThere() async throws {
        let here = try makeContainer(Note.self)
        let elsewhere = try ModelContainer(
            for: Note.self, configurations: ModelConfiguration(url: folder.appendingPathComponent("elsewhere.store")))
        let otherContext = ModelContext(elsewhere)
        let foreign = Note(title: "elsewhere")
        otherContext.insert(foreign)
        try otherContext.save()
        let context = ModelContext(here)
        context.insert(Note(title: "here"))
        try context.save()
        let foreignID = foreign.persistentModelID
        // Each is its store's first row: the two have the same key.

        let found = context.model(for: foreignID)
        XCTAssertTrue(found.isDeleted, "a stand-in for a row this store does not have")
        XCTAssertEqual(found.persistentModelID, foreignID)
        XCTAssertEqual(try context.fetch(FetchDescriptor<Note>(predicate: #Predicate { $0.persistentModelID == foreignID })).count, 0)
        XCTAssertEqual(try context.fetch(FetchDescriptor<Note>(predicate: #Predicate { $0.persistentModelID != foreignID })).map(\.title), ["here"])
        let listed = [foreignID]
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Note>(predicate: #Predicate { listed.contains($0.persistentModelID) })), 0)

        let importer = NoteImporter(modelContainer: here)
        let ownID = try await importer.importNotes(titled: ["own"])[0]
        let titles = await importer.titles(of: [foreignID, ownID])
        XCTAssertEqual(titles, [nil, "own"])
        try await importer.delete(ownID)
        let afterDelete = await importer.titles(of: [ownID])
        XCTAssertEqual(afterDelete, [nil], "a deleted row is no model to the actor's subscript")
    }

    func testAModelActorWorksWithItsOwnContext() async throws {
        let container = try makeContainer(Note.self)
        let importer = NoteImporter(modelContainer: container)
        let identifiers = try await importer.importNotes(titled: ["one", "two"])
        XCTAssertEqual(identifiers.count, 2)
        let titles = try ModelContext(container).fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])).map(\.title)
        XCTAssertEqual(titles, ["one", "two"])
    }
}

@ModelActor
actor NoteImporter {
    func importNotes(titled titles: [String]) throws -> [PersistentIdentifier] {
        let notes = titles.map { Note(title: $0) }
        notes.forEach(modelContext.insert)
        try modelContext.save()
        return notes.map(\.persistentModelID)
    }

    func titles(of identifiers: [PersistentIdentifier]) -> [String?] {
        identifiers.map { self[$0, as: Note.self]?.title }
    }

    func delete(_ identifier: PersistentIdentifier) throws {
        if let note = self[identifier, as: Note.self] { modelContext.delete(note) }
        try modelContext.save()
    }
}

final class MacroEdgeCaseTests: StoreTestCase {
    func testPropertiesNamedWithKeywordsArePersisted() async throws {
        let container = try makeContainer(Keyworded.self)
        do {
            let context = ModelContext(container)
            let model = Keyworded(default: "value")
            model.class = 3
            context.insert(model)
            try context.save()
        }
        let model = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<Keyworded>()).first)
        XCTAssertEqual(model.default, "value")
        XCTAssertEqual(model.class, 3)
        let count = try await ExplicitModelActor(modelContainer: container).count()
        XCTAssertEqual(count, 1)
    }
}
