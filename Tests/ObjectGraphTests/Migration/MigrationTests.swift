import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

final class LightweightMigrationTests: StoreTestCase {
    private func bytes(_ count: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0) }) }

    private func container<V: VersionedSchema>(_ version: V.Type, plan: (any SchemaMigrationPlan.Type)? = nil) throws -> ModelContainer {
        try ModelContainer(for: Schema(versionedSchema: version), migrationPlan: plan,
                           configurations: ModelConfiguration(url: storeURL))
    }

    private func storeFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    /// Two boxes, five items (two with large photos, one duplicate-free), saved at V1.
    private func makeV1Store() throws {
        let context = ModelContext(try container(ItemsV1.self))
        let small = ItemsV1.Box(label: "small"), large = ItemsV1.Box(label: "large")
        for (index, name) in ["apple", "pear", "plum", "fig", "kiwi"].enumerated() {
            let item = ItemsV1.Item(name: name, size: index)
            item.note = index.isMultiple(of: 2) ? "even" : nil
            item.photo = index < 2 ? bytes(200_000 + index) : bytes(10)
            item.box = index < 3 ? small : large
            context.insert(item)
        }
        try context.save()
    }

    func testEveryLightweightChangeKeepsTheData() throws {
        try makeV1Store()
        XCTAssertEqual(externalFiles.count, 0, "V1 stores photos in the rows")

        let context = ModelContext(try container(ItemsV2.self))
        let items = try context.fetch(FetchDescriptor<ItemsV2.Item>(sortBy: [SortDescriptor(\.weight)]))
        XCTAssertEqual(items.map(\.name), ["apple", "pear", "plum", "fig", "kiwi"])
        XCTAssertEqual(items.map(\.weight), [0, 1, 2, 3, 4], "renamed by originalName")
        XCTAssertEqual(items.map(\.note), ["even", "none", "even", "none", "even"], "made required, nil became the default")
        XCTAssertTrue(items.allSatisfy { $0.rating == nil }, "new optional attribute")
        XCTAssertTrue(items.allSatisfy { $0.color == "grey" }, "new attribute with a default")
        XCTAssertEqual(items.map { $0.container?.label }, ["small", "small", "small", "large", "large"], "relationship renamed")
        XCTAssertEqual(items[0].photo, bytes(200_000))
        XCTAssertEqual(items[1].photo, bytes(200_001))
        XCTAssertEqual(items[2].photo, bytes(10))
        XCTAssertEqual(externalFiles.count, 2, "large values moved out to files")
        let columns = try rawRows("SELECT name FROM pragma_table_info('Item')").map { $0["name"] as String }
        XCTAssertFalse(columns.contains("legacy"), "removed attribute dropped")
        XCTAssertFalse(columns.contains("size"))
        XCTAssertTrue(columns.contains("spare"), "added relationship")
        XCTAssertTrue(items.allSatisfy { $0.spare == nil })
        items[0].spare = items[4].container
        try context.save()

        let duplicate = ItemsV2.Item(name: "pear", weight: 9)
        context.insert(duplicate)
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<ItemsV2.Item>()), 5, ".unique now upserts")

        let large = try XCTUnwrap(context.fetch(FetchDescriptor<ItemsV2.Box>()).first { $0.label == "large" })
        context.delete(large)
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<ItemsV2.Item>()), 3, "the new cascade rule applies")

        let backups = storeFiles().filter { $0.hasPrefix("test.store.1.0.0-") && $0.hasSuffix(".backup") }
        XCTAssertEqual(backups.count, 1, "a copy of the V1 store is kept: \(storeFiles())")
    }

    func testRemovingExternalStorageMovesValuesBackIntoRows() throws {
        try makeV1Store()
        _ = try container(ItemsV2.self)
        XCTAssertEqual(externalFiles.count, 2)
        let context = ModelContext(try container(ItemsV3.self))
        let items = try context.fetch(FetchDescriptor<ItemsV3.Item>(sortBy: [SortDescriptor(\.weight)]))
        XCTAssertEqual(items[0].photo, bytes(200_000))
        XCTAssertEqual(externalFiles, [], "files removed once their values are back in the rows")
        let columns = try rawRows("SELECT name FROM pragma_table_info('Item')").map { $0["name"] as String }
        XCTAssertFalse(columns.contains("spare"), "removed relationship dropped")
        XCTAssertEqual(items.count, 5)
        XCTAssertEqual(try rawRows("SELECT typeof(photo) AS t FROM Item ORDER BY weight LIMIT 1").first?["t"] as String?, "blob")
    }

    func testAddingUniqueToCollidingRowsFailsClearlyAndChangesNothing() throws {
        let context = ModelContext(try container(ItemsV1.self))
        context.insert(ItemsV1.Item(name: "twin", size: 1))
        context.insert(ItemsV1.Item(name: "twin", size: 2))
        try context.save()
        let before = try Data(contentsOf: storeURL)
        XCTAssertThrowsError(try container(ItemsV2.self)) { error in
            let message = "\(error)"
            XCTAssertEqual((error as? SwiftDataError)?.code, .migrationFailure)
            XCTAssertTrue(message.contains("Item.name"), message)
            XCTAssertTrue(message.contains("left as it was"), message)
        }
        XCTAssertEqual(try Data(contentsOf: storeURL), before)
        XCTAssertEqual(try ModelContext(try container(ItemsV1.self)).fetchCount(FetchDescriptor<ItemsV1.Item>()), 2)
    }

    func testATypeChangeIsRefusedNamingEntityAndProperty() throws {
        try makeV1Store()
        XCTAssertThrowsError(try container(ItemsTypeChange.self)) { error in
            let error = error as? SwiftDataError
            XCTAssertEqual(error?.entityName, "Item")
            XCTAssertEqual(error?.propertyName, "size")
            XCTAssertTrue(error?.message.contains("changes type from Int to String") ?? false, error?.message ?? "")
            XCTAssertTrue(error?.message.contains("declare the new type under another name and carry the values over in a custom stage") ?? false, error?.message ?? "")
        }
        XCTAssertEqual(try ModelContext(try container(ItemsV1.self)).fetchCount(FetchDescriptor<ItemsV1.Item>()), 5)
    }

    func testANewRequiredAttributeWithoutADefaultIsRefused() throws {
        try makeV1Store()
        XCTAssertThrowsError(try container(ItemsRequiredWithoutDefault.self)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.propertyName, "owner")
            XCTAssertTrue("\(error)".contains("no default value"), "\(error)")
        }
    }
}

