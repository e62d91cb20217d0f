import Foundation
@testable import ObjectGraph
import XCTest

/// Two contexts of one container (two requests, two tabs) fetching, editing, inserting, deleting,
/// saving and rolling back notes in random turns, against a plain model of what README promises: a
/// save that would overwrite or delete a change the other context saved since this one read the note
/// throws `.saveConflict` and writes nothing; a fetch refreshes the notes a context has not changed
/// and keeps its own changes; a fetch shows the context's unsaved inserts and changes and hides its
/// unsaved deletes; `delete(model:where:)` deletes the context's matching models at once (and hides
/// the store's matching rows it had not read) and, at the save, the store's matching rows but for
/// those of models the context has changed (a row it deletes so is no conflict). Every check also reads the store through a fresh context and another container.
///
/// `RANDOM_CONTEXTS_SEED` and `RANDOM_CONTEXTS_STEPS` run other sequences, for hunting.
final class RandomContextsTests: StoreTestCase {
    /// What one context holds, in the plain model.
    struct Side {
        let context: ModelContext
        /// The notes it holds, by title: the body and version it last read or saved.
        var base: [String: (body: String, version: Int)] = [:]
        var models: [String: Note] = [:]
        var edits: [String: String] = [:]
        var inserts: [String: String] = [:]
        var deletes: Set<String> = []
        /// Whether `delete(model:where:)` of the edited notes waits for the save.
        var deletesEdited = false
        /// The stored notes it matched that the context had not read: hidden from its fetches.
        var awaitingDelete: Set<String> = []

        /// What the context's model of a note shows.
        func shownBody(_ title: String) -> String? { edits[title] ?? inserts[title] ?? base[title]?.body }

        /// What `context.delete(note)` does, in the plain model.
        mutating func delete(_ title: String) {
            if inserts.removeValue(forKey: title) != nil {
                models[title] = nil
            } else {
                deletes.insert(title)
                edits[title] = nil
            }
        }

        /// Forgets what was not saved, after a rollback.
        mutating func discardChanges() {
            for title in inserts.keys { models[title] = nil }
            edits = [:]
            inserts = [:]
            deletes = []
            deletesEdited = false
            awaitingDelete = []
        }
    }


