import Foundation
import GRDB
import ObjectGraph
import XCTest

final class ModelContextTests: StoreTestCase {
    func testInsertSaveAndFetchFromANewContainer() throws {
        do {
            let context = ModelContext(try makeContainer(Note.self))
            context.insert(Note(title: "first", body: "hello"))
            context.insert(Note(title: "second"))
            try context.save()
        }
        let context = ModelContext(try makeContainer(Note.self))
        let notes = try context.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)]))
        XCTAssertEqual(notes.map(\.title), ["first", "second"])
        XCTAssertEqual(notes.map(\.body), ["hello", ""])
    }

    func testAModelCreatedOutsideAContextIsAPlainObject() {
        let note = Note(title: "loose")
        note.body = "edited"
        note.wordCount = 3
        XCTAssertEqual(note.title, "loose")
        XCTAssertEqual(note.body, "edited")
        XCTAssertNil(note.modelContext)
        XCTAssertFalse(note.hasChanges)
        XCTAssertTrue(note.persistentModelID.isTemporary)
    }

    func testIdentifiersAreTemporaryUntilSavedThenPermanent() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let note = Note(title: "a")
        context.insert(note)
        XCTAssertTrue(note.persistentModelID.isTemporary)
        XCTAssertTrue(note.modelContext === context)
        try context.save()
        XCTAssertFalse(note.persistentModelID.isTemporary)
        XCTAssertEqual(note.persistentModelID.entityName, "Note")
    }

    func testOneObjectPerRowInAContext() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let note = Note(title: "same")
        context.insert(note)
        try context.save()
        let first = try context.fetch(FetchDescriptor<Note>())
        let second = try context.fetch(FetchDescriptor<Note>())
        XCTAssertTrue(first[0] === note)
        XCTAssertTrue(second[0] === note)

        let other = ModelContext(context.container)
        let elsewhere = try other.fetch(FetchDescriptor<Note>())[0]
        XCTAssertFalse(elsewhere === note, "each context has its own instances")
        XCTAssertEqual(elsewhere.persistentModelID, note.persistentModelID)
    }

    func testChangesAreTrackedAndSavedAsUpdates() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let note = Note(title: "draft")
        context.insert(note)
        try context.save()
        XCTAssertFalse(context.hasChanges)
        XCTAssertFalse(note.hasChanges)

        note.title = "final"
        XCTAssertTrue(context.hasChanges)
        XCTAssertTrue(note.hasChanges)
        XCTAssertEqual(context.changedModelsArray.count, 1)
        try context.save()
        XCTAssertFalse(context.hasChanges)

        let fresh = ModelContext(try makeContainer(Note.self))
        XCTAssertEqual(try fresh.fetch(FetchDescriptor<Note>()).map(\.title), ["final"])
        XCTAssertEqual(try rawRows("SELECT _version FROM Note").first?["_version"] as Int?, 2)
    }

    func testPendingArraysListInsertsChangesAndDeletes() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let kept = Note(title: "kept")
        let gone = Note(title: "gone")
        context.insert(kept)
        context.insert(gone)
        XCTAssertEqual(context.insertedModelsArray.count, 2)
        try context.save()
        XCTAssertTrue(context.insertedModelsArray.isEmpty)

        kept.body = "changed"
        context.delete(gone)
        XCTAssertTrue(gone.isDeleted)
        XCTAssertEqual(context.changedModelsArray.map(\.persistentModelID), [kept.persistentModelID])
        XCTAssertEqual(context.deletedModelsArray.map(\.persistentModelID), [gone.persistentModelID])
        try context.save()
        XCTAssertEqual(try context.fetch(FetchDescriptor<Note>()).map(\.title), ["kept"])
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Note>()), 1)
    }

    func testRollbackDiscardsInsertsAndDeletesAndRestoresValues() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let saved = Note(title: "saved", body: "original")
        let deleted = Note(title: "deleted")
        context.insert(saved)
        context.insert(deleted)
        try context.save()

        let unsaved = Note(title: "unsaved")
        context.insert(unsaved)
        saved.body = "scribbled"
        context.delete(deleted)
        context.rollback()

        XCTAssertFalse(context.hasChanges)
        XCTAssertEqual(saved.body, "original")
        XCTAssertFalse(deleted.isDeleted)
        XCTAssertNil(unsaved.modelContext)
        try context.save()
        let titles = try ModelContext(context.container).fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])).map(\.title)
        XCTAssertEqual(titles, ["deleted", "saved"])
    }

    /// Found by `RandomGraphTests`: deleting a changed model took it off the context's changed list,
    /// so a rollback only undeleted it and its unsaved values stayed, neither saved nor undone.
    func testRollbackRestoresTheValuesOfAModelChangedAndThenDeleted() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let note = Note(title: "saved", body: "original")
        context.insert(note)
        try context.save()

        note.body = "scribbled"
        context.delete(note)
        context.rollback()

        XCTAssertFalse(note.isDeleted)
        XCTAssertEqual(note.body, "original")
        XCTAssertFalse(context.hasChanges)
        try context.save()
        XCTAssertEqual(try ModelContext(context.container).fetch(FetchDescriptor<Note>()).map(\.body), ["original"])
    }

    func testDeletingAnUnsavedModelDiscardsIt() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let note = Note(title: "never saved")
        context.insert(note)
        context.delete(note)
        XCTAssertFalse(context.hasChanges)
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Note>()), 0)
    }

    func testFetchIncludesPendingInsertsAndExcludesPendingDeletes() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let b = Note(title: "b")
        context.insert(b)
        try context.save()
        context.insert(Note(title: "a"))
        context.insert(Note(title: "c"))

        let sorted = try context.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)]))
        XCTAssertEqual(sorted.map(\.title), ["a", "b", "c"])
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Note>()), 3)

        context.delete(b)
        XCTAssertEqual(try context.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])).map(\.title), ["a", "c"])
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Note>()), 2)

        var savedOnly = FetchDescriptor<Note>()
        savedOnly.includePendingChanges = false
        XCTAssertEqual(try context.fetch(savedOnly).map(\.title), ["b"])
    }

    func testFetchReflectsUnsavedChangesInItsOrderAndWindow() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let notes = ["a", "b", "c", "d"].map { Note(title: $0) }
        notes.forEach(context.insert)
        try context.save()
        notes[3].title = "0"
        var firstTwo = FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])
        firstTwo.fetchLimit = 2
        XCTAssertEqual(try context.fetch(firstTwo).map(\.title), ["0", "a"])
    }

    func testFetchCountCountsAnEditedModelAsItIsNow() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let notes = ["draft one", "draft two", "final"].map { Note(title: $0) }
        notes.forEach(context.insert)
        try context.save()
        let drafts = FetchDescriptor<Note>(predicate: #Predicate { $0.title.contains("draft") })
        notes[0].title = "published"
        notes[2].title = "draft three"
        XCTAssertEqual(try context.fetch(drafts).map(\.title).sorted(), ["draft three", "draft two"])
        XCTAssertEqual(try context.fetchCount(drafts), 2, "one edit leaves the predicate and one enters it")
        notes[1].title = "published too"
        XCTAssertEqual(try context.fetchCount(drafts), 1)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Note>()), 3)
        try context.save()
        XCTAssertEqual(try ModelContext(context.container).fetchCount(drafts), 1)
    }

    func testFetchCountTakesBackADeletedModelAsItWasSaved() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let notes = ["draft", "final", "draft two"].map { Note(title: $0) }
        notes.forEach(context.insert)
        try context.save()
        let drafts = FetchDescriptor<Note>(predicate: #Predicate { $0.title.contains("draft") })
        // Edited into the predicate, then deleted: its saved row was never counted.
        notes[1].title = "draft again"
        context.delete(notes[1])
        XCTAssertEqual(try context.fetch(drafts).map(\.title).sorted(), ["draft", "draft two"])
        XCTAssertEqual(try context.fetchCount(drafts), 2)
        // Edited out of the predicate, then deleted: the saved row it takes away is a draft.
        notes[2].title = "scrapped"
        context.delete(notes[2])
        XCTAssertEqual(try context.fetchCount(drafts), 1)
    }

    func testAFetchThroughARelationshipSeesTheRelatedModelsUnsavedChanges() throws {
        let context = ModelContext(try makeContainer(SnippetFolder.self))
        let work = SnippetFolder(name: "Work"), home = SnippetFolder(name: "Home")
        for (title, folder) in [("a", work), ("b", home), ("c", work)] {
            let snippet = SnippetItem(title: title)
            snippet.folder = folder
            context.insert(snippet)
        }
        try context.save()
        work.name = "Zoo"
        let inZoo = FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.folder?.name == "Zoo" }, sortBy: [SortDescriptor(\.title)])
        XCTAssertEqual(try context.fetch(inZoo).map(\.title), ["a", "c"], "the folder's new name")
        XCTAssertEqual(try context.fetchCount(inZoo), 2)
        var byFolder = FetchDescriptor<SnippetItem>(sortBy: [SortDescriptor(\.folder?.name), SortDescriptor(\.title)])
        XCTAssertEqual(try context.fetch(byFolder).map(\.title), ["b", "a", "c"], "Home before Zoo")
        byFolder.fetchLimit = 1
        XCTAssertEqual(try context.fetch(byFolder).map(\.title), ["b"])
        context.rollback()
        XCTAssertEqual(try context.fetch(inZoo).map(\.title), [])

        // A tag's snippets changed from the tag's side only.
        let tag = SnippetTag(name: "swift")
        context.insert(tag)
        let snippets = try context.fetch(FetchDescriptor<SnippetItem>(sortBy: [SortDescriptor(\.title)]))
        try context.save()
        tag.snippets.append(snippets[1])
        let tagged = FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.tags.contains { $0.name == "swift" } })
        XCTAssertEqual(try context.fetch(tagged).map(\.title), ["b"])
        XCTAssertEqual(try context.fetchCount(tagged), 1)

        context.rollback()
        XCTAssertEqual(try context.fetch(tagged).map(\.title), [])
    }

    func testSortLimitAndOffsetPageThroughWithoutRepeatsOrGaps() throws {
        let context = ModelContext(try makeContainer(Note.self))
        for index in 0..<23 {
            context.insert(Note(title: "note \(index % 5)", body: "\(index)"))
        }
        try context.save()
        var seen: [String] = []
        var page = FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title, order: .reverse)])
        page.fetchLimit = 5
        for offset in stride(from: 0, to: 30, by: 5) {
            page.fetchOffset = offset
            seen += try context.fetch(page).map(\.body)
        }
        XCTAssertEqual(seen.count, 23)
        XCTAssertEqual(Set(seen).count, 23)
        XCTAssertEqual(try context.fetchCount(page), 0, "the offset is past the end")
    }

    func testOptionalsSortNilFirstWhenForwardAndLastWhenReversed() throws {
        let context = ModelContext(try makeContainer(AllTypes.self))
        for (label, value) in [("two", 2), ("none", nil), ("one", 1)] as [(String, Int?)] {
            let model = AllTypes()
            model.string = label
            model.optionalInt = value
            context.insert(model)
        }
        try context.save()
        let fresh = ModelContext(context.container)
        let forward = try fresh.fetch(FetchDescriptor<AllTypes>(sortBy: [SortDescriptor(\.optionalInt)]))
        XCTAssertEqual(forward.map(\.string), ["none", "one", "two"])
        let reverse = try fresh.fetch(FetchDescriptor<AllTypes>(sortBy: [SortDescriptor(\.optionalInt, order: .reverse)]))
        XCTAssertEqual(reverse.map(\.string), ["two", "one", "none"])
    }

    /// `fetchIdentifiers` named the saved rows that matched: a model edited out of the predicate was
    /// still listed, and one inserted was not.
    func testFetchIdentifiersListsWhatFetchListsWithUnsavedChanges() throws {
        let container = try makeContainer(Note.self)
        let context = ModelContext(container)
        let (kept, edited, deleted) = (Note(title: "a kept"), Note(title: "b edited"), Note(title: "c deleted"))
        [kept, edited, deleted].forEach(context.insert)
        try context.save()

        edited.title = "z moved out"
        context.delete(deleted)
        let added = Note(title: "b added")
        context.insert(added)
        let descriptor = FetchDescriptor<Note>(predicate: #Predicate { $0.title < "x" }, sortBy: [SortDescriptor(\.title)])
        XCTAssertEqual(try context.fetchIdentifiers(descriptor), [kept.persistentModelID, added.persistentModelID])
        XCTAssertEqual(try context.fetchIdentifiers(descriptor), try context.fetch(descriptor).map(\.persistentModelID))
        var saved = descriptor
        saved.includePendingChanges = false
        XCTAssertEqual(try context.fetchIdentifiers(saved), [kept, edited, deleted].map(\.persistentModelID), "as the store holds them")

        try context.save()
        XCTAssertEqual(try context.fetchIdentifiers(descriptor), [kept.persistentModelID, added.persistentModelID], "the key the save gave")
    }

    func testFetchIdentifiersAndModelForIdentifier() throws {
        let container = try makeContainer(Note.self)
        let context = ModelContext(container)
        let note = Note(title: "find me")
        context.insert(note)
        try context.save()

        let identifiers = try context.fetchIdentifiers(FetchDescriptor<Note>())
        XCTAssertEqual(identifiers, [note.persistentModelID])

        XCTAssertTrue(context.model(for: note.persistentModelID) === note)
        XCTAssertTrue((context.registeredModel(for: note.persistentModelID) as Note?) === note)

        let other = ModelContext(container)
        XCTAssertNil(other.registeredModel(for: note.persistentModelID) as Note?)
        let loaded = try XCTUnwrap(other.model(for: note.persistentModelID) as? Note)
        XCTAssertEqual(loaded.title, "find me")
        XCTAssertTrue((other.registeredModel(for: note.persistentModelID) as Note?) === loaded)
    }

    func testModelForAMissingRowIsMarkedDeleted() throws {
        let context = ModelContext(try makeContainer(Note.self))
        let note = Note(title: "short-lived")
        context.insert(note)
        try context.save()
        let identifier = note.persistentModelID
        context.delete(note)
        try context.save()
        let other = ModelContext(context.container)
        XCTAssertTrue(other.model(for: identifier).isDeleted)
    }

    func testDeleteModelWithoutAPredicateRemovesEveryRowAtTheNextSave() throws {
        let context = ModelContext(try makeContainer(Note.self, Label.self))
        context.insert(Note(title: "a"))
        context.insert(Note(title: "b"))
        context.insert(Label(name: "stays"))
        try context.save()
        let loaded = try context.fetch(FetchDescriptor<Note>())

        try context.delete(model: Note.self)
        XCTAssertTrue(loaded.allSatisfy(\.isDeleted))
        XCTAssertEqual(try ModelContext(context.container).fetchCount(FetchDescriptor<Note>()), 2, "nothing is gone before save")
        try context.save()
        XCTAssertEqual(try ModelContext(context.container).fetchCount(FetchDescriptor<Note>()), 0)
        XCTAssertEqual(try ModelContext(context.container).fetchCount(FetchDescriptor<Label>()), 1)
    }

    func testADeleteByPredicateJudgesTheContextsChangedModelsAsTheyAreInMemory() throws {
        let container = try makeContainer(Label.self)
        let context = ModelContext(container)
        let raised = Label(name: "raised", uses: 1)
        let lowered = Label(name: "lowered", uses: 5)
        let rare = Label(name: "rare", uses: 2)
        for label in [raised, lowered, rare] { context.insert(label) }
        try context.save()

        raised.uses = 10    // matched in the store, no longer in memory
        lowered.uses = 2    // matches in memory only
        try context.delete(model: Label.self, where: #Predicate { $0.uses < 3 })
        XCTAssertEqual([raised, lowered, rare].map(\.isDeleted), [false, true, true])
        try context.save()

        let stored = try ModelContext(container).fetch(FetchDescriptor<Label>()).map { "\($0.name)=\($0.uses)" }
        XCTAssertEqual(stored, ["raised=10"], "the change is saved, and the row it took out of the predicate stays")
    }

    func testAModelChangedAfterADeleteByPredicateKeepsItsRowAndItsChange() throws {
        let container = try makeContainer(Label.self)
        let other = ModelContext(container)
        let saved = Label(name: "late", uses: 1)
        other.insert(saved)
        try other.save()

        let context = ModelContext(container)
        try context.delete(model: Label.self, where: #Predicate { $0.uses < 3 })
        // Read after the delete was asked for (it was not in the context then; a fetch hides it now),
        // and changed.
        let late = try XCTUnwrap(context.model(for: saved.persistentModelID) as? Label)
        late.uses = 2
        XCTAssertEqual(try context.fetch(FetchDescriptor<Label>()).map(\.name), ["late"], "listed as it is in memory")
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Label>()), 1)
        try context.save()
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Label>()).map { "\($0.name)=\($0.uses)" }, ["late=2"])
    }

    func testAFetchAfterADeleteByPredicateNoLongerListsTheRowsItWillDelete() throws {
        let container = try makeContainer(Label.self)
        let other = ModelContext(container)
        for (name, uses) in [("one", 1), ("two", 2), ("five", 5), ("nine", 9)] { other.insert(Label(name: name, uses: uses)) }
        try other.save()

        // None of the rows is loaded here: the context knows them only from the store.
        let context = ModelContext(container)
        try context.delete(model: Label.self, where: #Predicate { $0.uses < 3 })
        let byUses = [SortDescriptor(\Label.uses)]
        XCTAssertEqual(try context.fetch(FetchDescriptor<Label>(sortBy: byUses)).map(\.name), ["five", "nine"])
        var firstPage = FetchDescriptor<Label>(sortBy: byUses)
        firstPage.fetchLimit = 1
        XCTAssertEqual(try context.fetch(firstPage).map(\.name), ["five"])
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Label>()), 2)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Label>(predicate: #Predicate { $0.uses < 6 })), 1)
        XCTAssertEqual(try context.fetchIdentifiers(FetchDescriptor<Label>()).count, 2)
        var saved = FetchDescriptor<Label>()
        saved.includePendingChanges = false
        XCTAssertEqual(try context.fetchCount(saved), 4, "the store is unchanged until the save")
        XCTAssertEqual(try context.fetch(saved).count, 4)

        context.rollback()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Label>()), 4, "a rollback brings them back")
        XCTAssertEqual(try context.fetch(FetchDescriptor<Label>()).count, 4)

        try context.delete(model: Label.self, where: #Predicate { $0.uses < 3 })
        try context.save()
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Label>(sortBy: byUses)).map(\.name), ["five", "nine"])
        XCTAssertEqual(try context.fetch(FetchDescriptor<Label>(sortBy: byUses)).map(\.name), ["five", "nine"])
    }

    func testTransactionSavesWhatTheBlockDid() throws {
        let context = ModelContext(try makeContainer(Note.self))
        try context.transaction {
            context.insert(Note(title: "inside"))
        }
        XCTAssertFalse(context.hasChanges)
        XCTAssertEqual(try ModelContext(context.container).fetchCount(FetchDescriptor<Note>()), 1)
    }

    func testASaveThatFailsWritesNothing() throws {
        let context = ModelContext(try makeContainer(Label.self))
        context.insert(Label(name: "taken"))
        try context.save()
        let other = Label(name: "free")
        context.insert(other)
        try context.save()

        context.insert(Label(name: "new one"))
        other.name = "taken"
        XCTAssertThrowsError(try context.save())
        let names = try rawRows("SELECT name FROM Label ORDER BY name").map { $0["name"] as String }
        XCTAssertEqual(names, ["free", "taken"], "the insert of the failed save was rolled back with it")
    }

    func testEnumerateVisitsEveryModelInBatches() throws {
        let context = ModelContext(try makeContainer(Note.self))
        for index in 0..<25 { context.insert(Note(title: String(format: "%02d", index))) }
        try context.save()

        let reader = ModelContext(context.container)
        var titles: [String] = []
        try reader.enumerate(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)]), batchSize: 7) { note in
            titles.append(note.title)
        }
        XCTAssertEqual(titles, (0..<25).map { String(format: "%02d", $0) })
    }

    func testEnumerateRefusesUnsavedMutationsUnlessAllowed() throws {
        let context = ModelContext(try makeContainer(Note.self))
        for index in 0..<4 { context.insert(Note(title: "\(index)")) }
        try context.save()

        let strict = ModelContext(context.container)
        XCTAssertThrowsError(try strict.enumerate(FetchDescriptor<Note>(), batchSize: 2) { $0.body = "touched" }) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .escapingMutation)
        }

        let lenient = ModelContext(context.container)
        try lenient.enumerate(FetchDescriptor<Note>(), batchSize: 2, allowEscapingMutations: true) { $0.body = "touched" }
        try lenient.save()
        let bodies = try ModelContext(context.container).fetch(FetchDescriptor<Note>()).map(\.body)
        XCTAssertEqual(bodies, Array(repeating: "touched", count: 4))
    }

    /// A block that saves a change moving its model out of the match (marked done, or deleted) must
    /// still meet every model once: the matches are settled before the first batch.
    func testEnumerateMeetsEveryModelWhenTheBlockSavesChangesToWhatMatches() throws {
        let context = ModelContext(try makeContainer(Note.self))
        for index in 0..<10 { context.insert(Note(title: String(format: "%02d", index))) }
        try context.save()
        let expected = (0..<10).map { String(format: "%02d", $0) }
        let notDone = FetchDescriptor<Note>(predicate: #Predicate { $0.body == "" }, sortBy: [SortDescriptor(\.title)])

        let marking = ModelContext(context.container)
        var marked: [String] = []
        try marking.enumerate(notDone, batchSize: 3) { note in
            marked.append(note.title)
            note.body = "done"
            try marking.save()
        }
        XCTAssertEqual(marked, expected)
        XCTAssertEqual(try ModelContext(context.container).fetchCount(notDone), 0)

        let resetting = ModelContext(context.container)
        try resetting.enumerate(FetchDescriptor<Note>(), allowEscapingMutations: true) { $0.body = "" }
        try resetting.save()
        let deleting = ModelContext(context.container)
        var deleted: [String] = []
        try deleting.enumerate(notDone, batchSize: 3) { note in
            deleted.append(note.title)
            deleting.delete(note)
            try deleting.save()
        }
        XCTAssertEqual(deleted, expected)
        XCTAssertEqual(try ModelContext(context.container).fetchCount(FetchDescriptor<Note>()), 0)
    }

    /// A model the block deletes before its turn is not met; the rest are, with the descriptor's offset and limit.
    func testEnumerateSkipsAModelDeletedBeforeItsTurnAndKeepsOffsetAndLimit() throws {
        let context = ModelContext(try makeContainer(Note.self))
        for index in 0..<10 { context.insert(Note(title: String(format: "%02d", index))) }
        try context.save()
        var window = FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])
        window.fetchOffset = 2
        window.fetchLimit = 6

        let reader = ModelContext(context.container)
        var met: [String] = []
        try reader.enumerate(window, batchSize: 2) { note in
            met.append(note.title)
            if note.title == "02", let later = try reader.fetch(FetchDescriptor<Note>(predicate: #Predicate { $0.title == "05" })).first {
                reader.delete(later)
                try reader.save()
            }
        }
        XCTAssertEqual(met, ["02", "03", "04", "06", "07"])
    }

    /// As `fetch` does with `includePendingChanges` (the default), unsaved inserts are met in their place.
    func testEnumerateMeetsUnsavedInsertsAsFetchListsThem() throws {
        let context = ModelContext(try makeContainer(Note.self))
        for title in ["a", "c", "e"] { context.insert(Note(title: title)) }
        try context.save()
        for title in ["b", "d", "f"] { context.insert(Note(title: title)) }
        let sorted = FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])

        var met: [String] = []
        try context.enumerate(sorted, batchSize: 2) { met.append($0.title) }
        XCTAssertEqual(met, ["a", "b", "c", "d", "e", "f"])
        XCTAssertEqual(met, try context.fetch(sorted).map(\.title))
        try context.save()
        XCTAssertEqual(try ModelContext(context.container).fetchCount(sorted), 6, "the inserts stayed in the context")
    }

    /// A model inserted before the walk, which a save in the block registers, is still the context's
    /// afterwards: it was let go with the batch, and a later edit of it was never saved.
    func testEnumerateKeepsAModelInsertedBeforeItInTheContext() throws {
        let context = ModelContext(try makeContainer(Note.self))
        for title in ["a", "c"] { context.insert(Note(title: title)) }
        try context.save()
        let inserted = Note(title: "b")
        context.insert(inserted)
        var met: [String] = []
        try context.enumerate(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)]), batchSize: 1) { note in
            met.append(note.title)
            note.body = "seen"
            try context.save()
        }
        XCTAssertEqual(met, ["a", "b", "c"])
        XCTAssertTrue(inserted.modelContext === context)
        inserted.title = "b, edited after"
        try context.save()
        XCTAssertEqual(try ModelContext(context.container).fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])).map(\.title),
                       ["a", "b, edited after", "c"])
    }

    func testLetAndInferredTypePropertiesArePersistedAndChangesToThemAreSaved() throws {
        do {
            let context = ModelContext(try makeContainer(Account.self))
            let account = Account(number: "ACC-1")
            account.balance = Decimal(string: "10.50")!
            context.insert(account)
            try context.save()
            account.openedAt = Date(timeIntervalSince1970: 2_000)
            XCTAssertTrue(context.hasChanges, "a change to a var with an inferred type is seen at save")
            try context.save()
        }
        let account = try XCTUnwrap(ModelContext(try makeContainer(Account.self)).fetch(FetchDescriptor<Account>()).first)
        XCTAssertEqual(account.number, "ACC-1")
        XCTAssertEqual(account.openedAt, Date(timeIntervalSince1970: 2_000))
        XCTAssertEqual(account.balance, Decimal(string: "10.50"))
    }

    func testAStoredPropertyNamedIDIsAnOrdinaryAttribute() throws {
        let id = UUID()
        do {
            let context = ModelContext(try makeContainer(Ticket.self))
            context.insert(Ticket(id: id, subject: "help"))
            try context.save()
        }
        let ticket = try XCTUnwrap(ModelContext(try makeContainer(Ticket.self)).fetch(FetchDescriptor<Ticket>()).first)
        XCTAssertEqual(ticket.id, id)
        XCTAssertEqual(ticket.subject, "help")
    }

    func testModelsNestedInAVersionedSchemaAndPublicModelsWork() throws {
        let context = ModelContext(try ModelContainer(
            for: Schema(versionedSchema: LibrarySchemaV1.self), configurations: ModelConfiguration(url: storeURL)))
        context.insert(LibrarySchemaV1.Book(title: "Dune"))
        try context.save()
        XCTAssertEqual(try context.fetch(FetchDescriptor<LibrarySchemaV1.Book>()).first?.title, "Dune")

        let publicContext = ModelContext(try ModelContainer(for: PublicThing.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true)))
        publicContext.insert(PublicThing(name: "visible"))
        try publicContext.save()
        XCTAssertEqual(try publicContext.fetchCount(FetchDescriptor<PublicThing>()), 1)
    }

    func testFetchingATypeOutsideTheSchemaThrowsNamingIt() throws {
        let context = ModelContext(try makeContainer(Note.self))
        XCTAssertThrowsError(try context.fetch(FetchDescriptor<Label>())) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unknownEntity)
            XCTAssertTrue("\(error)".contains("Label"))
        }
    }

    func testInsertingAModelOwnedByAnotherContextIsReportedBySave() throws {
        let container = try makeContainer(Note.self)
        let first = ModelContext(container)
        let note = Note(title: "mine")
        first.insert(note)
        let second = ModelContext(container)
        second.insert(note)
        XCTAssertThrowsError(try second.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .missingModelContext)
        }
    }

    func testModelsAreObservable() throws {
        let note = Note(title: "watched")
        let changed = expectation(description: "title change observed")
        withObservationTracking {
            _ = note.title
        } onChange: {
            changed.fulfill()
        }
        note.title = "changed"
        wait(for: [changed], timeout: 1)
    }
}