final class VersionedMigrationTests: StoreTestCase {
    private func open(_ schema: any VersionedSchema.Type, plan: (any SchemaMigrationPlan.Type)? = NoteMigrationPlan.self) throws -> ModelContainer {
        try ModelContainer(for: Schema(versionedSchema: schema), migrationPlan: plan, configurations: ModelConfiguration(url: storeURL))
    }

    private func makeV1Store() throws {
        let context = ModelContext(try open(NoteSchemaV1.self))
        for (title, text) in [("groceries", "milk"), ("groceries", "bread"), ("ideas", "app"), ("groceries", "eggs")] {
            context.insert(NoteSchemaV1.Memo(title: title, text: text))
        }
        try context.save()
    }

    func testACustomStageDeduplicatesBeforeUniqueIsAdded() throws {
        try makeV1Store()
        let context = ModelContext(try open(NoteSchemaV2.self))
        let titles = try context.fetch(FetchDescriptor<NoteSchemaV2.Memo>(sortBy: [SortDescriptor(\.title)])).map(\.title)
        XCTAssertEqual(titles, ["groceries", "groceries (2)", "groceries (3)", "ideas"])
        let indexes = try rawRows("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Memo'").compactMap { $0["sql"] as String? }
        XCTAssertTrue(indexes.contains { $0.contains("UNIQUE") }, "\(indexes)")
        XCTAssertEqual(try rawRows("SELECT value FROM _objectgraph_metadata WHERE key = 'schemaVersion'").first?["value"] as String?, "2.0.0")
    }

    func testAV1StoreOpensAtV3ThroughEveryStage() throws {
        try makeV1Store()
        let context = ModelContext(try open(NoteSchemaV3.self))
        let memos = try context.fetch(FetchDescriptor<NoteSchemaV3.Memo>(sortBy: [SortDescriptor(\.title)]))
        XCTAssertEqual(memos.map(\.title), ["groceries", "groceries (2)", "groceries (3)", "ideas"])
        XCTAssertEqual(Set(memos.map(\.text)), ["milk", "bread", "app", "eggs"])
        XCTAssertTrue(memos.allSatisfy { $0.priority == 0 })
        XCTAssertEqual(try rawRows("SELECT value FROM _objectgraph_metadata WHERE key = 'schemaVersion'").first?["value"] as String?, "3.0.0")
    }

