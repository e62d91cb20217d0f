import Foundation
import ObjectGraph
import XCTest

/// `ModelContext.willSave` and `didSave`, as SwiftData posts them: the identifiers a save inserted,
/// updated and deleted, under `NotificationKey` raw values.
final class SaveNotificationTests: StoreTestCase {
    /// What one context's `didSave` notifications carried, in order.
    private final class SaveLog: @unchecked Sendable {
        var saves: [(inserted: [PersistentIdentifier], updated: [PersistentIdentifier], deleted: [PersistentIdentifier])] = []
        var observers: [NSObjectProtocol] = []

        init(of context: ModelContext) {
            observers.append(NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) { [unowned self] note in
                func identifiers(_ key: ModelContext.NotificationKey) -> [PersistentIdentifier] {
                    note.userInfo?[key.rawValue] as? [PersistentIdentifier] ?? []
                }
                saves.append((identifiers(.insertedIdentifiers), identifiers(.updatedIdentifiers), identifiers(.deletedIdentifiers)))
            })
        }

        deinit { observers.forEach(NotificationCenter.default.removeObserver) }
    }

    func testDidSaveListsWhatTheSaveInsertedUpdatedAndDeleted() throws {
        let container = try makeContainer(Note.self)
        let context = ModelContext(container)
        let log = SaveLog(of: context)
        let first = Note(title: "first"), second = Note(title: "second")
        context.insert(first)
        context.insert(second)
        try context.save()
        XCTAssertEqual(log.saves.count, 1)
        XCTAssertEqual(log.saves.last?.inserted, [first.persistentModelID, second.persistentModelID],
                       "the identifiers the models have after the save")
        XCTAssertEqual(log.saves.last?.updated, [])
        XCTAssertEqual(log.saves.last?.deleted, [])

        first.title = "first, edited"
        context.delete(second)
        let third = Note(title: "third")
        context.insert(third)
        let deletedID = second.persistentModelID
        try context.save()
        XCTAssertEqual(log.saves.count, 2)
        XCTAssertEqual(log.saves.last?.inserted, [third.persistentModelID])
        XCTAssertEqual(log.saves.last?.updated, [first.persistentModelID])
        XCTAssertEqual(log.saves.last?.deleted, [deletedID])

        try context.save()
        XCTAssertEqual(log.saves.count, 2, "a save with nothing to write posts nothing")

        // Another context's save is posted with that context as the object.
        let other = ModelContext(container)
        other.insert(Note(title: "elsewhere"))
        try other.save()
        XCTAssertEqual(log.saves.count, 2)
    }

    func testWillSaveComesBeforeTheWriteAndItsChangesAreSaved() throws {
        let container = try makeContainer(Note.self)
        let context = ModelContext(container)
        let note = Note(title: "draft")
        context.insert(note)
        // The observer runs on this thread, during `save()`.
        final class Observed: @unchecked Sendable {
            let note: Note
            var storedWhenPosted: Int?
            init(_ note: Note) { self.note = note }
        }
        let observed = Observed(note)
        let observer = NotificationCenter.default.addObserver(forName: ModelContext.willSave, object: context, queue: nil) { _ in
            observed.storedWhenPosted = try? ModelContext(container).fetchCount(FetchDescriptor<Note>())
            observed.note.body = "stamped before saving"
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try context.save()
        XCTAssertEqual(observed.storedWhenPosted, 0, "posted before the insert was written")
        let stored = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<Note>()).first)
        XCTAssertEqual(stored.body, "stamped before saving")
    }

    func testDeletesByRuleAndByPredicateAndRelationshipChangesAreListed() throws {
        let container = try makeContainer(Library.self, Shelf.self, Volume.self, Recipe.self, Ingredient.self, Note.self)
        let context = ModelContext(container)
        let library = Library(name: "City"), shelf = Shelf(label: "A"), volume = Volume(title: "Dune")
        library.shelves = [shelf]
        shelf.volumes = [volume]
        let soup = Recipe(name: "Soup"), leek = Ingredient(name: "leek"), salt = Ingredient(name: "salt")
        context.insert(library)
        context.insert(soup)
        context.insert(leek)
        context.insert(salt)
        try context.save()
        let log = SaveLog(of: context)

        // Cascades: the library's shelf and the shelf's volume go with it.
        let cascaded = [library.persistentModelID, shelf.persistentModelID, volume.persistentModelID]
        context.delete(library)
        try context.save()
        XCTAssertEqual(Set(log.saves.last?.deleted ?? []), Set(cascaded))

        // A relationship changed from the ingredient's side: the ingredient was written.
        leek.recipes.append(soup)
        try context.save()
        XCTAssertTrue(log.saves.last?.updated.contains(leek.persistentModelID) ?? false, "\(log.saves.last?.updated ?? [])")

        // A delete by predicate lists the models it removed: of an entity with relationships, they are
        // loaded and deleted one by one; of one without, the rows are deleted by one statement, and
        // those no model of the context stood for are listed too.
        let saltID = salt.persistentModelID
        try context.delete(model: Ingredient.self, where: #Predicate { $0.name == "salt" })
        try context.save()
        XCTAssertEqual(log.saves.last?.deleted, [saltID])
        let notes = [Note(title: "keep"), Note(title: "drop"), Note(title: "drop")]
        notes.forEach(context.insert)
        try context.save()
        let fresh = ModelContext(container)
        let freshLog = SaveLog(of: fresh)
        try fresh.delete(model: Note.self, where: #Predicate { $0.title == "drop" })
        try fresh.save()
        XCTAssertEqual(Set(freshLog.saves.last?.deleted ?? []), Set(notes.dropFirst().map(\.persistentModelID)))
    }

    func testAnUpsertIsListedAsAnUpdateOfTheRowItTookOver() throws {
        let container = try makeContainer(Label.self)
        let context = ModelContext(container)
        let saved = Label(name: "swift")
        context.insert(saved)
        try context.save()
        let savedID = saved.persistentModelID

        let other = ModelContext(container)
        let log = SaveLog(of: other)
        other.insert(Label(name: "swift", uses: 3))
        other.insert(Label(name: "rust"))
        try other.save()
        XCTAssertEqual(log.saves.last?.updated, [savedID])
        XCTAssertEqual(log.saves.last?.inserted.count, 1)
        XCTAssertEqual(try other.fetchCount(FetchDescriptor<Label>()), 2)
    }
}