    private func run(seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        let url = folder.appendingPathComponent("contexts-\(seed).store")
        let container = try ModelContainer(for: Note.self, configurations: ModelConfiguration(url: url))
        let otherProcess = try ModelContainer(for: Note.self, configurations: ModelConfiguration(url: url))
        var sides = [Side(context: ModelContext(container)), Side(context: ModelContext(container))]
        // The store: each note's body and the number of saves that changed it.
        var stored: [String: (body: String, version: Int)] = [:]
        var nextName = 0
        var log: [String] = []

        func fail(_ message: String) throws -> Never {
            throw RandomRunDiverged.reported(message, seed: seed, log: log)
        }
        func checkStore(_ moment: String) throws {
            let expected = stored.mapValues(\.body)
            for (reader, context) in [("a fresh context", ModelContext(container)), ("another container", ModelContext(otherProcess))] {
                let seen = Dictionary(uniqueKeysWithValues: try context.fetch(FetchDescriptor<Note>()).map { ($0.title, $0.body) })
                if seen != expected { try fail("\(moment), \(reader): \(seen.sorted { $0.key < $1.key }) vs \(expected.sorted { $0.key < $1.key })") }
            }
        }

        for step in 0..<steps {
            let which = Int.random(in: 0..<2, using: &random)
            var side = sides[which]
            let moment = "step \(step), context \(which)"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<20:
                // A fetch of every note: what it lists, and what each shows.
                let fetched = try side.context.fetch(FetchDescriptor<Note>())
                for note in fetched where side.edits[note.title] == nil && side.inserts[note.title] == nil {
                    if let current = stored[note.title] { side.base[note.title] = current }
                    side.models[note.title] = note
                }
                let listed = Set(fetched.map(\.title))
                // A note this context changed is listed even when another context has deleted its row
                // since: the context's own view wins until it saves (which then conflicts).
                let expected = Set(stored.keys).union(side.inserts.keys).union(side.edits.keys)
                    .subtracting(side.deletes).subtracting(side.awaitingDelete)
                if listed != expected { try fail("\(moment), fetch lists \(listed.sorted()) vs \(expected.sorted())") }
                for note in fetched where note.body != side.shownBody(note.title) {
                    try fail("\(moment), fetch shows \(note.title) = \(note.body) vs \(side.shownBody(note.title) ?? "nothing")")
                }
                log.append("\(which) fetch")
            case 20..<45:
                let editable = side.models.keys.filter { !side.deletes.contains($0) }
                guard let title = random.pick(editable), let note = side.models[title] else { continue }
                let body = "\(title) edit \(step)"
                note.body = body
                if side.inserts[title] != nil { side.inserts[title] = body } else { side.edits[title] = body }
                log.append("\(which) edit \(title)")
            case 45..<57:
                nextName += 1
                let title = "n\(nextName)"
                let note = Note(title: title, body: "\(title) new")
                side.context.insert(note)
                side.models[title] = note
                side.inserts[title] = note.body
                log.append("\(which) insert \(title)")
            case 57..<64:
                let deletable = side.models.keys.filter { !side.deletes.contains($0) }
                guard let title = random.pick(deletable), let note = side.models[title] else { continue }
                side.context.delete(note)
                side.delete(title)
                log.append("\(which) delete \(title)")
            case 64..<67:
                // Every edited note: the context's own as they show now, deleted at once; at the save,
                // the rest of the store's, but for the notes the context has changed by then.
                try side.context.delete(model: Note.self, where: #Predicate { $0.body.contains("edit") })
                for title in side.models.keys where !side.deletes.contains(title) && side.shownBody(title)?.contains("edit") == true {
                    side.delete(title)
                }
                side.deletesEdited = true
                for (title, note) in stored where note.body.contains("edit") && side.models[title] == nil {
                    side.awaitingDelete.insert(title)
                }
                log.append("\(which) delete edited notes")
            case 67..<90:
                // A save conflicts when a note it changes or deletes was changed or deleted in the
                // store since the context read it; a delete of a note already deleted does not.
                // A row the pending `delete(model:where:)` deletes in the store (it runs first) is no
                // conflict: the delete asked for it as it is now.
                let deletedByPredicate = { (title: String) in
                    side.deletesEdited && side.edits[title] == nil && stored[title]?.body.contains("edit") == true
                }
                let conflicts = side.edits.keys.contains { stored[$0]?.version != side.base[$0]?.version }
                    || side.deletes.contains {
                        stored[$0] != nil && stored[$0]?.version != side.base[$0]?.version && !deletedByPredicate($0)
                    }
                do {
                    try side.context.save()
                    if conflicts { try fail("\(moment), the save went through a conflict") }
                    if side.deletesEdited {
                        for (title, note) in stored where note.body.contains("edit") && side.edits[title] == nil {
                            stored[title] = nil
                            side.base[title] = nil
                            side.models[title] = nil
                        }
                    }
                    for (title, body) in side.edits { stored[title] = (body, (stored[title]?.version ?? 0) + 1) }
                    for (title, body) in side.inserts { stored[title] = (body, 0) }
                    for title in side.deletes {
                        stored[title] = nil
                        side.base[title] = nil
                        side.models[title] = nil
                    }
                    for title in Set(side.edits.keys).union(side.inserts.keys) { side.base[title] = stored[title] }
                    side.edits = [:]
                    side.inserts = [:]
                    side.deletes = []
                    side.deletesEdited = false
                    side.awaitingDelete = []
                    log.append("\(which) save")
                } catch let error as SwiftDataError where error.code == .saveConflict {
                    if !conflicts { try fail("\(moment), the save threw \(error)") }
                    // What SnippetBox does with a conflict: start again from what is stored.
                    side.context.rollback()
                    side.discardChanges()
                    log.append("\(which) save: conflict, rolled back")
                }
                try checkStore(moment)
            default:
                side.context.rollback()
                side.discardChanges()
                log.append("\(which) rollback")
                for (title, note) in side.models where note.body != side.shownBody(title) {
                    try fail("\(moment), after a rollback \(title) = \(note.body) vs \(side.shownBody(title) ?? "nothing")")
                }
            }
            sides[which] = side
        }
        try checkStore("the end")
    }

    func testTwoContextsEditingInTurnMatchThePlainModel() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_CONTEXTS", seeds: [20_261_127, 3, 77, 2, 11], steps: 500) { try run(seed: $0, steps: $1) }
    }
}