    /// SwiftData's usual form names the current version's model types, not a versioned schema: the
    /// plan's stages must run all the same, up to the version those types belong to.
    func testAContainerMadeFromTheModelTypesRunsThePlansStages() throws {
        try makeV1Store()
        do {
            let context = ModelContext(try ModelContainer(
                for: NoteSchemaV2.Memo.self, migrationPlan: NoteMigrationPlan.self, configurations: ModelConfiguration(url: storeURL)))
            let titles = try context.fetch(FetchDescriptor<NoteSchemaV2.Memo>(sortBy: [SortDescriptor(\.title)])).map(\.title)
            XCTAssertEqual(titles, ["groceries", "groceries (2)", "groceries (3)", "ideas"], "the custom stage deduplicated")
            XCTAssertEqual(context.container.schema.version, Schema.Version(2, 0, 0))
        }
        XCTAssertEqual(try rawRows("SELECT value FROM _objectgraph_metadata WHERE key = 'schemaVersion'").first?["value"] as String?, "2.0.0")
        XCTAssertFalse(try ModelContainer.storeNeedsUpdate(
            at: storeURL, for: Schema([NoteSchemaV2.Memo.self]), migrationPlan: NoteMigrationPlan.self), "at V2 already")
        XCTAssertTrue(try ModelContainer.storeNeedsUpdate(
            at: storeURL, for: Schema([NoteSchemaV3.Memo.self]), migrationPlan: NoteMigrationPlan.self))

        // Xcode's template: a schema of the types, and a list of configurations.
        let schema = Schema([NoteSchemaV3.Memo.self])
        let context = ModelContext(try ModelContainer(
            for: schema, migrationPlan: NoteMigrationPlan.self, configurations: [ModelConfiguration(schema: schema, url: storeURL)]))
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<NoteSchemaV3.Memo>()), 4)
        XCTAssertEqual(try rawRows("SELECT value FROM _objectgraph_metadata WHERE key = 'schemaVersion'").first?["value"] as String?, "3.0.0")
    }

    func testAV1StoreOpensAtV3FromItsModelTypesThroughEveryStage() throws {
        try makeV1Store()
        let context = ModelContext(try ModelContainer(
            for: NoteSchemaV3.Memo.self, migrationPlan: NoteMigrationPlan.self, configurations: ModelConfiguration(url: storeURL)))
        let memos = try context.fetch(FetchDescriptor<NoteSchemaV3.Memo>(sortBy: [SortDescriptor(\.title)]))
        XCTAssertEqual(memos.map(\.title), ["groceries", "groceries (2)", "groceries (3)", "ideas"])
        XCTAssertEqual(try rawRows("SELECT value FROM _objectgraph_metadata WHERE key = 'schemaVersion'").first?["value"] as String?, "3.0.0")
    }

    /// The form Xcode's new-project template writes, with no plan, compiles and opens the store.
    func testASchemaAndAListOfConfigurationsWithoutAPlanOpenAStore() throws {
        let schema = Schema([NoteSchemaV1.Memo.self])
        let configuration = ModelConfiguration(schema: schema, url: storeURL)
        let context = ModelContext(try ModelContainer(for: schema, configurations: [configuration]))
        context.insert(NoteSchemaV1.Memo(title: "a", text: "b"))
        try context.save()
        XCTAssertEqual(try rawRows("SELECT title FROM Memo").map { $0["title"] as String }, ["a"])
    }

    func testAStoreNewerThanTheCodeIsRefusedAndLeftByteIdentical() throws {
        try makeV1Store()
        _ = try open(NoteSchemaV3.self)
        let before = try Data(contentsOf: storeURL)
        XCTAssertThrowsError(try open(NoteSchemaV2.self)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .backwardMigration)
            XCTAssertTrue("\(error)".contains("3.0.0"), "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: storeURL), before)
    }

    func testAStoreAtAVersionThePlanDoesNotKnowIsRefused() throws {
        do {
            let context = ModelContext(try ModelContainer(
                for: Schema([NoteSchemaV2.Memo.self], version: Schema.Version(1, 5, 0)),
                configurations: ModelConfiguration(url: storeURL)))
            context.insert(NoteSchemaV2.Memo(title: "x", text: "y"))
            try context.save()
        }
        let before = try Data(contentsOf: storeURL)
        XCTAssertThrowsError(try open(NoteSchemaV3.self)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unknownSchema)
        }
        XCTAssertEqual(try Data(contentsOf: storeURL), before)
    }

    func testAStoreWithoutARecordedVersionIsMatchedByItsTables() throws {
        try makeV1Store()
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { try $0.execute(sql: "DROP TABLE _objectgraph_metadata") }
        try queue.close()
        let context = ModelContext(try open(NoteSchemaV3.self))
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<NoteSchemaV3.Memo>()), 4)
        XCTAssertEqual(try context.fetch(FetchDescriptor<NoteSchemaV3.Memo>()).filter { $0.title.hasPrefix("groceries") }.count, 3)
    }

    /// Opens `count` containers of the store at V3 at once, each saving a memo "<title> <index>";
    /// returns what they threw.
    private func openAtOnce(_ count: Int, saving title: String) -> [String] {
        let url = storeURL
        let failures = LockedValue<[String]>([])
        DispatchQueue.concurrentPerform(iterations: count) { index in
            do {
                let context = ModelContext(try ModelContainer(
                    for: Schema(versionedSchema: NoteSchemaV3.self), migrationPlan: NoteMigrationPlan.self,
                    configurations: ModelConfiguration(url: url)))
                context.insert(NoteSchemaV3.Memo(title: "\(title) \(index)", text: ""))
                try context.save()
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        return failures.withLock { $0 }
    }

    /// Processes (a server and a command) or threads that open one old store at the same moment:
    /// one migrates it, and the others open what it made. Each container then saves a memo of its own,
    /// and every memo must be in the store: a container left on a file another one renamed away would
    /// write where nobody reads.
    func testContainersOpeningOneOldStoreAtOnceMigrateItOnceAndKeepWhatEachSaves() throws {
        try makeV1Store()
        XCTAssertEqual(openAtOnce(4, saving: "opened by"), [])
        let titles = try ModelContext(try open(NoteSchemaV3.self)).fetch(FetchDescriptor<NoteSchemaV3.Memo>()).map(\.title).sorted()
        XCTAssertEqual(titles, ["groceries", "groceries (2)", "groceries (3)", "ideas",
                                "opened by 0", "opened by 1", "opened by 2", "opened by 3"])
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        XCTAssertEqual(files.filter { $0.hasSuffix(".backup") }.count, 1, "one migration, one copy: \(files.sorted())")
        XCTAssertFalse(files.contains { $0.contains(".migrating") || $0.hasSuffix(".updating") }, "\(files)")
    }

    /// A store another process is creating: its file exists, with no tables yet, until that process's
    /// first transaction commits. Opened then with a plan, it matched no version ("records no schema and
    /// its tables match no version"): a command beside the server, or a first sign-in beside a command,
    /// failed, and the server answered 500.
    func testAStoreFileWithNoTablesYetOpensAsANewStore() throws {
        try DatabaseQueue(path: storeURL.path).close()
        XCTAssertTrue(FileManager.default.fileExists(atPath: storeURL.path))
        let context = ModelContext(try open(NoteSchemaV3.self))
        context.insert(NoteSchemaV3.Memo(title: "first", text: ""))
        try context.save()
        XCTAssertEqual(try rawRows("SELECT value FROM _objectgraph_metadata WHERE key = 'schemaVersion'").first?["value"] as String?, "3.0.0")
    }

    func testContainersCreatingOneStoreAtOnceAllOpenIt() throws {
        XCTAssertEqual(openAtOnce(6, saving: "made by"), [])
        XCTAssertEqual(try ModelContext(try open(NoteSchemaV3.self)).fetchCount(FetchDescriptor<NoteSchemaV3.Memo>()), 6)
    }

    func testAMigrationThatFailsHalfWayLeavesTheStoreUnchangedAndTheCopyPresent() throws {
        try makeV1Store()
        let before = try ModelContext(try open(NoteSchemaV1.self, plan: nil)).fetch(FetchDescriptor<NoteSchemaV1.Memo>()).map(\.title).sorted()
        XCTAssertThrowsError(try open(NoteSchemaV3.self, plan: FailingMigrationPlan.self)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .migrationFailure)
            XCTAssertTrue("\(error)".contains("stageFailed"), "\(error)")
        }
        let files = (try FileManager.default.contentsOfDirectory(atPath: folder.path))
        XCTAssertTrue(files.contains { $0.hasSuffix(".backup") }, "\(files)")
        XCTAssertFalse(files.contains { $0.contains(".migrating") }, "\(files)")
        let after = try ModelContext(try open(NoteSchemaV1.self, plan: nil)).fetch(FetchDescriptor<NoteSchemaV1.Memo>()).map(\.title).sorted()
        XCTAssertEqual(after, before)
        XCTAssertEqual(try rawRows("SELECT value FROM _objectgraph_metadata WHERE key = 'schemaVersion'").first?["value"] as String?, "1.0.0")
    }
}

