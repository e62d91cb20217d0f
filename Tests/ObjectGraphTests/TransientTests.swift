import Foundation
import ObjectGraph
import XCTest

final class TransientTests: StoreTestCase {
    func testTransientPropertiesAreNotStoredAndResetAfterAFetch() throws {
        do {
            let context = ModelContext(try makeContainer(Note.self, Draft.self))
            let note = Note(title: "counted")
            note.wordCount = 12
            context.insert(note)
            let draft = Draft(text: "typing")
            draft.cursor = 4
            draft.selection = "typ"
            context.insert(draft)
            try context.save()
            XCTAssertEqual(note.wordCount, 12, "in memory the value stays")
            XCTAssertEqual(draft.cursor, 4)
        }
        let columns = try rawRows("SELECT name FROM pragma_table_info('Note')").map { $0["name"] as String }
        XCTAssertFalse(columns.contains("wordCount"))
        let draftColumns = try rawRows("SELECT name FROM pragma_table_info('Draft')").map { $0["name"] as String }
        XCTAssertFalse(draftColumns.contains("cursor"))
        XCTAssertFalse(draftColumns.contains("selection"))

        let context = ModelContext(try makeContainer(Note.self, Draft.self))
        XCTAssertEqual(try context.fetch(FetchDescriptor<Note>()).first?.wordCount, 0)
        let draft = try XCTUnwrap(context.fetch(FetchDescriptor<Draft>()).first)
        XCTAssertEqual(draft.text, "typing")
        XCTAssertEqual(draft.cursor, 0)
        XCTAssertNil(draft.selection)
    }

    func testTransientPropertiesAreNotInTheSchema() throws {
        let entity = try XCTUnwrap(Schema(Note.self).entity(for: Note.self))
        XCTAssertNil(entity.attributesByName["wordCount"])
        let draft = try XCTUnwrap(Schema(Draft.self).entity(for: Draft.self))
        XCTAssertTrue(draft.attributesByName["cursor"]?.isTransient ?? false)
        XCTAssertFalse(draft.storedProperties.contains { $0.name == "cursor" })
    }
}
