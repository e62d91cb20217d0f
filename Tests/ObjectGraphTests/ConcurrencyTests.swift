import Foundation
import GRDB
import ObjectGraph
import XCTest

final class ConcurrencyTests: StoreTestCase {
    func testTheSecondOfTwoConflictingEditsThrowsInsteadOfLosingTheFirst() throws {
        let container = try makeContainer(Note.self)
        let setup = ModelContext(container)
        setup.insert(Note(title: "original"))
        try setup.save()

        let firstTab = ModelContext(container), secondTab = ModelContext(container)
        let first = try XCTUnwrap(firstTab.fetch(FetchDescriptor<Note>()).first)
        let second = try XCTUnwrap(secondTab.fetch(FetchDescriptor<Note>()).first)
        first.title = "first edit"
        second.body = "second edit"
        try firstTab.save()
        XCTAssertThrowsError(try secondTab.save()) { error in
            let error = error as? SwiftDataError
            XCTAssertEqual(error?.code, .saveConflict)
            XCTAssertEqual(error?.entityName, "Note")
            XCTAssertTrue(error?.message.contains("another context") ?? false)
        }
        let stored = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<Note>()).first)
        XCTAssertEqual(stored.title, "first edit")
        XCTAssertEqual(stored.body, "", "the conflicting save wrote nothing")

        secondTab.rollback()
        let refreshed = try XCTUnwrap(secondTab.fetch(FetchDescriptor<Note>()).first)
        XCTAssertTrue(refreshed === second)
        XCTAssertEqual(refreshed.title, "first edit", "after rollback the next fetch brings the newer values")
        refreshed.body = "second edit, redone"
        try secondTab.save()
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Note>()).first?.body, "second edit, redone")
    }

    /// A many-to-many relationship lives in a join table, whose rows had no version: the second of two
    /// tabs that changed one snippet's tags replaced the set, and the first tab's tag was gone without
    /// a word. Changing a model's relationship now changes its version, as changing an attribute does.
    func testTheSecondOfTwoTabsChangingOneSnippetsTagsThrowsInsteadOfLosingTheFirst() throws {
        let container = try makeContainer(SnippetFolder.self, SnippetItem.self, SnippetTag.self)
        let setup = ModelContext(container)
        let snippet = SnippetItem(title: "query")
        setup.insert(snippet)
        for name in ["sql", "swift", "shell"] { setup.insert(SnippetTag(name: name)) }
        snippet.tags = [try tag("sql", in: setup)]
        try setup.save()

        let firstTab = ModelContext(container), secondTab = ModelContext(container)
        let inFirst = try XCTUnwrap(firstTab.fetch(FetchDescriptor<SnippetItem>()).first)
        let inSecond = try XCTUnwrap(secondTab.fetch(FetchDescriptor<SnippetItem>()).first)
        XCTAssertEqual(inSecond.tags.map(\.name), ["sql"])
        inFirst.tags.append(try tag("swift", in: firstTab))
        try firstTab.save()
        inSecond.tags.append(try tag("shell", in: secondTab))
        XCTAssertThrowsError(try secondTab.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .saveConflict, "\(error)")
        }
        XCTAssertEqual(try storedTagNames(of: "query", in: container), ["sql", "swift"], "the first tab's tag stays")

        secondTab.rollback()
        let refreshed = try XCTUnwrap(secondTab.fetch(FetchDescriptor<SnippetItem>()).first)
        XCTAssertEqual(refreshed.tags.map(\.name), ["sql", "swift"], "the next fetch brings the other tab's tags")
        refreshed.tags.append(try tag("shell", in: secondTab))
        try secondTab.save()
        XCTAssertEqual(try storedTagNames(of: "query", in: container), ["sql", "swift", "shell"])
    }

    /// Joining a tag through the tag's side, without loading the snippet's tags, adds one join row and
    /// removes none: it loses nothing of another tab's, so it is no conflict, but it still changes the
    /// snippet's version, so that a tab holding the snippet's old tags cannot then write them back.
    func testTaggingThroughTheTagsSideChangesTheSnippetsVersionWithoutConflicting() throws {
        let container = try makeContainer(SnippetFolder.self, SnippetItem.self, SnippetTag.self)
        let setup = ModelContext(container)
        setup.insert(SnippetItem(title: "query"))
        for name in ["sql", "swift", "shell"] { setup.insert(SnippetTag(name: name)) }
        try setup.save()

        let holder = ModelContext(container), tagger = ModelContext(container), editor = ModelContext(container)
        let held = try XCTUnwrap(holder.fetch(FetchDescriptor<SnippetItem>()).first)
        XCTAssertEqual(held.tags.map(\.name), [])
        let inEditor = try XCTUnwrap(editor.fetch(FetchDescriptor<SnippetItem>()).first)
        inEditor.title = "query, renamed"
        try editor.save()

        // The tagger read the snippet before the rename, and adds it to a tag from the tag's side.
        let snippetInTagger = try XCTUnwrap(tagger.fetch(FetchDescriptor<SnippetItem>()).first)
        try tag("swift", in: tagger).snippets.append(snippetInTagger)
        try tagger.save()
        XCTAssertEqual(try storedTagNames(of: "query, renamed", in: container), ["swift"])

        held.tags.append(try tag("shell", in: holder))
        XCTAssertThrowsError(try holder.save(), "the holder's view of the tags is older than the store's") { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .saveConflict, "\(error)")
        }
        XCTAssertEqual(try storedTagNames(of: "query, renamed", in: container), ["swift"])
    }

    /// A folder's snippets live in the snippets' rows, and a tag's in join rows the snippets' side
    /// writes: another context's save changes them without changing the folder's or the tag's row. A
    /// long-lived context (an app's main context, next to a background import) kept the arrays it had
    /// loaded for good, through every fetch. A fetch now reads them again once the store has moved on.
    func testAFetchShowsAnotherContextsChangesToAFoldersAndATagsSnippets() throws {
        let container = try makeContainer(SnippetFolder.self, SnippetItem.self, SnippetTag.self)
        let setup = ModelContext(container)
        let inbox = SnippetFolder(name: "inbox")
        let first = SnippetItem(title: "first")
        let sql = SnippetTag(name: "sql")
        for model in [inbox, first, sql] as [any PersistentModel] { setup.insert(model) }
        first.folder = inbox
        first.tags = [sql]
        try setup.save()

        let main = ModelContext(container)
        let folder = try XCTUnwrap(main.fetch(FetchDescriptor<SnippetFolder>()).first)
        let label = try tag("sql", in: main)
        XCTAssertEqual(folder.snippets.map(\.title), ["first"])
        XCTAssertEqual(label.snippets.map(\.title), ["first"])

        let background = ModelContext(container)
        let second = SnippetItem(title: "second")
        background.insert(second)
        second.folder = try XCTUnwrap(background.fetch(FetchDescriptor<SnippetFolder>()).first)
        second.tags = [try tag("sql", in: background)]
        try background.save()

        XCTAssertEqual(folder.snippets.map(\.title), ["first"], "a held model keeps its values until the context fetches again")
        XCTAssertTrue(try main.fetch(FetchDescriptor<SnippetFolder>()).first === folder)
        XCTAssertEqual(folder.snippets.map(\.title).sorted(), ["first", "second"])
        XCTAssertTrue(try tag("sql", in: main) === label)
        XCTAssertEqual(label.snippets.map(\.title).sorted(), ["first", "second"])

        // Taken out from the snippets' side, by another process.
        let otherProcess = ModelContext(try ModelContainer(
            for: SnippetFolder.self, SnippetItem.self, SnippetTag.self, configurations: ModelConfiguration(url: container.configurations[0].url)))
        let firstThere = try XCTUnwrap(otherProcess.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == "first" })).first)
        firstThere.folder = nil
        firstThere.tags = []
        try otherProcess.save()
        _ = try main.fetch(FetchDescriptor<SnippetFolder>())
        _ = try main.fetch(FetchDescriptor<SnippetTag>())
        XCTAssertEqual(folder.snippets.map(\.title), ["second"])
        XCTAssertEqual(label.snippets.map(\.title), ["second"])
    }

    /// Reading a folder's snippets again must not lose the context's own unsaved changes to them.
    func testAFetchAfterAnotherContextsSaveKeepsThisContextsUnsavedMembers() throws {
        let container = try makeContainer(SnippetFolder.self, SnippetItem.self, SnippetTag.self)
        let setup = ModelContext(container)
        setup.insert(SnippetFolder(name: "inbox"))
        setup.insert(SnippetTag(name: "sql"))
        try setup.save()

        let main = ModelContext(container)
        let folder = try XCTUnwrap(main.fetch(FetchDescriptor<SnippetFolder>()).first)
        let label = try tag("sql", in: main)
        XCTAssertEqual(folder.snippets.count + label.snippets.count, 0)
        let draft = SnippetItem(title: "draft")
        main.insert(draft)
        draft.folder = folder
        draft.tags = [label]

        let other = ModelContext(container)
        other.insert(SnippetItem(title: "elsewhere"))
        try other.save()
        XCTAssertTrue(try main.fetch(FetchDescriptor<SnippetFolder>()).first === folder)
        XCTAssertTrue(try tag("sql", in: main) === label)
        XCTAssertEqual(folder.snippets.map(\.title), ["draft"])
        XCTAssertEqual(label.snippets.map(\.title), ["draft"])
        try main.save()
        XCTAssertEqual(try storedTagNames(of: "draft", in: container), ["sql"])
    }

    private func tag(_ name: String, in context: ModelContext) throws -> SnippetTag {
        try XCTUnwrap(context.fetch(FetchDescriptor<SnippetTag>(predicate: #Predicate { $0.name == name })).first)
    }

    private func storedTagNames(of title: String, in container: ModelContainer) throws -> [String] {
        let snippet = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == title })).first)
        return snippet.tags.map(\.name)
    }

    func testAnUnchangedModelIsRefreshedByTheNextFetch() throws {
        let container = try makeContainer(Note.self)
        let reader = ModelContext(container)
        let writer = ModelContext(container)
        writer.insert(Note(title: "v1"))
        try writer.save()
        let held = try XCTUnwrap(reader.fetch(FetchDescriptor<Note>()).first)

        try XCTUnwrap(writer.fetch(FetchDescriptor<Note>()).first).title = "v2"
        try writer.save()
        XCTAssertEqual(held.title, "v1", "a held model keeps its values until the context fetches again")
        _ = try reader.fetch(FetchDescriptor<Note>())
        XCTAssertEqual(held.title, "v2")
        held.title = "v3"
        try reader.save()
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Note>()).first?.title, "v3")
    }

    func testADeleteByAnotherContextMakesAnEditFailClearly() throws {
        let container = try makeContainer(Note.self)
        let a = ModelContext(container), b = ModelContext(container)
        a.insert(Note(title: "doomed"))
        try a.save()
        let inB = try XCTUnwrap(b.fetch(FetchDescriptor<Note>()).first)
        a.delete(try XCTUnwrap(a.fetch(FetchDescriptor<Note>()).first))
        try a.save()
        inB.title = "edited"
        XCTAssertThrowsError(try b.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .saveConflict)
            XCTAssertTrue("\(error)".contains("deleted"), "\(error)")
        }
    }

    /// A delete is a change too: deleting a model another context changed since this one read it
    /// threw away that change without a word. It now fails like a conflicting edit, deleting nothing.
    func testDeletingAModelAnotherContextChangedSinceThrowsInsteadOfLosingTheChange() throws {
        let container = try makeContainer(Note.self)
        let setup = ModelContext(container)
        setup.insert(Note(title: "shared"))
        setup.insert(Note(title: "other"))
        try setup.save()

        let editor = ModelContext(container), remover = ModelContext(container)
        let edited = try XCTUnwrap(editor.fetch(FetchDescriptor<Note>(predicate: #Predicate { $0.title == "shared" })).first)
        let stale = try remover.fetch(FetchDescriptor<Note>())
        edited.body = "written after the other context read it"
        try editor.save()
        for note in stale { remover.delete(note) }
        XCTAssertThrowsError(try remover.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .saveConflict)
            XCTAssertTrue("\(error)".contains("changed by another context"), "\(error)")
        }
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.title)])).map(\.title),
                       ["other", "shared"], "the failed save deleted nothing")

        // Once it has seen the change, the delete goes through; a row another context already
        // deleted is no conflict (nothing of anyone's is lost).
        remover.rollback()
        let fresh = try remover.fetch(FetchDescriptor<Note>())
        let other = try XCTUnwrap(fresh.first { $0.title == "other" })
        let alsoDeleted = ModelContext(container)
        alsoDeleted.delete(try XCTUnwrap(alsoDeleted.fetch(FetchDescriptor<Note>(predicate: #Predicate { $0.title == "other" })).first))
        try alsoDeleted.save()
        for note in fresh { remover.delete(note) }
        try remover.save()
        XCTAssertTrue(other.isDeleted)
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<Note>()), 0)
    }

    func testManyContextsWritingAtOnceLoseNothing() async throws {
        let container = try makeContainer(Note.self)
        let deadline = Date().addingTimeInterval(2)
        let expected = try await withThrowingTaskGroup(of: [String].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var titles: [String] = []
                    var round = 0
                    while Date() < deadline && round < 400 {
                        let context = ModelContext(container)
                        let title = "task\(task)-\(round)"
                        let note = Note(title: title)
                        context.insert(note)
                        try context.save()
                        note.body = "updated by \(task)"
                        try context.save()
                        _ = try context.fetchCount(FetchDescriptor<Note>())
                        titles.append(title)
                        round += 1
                    }
                    return titles
                }
            }
            var all: [String] = []
            for try await titles in group { all += titles }
            return all
        }
        let notes = try ModelContext(container).fetch(FetchDescriptor<Note>())
        XCTAssertEqual(Set(notes.map(\.title)), Set(expected))
        XCTAssertEqual(notes.count, expected.count)
        XCTAssertTrue(notes.allSatisfy { $0.body.hasPrefix("updated by ") })
        XCTAssertGreaterThan(expected.count, 8)
        XCTAssertEqual(try rawRows("PRAGMA integrity_check").first?[0] as String?, "ok")
    }

    func testAModelActorImportsWhileAnotherContextReads() async throws {
        let container = try makeContainer(Note.self)
        let importer = BulkImporter(modelContainer: container)
        async let imported = importer.importNotes(count: 10_000)
        let reader = ModelContext(container)
        var seenWhileImporting: [Int] = []
        for _ in 0..<5 {
            seenWhileImporting.append(try reader.fetchCount(FetchDescriptor<Note>()))
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        let count = try await imported
        XCTAssertEqual(count, 10_000)
        XCTAssertTrue(seenWhileImporting.allSatisfy { $0 == 0 || $0 == 10_000 }, "a reader sees all of a save or none of it")
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor<Note>()), 10_000)
        let last = try reader.fetch(FetchDescriptor<Note>(predicate: #Predicate { $0.title == "import 9999" }))
        XCTAssertEqual(last.count, 1)
    }
}

@ModelActor
actor BulkImporter {
    func importNotes(count: Int) throws -> Int {
        for index in 0..<count {
            modelContext.insert(Note(title: "import \(index)"))
        }
        try modelContext.save()
        return try modelContext.fetchCount(FetchDescriptor<Note>())
    }
}