final class EntityRenameTests: StoreTestCase {
    func testARenamedEntityKeepsItsRows() throws {
        do {
            let context = ModelContext(try ModelContainer(
                for: Schema(versionedSchema: NoteSchemaV1.self), configurations: ModelConfiguration(url: storeURL)))
            context.insert(NoteSchemaV1.Memo(title: "kept", text: "body"))
            context.insert(NoteSchemaV1.Memo(title: "also kept", text: "more"))
            try context.save()
        }
        let context = ModelContext(try ModelContainer(
            for: Schema(versionedSchema: RenamedNoteSchema.self), configurations: ModelConfiguration(url: storeURL)))
        let notes = try context.fetch(FetchDescriptor<RenamedNoteSchema.Jotting>(sortBy: [SortDescriptor(\.title)]))
        XCTAssertEqual(notes.map(\.title), ["also kept", "kept"])
        XCTAssertEqual(notes.map(\.body), ["more", "body"])
        let tables = try rawRows("SELECT name FROM sqlite_master WHERE type = 'table'").map { $0["name"] as String }
        XCTAssertTrue(tables.contains("Jotting"))
        XCTAssertFalse(tables.contains("Memo"))
        XCTAssertEqual(Schema(versionedSchema: RenamedNoteSchema.self).entitiesByName["Jotting"]?.originalName, "Memo")
    }
}

/// `#Unique` added to and dropped from a store's entity without a migration plan, as `.unique` is.
final class CompoundUniqueMigrationTests: StoreTestCase {
    private func container<V: VersionedSchema>(_ version: V.Type) throws -> ModelContainer {
        try ModelContainer(for: Schema(versionedSchema: version), configurations: ModelConfiguration(url: storeURL))
    }

    private func uniqueIndexes() throws -> [String] {
        try rawRows("SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE 'CREATE UNIQUE%' ORDER BY name")
            .map { $0["name"] as String }
    }

    func testAddingAConstraintOverDistinctRowsMakesItsIndexAndUpserts() throws {
        let old = ModelContext(try container(VisitsV1.self))
        old.insert(VisitsV1.Visit(city: "Oslo", day: 1))
        old.insert(VisitsV1.Visit(city: "Oslo", day: 2))
        try old.save()

        let context = ModelContext(try container(VisitsV2.self))
        XCTAssertEqual(try uniqueIndexes(), ["Visit_city_day_unique"])
        context.insert(VisitsV2.Visit(city: "Oslo", day: 2, note: "again"))
        try context.save()
        XCTAssertEqual(try rawRows("SELECT note FROM Visit ORDER BY day").map { $0["note"] as String }, ["", "again"])
    }

    func testAddingAConstraintOverCollidingRowsFailsClearlyAndChangesNothing() throws {
        let old = ModelContext(try container(VisitsV1.self))
        old.insert(VisitsV1.Visit(city: "Oslo", day: 1))
        old.insert(VisitsV1.Visit(city: "Oslo", day: 1))
        try old.save()
        let before = try Data(contentsOf: storeURL)

        XCTAssertThrowsError(try container(VisitsV2.self)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .migrationFailure)
            XCTAssertTrue("\(error)".contains("Visit's city and day must now be unique together, but saved rows share values"), "\(error)")
            XCTAssertEqual((error as? SwiftDataError)?.propertyName, "city, day")
            XCTAssertTrue("\(error)".contains("left as it was"), "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: storeURL), before)
        XCTAssertEqual(try ModelContext(try container(VisitsV1.self)).fetchCount(FetchDescriptor<VisitsV1.Visit>()), 2)
    }

    func testDroppingTheConstraintDropsItsIndex() throws {
        let new = ModelContext(try container(VisitsV2.self))
        new.insert(VisitsV2.Visit(city: "Oslo", day: 1))
        try new.save()
        XCTAssertEqual(try uniqueIndexes(), ["Visit_city_day_unique"])

        let context = ModelContext(try container(VisitsV3.self))
        XCTAssertEqual(try uniqueIndexes(), [])
        context.insert(VisitsV3.Visit(city: "Oslo", day: 1))
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<VisitsV3.Visit>()), 2, "the same pair is now a second visit")
    }
}
