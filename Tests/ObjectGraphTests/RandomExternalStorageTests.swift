import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// A poster: a unique name, and an image that goes to a file of its own when it is large.
@Model final class Poster {
    @Attribute(.unique) var name: String
    var revision: Int
    @Attribute(.externalStorage) var image: Data?

    init(name: String, revision: Int, image: Data?) {
        self.name = name
        self.revision = revision
        self.image = image
    }
}

/// A long-lived context edits posters with large and small images (inserts, new images, cleared
/// images, revisions, deletes, deletes by predicate, inserts that take over a row another process
/// added under the same name), saves and rolls back, while another process (another container on
/// the same file) adds, edits and deletes posters between its steps. Checked against a plain model
/// of what README promises:
///
/// - a save that would overwrite or delete a poster another process changed since the context read
///   it throws `.saveConflict` and writes nothing; one that updates a poster another process
///   deleted throws too; deleting a poster already deleted is no conflict;
/// - an insert whose unique name a saved row holds takes that row over, its values and image
///   replacing the row's;
/// - a fetch refreshes the posters the context has not changed, and leaves a large image in its
///   file until the property is read: by the file the row named when it was read; a file another
///   process replaced since reads as the row is now, and one whose row it deleted as no image (which
///   is no error of the next save's).
///
/// After every save, conflict, rollback and write of the other process: the store, read by another
/// container, holds exactly the plain model's posters and images; and the folder of external files
/// holds exactly the files the rows name, none left behind by a replaced, cleared, deleted,
/// taken-over or conflicting image, none missing. `RANDOM_EXTERNAL_SEED` and `RANDOM_EXTERNAL_STEPS`
/// run other sequences.
final class RandomExternalStorageTests: StoreTestCase {
    /// An image of the plain model: which bytes, and whether they are over the external threshold.
    struct Image: Equatable, CustomStringConvertible {
        let seed: Int
        let isLarge: Bool
        var description: String { "\(isLarge ? "large" : "small")#\(seed)" }

        var bytes: Data {
            let count = isLarge ? ExternalStorage.thresholdBytes + 1 + seed % 4_000 : 200 + seed % 300
            var data = Data(count: count)
            data.withUnsafeMutableBytes { buffer in
                for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: index &* 31 &+ seed) }
            }
            return data
        }
    }

    /// A stored poster of the plain model, and the number of saves that wrote its row.
    struct Stored: Equatable {
        var revision: Int
        var image: Image?
        var version: Int
    }

    /// A saved poster the context holds: the values and version it read, and whether it has read the
    /// image yet (a fetch leaves a large one in its file until the property is read).
    struct Held {
        let poster: Poster
        var read: Stored
        var imageLoaded: Bool
    }

    private func run(seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        let url = folder.appendingPathComponent("posters-\(seed).store")
        let fileFolder = folder.appendingPathComponent("posters-\(seed).store.external")
        let container = try ModelContainer(for: Poster.self, configurations: ModelConfiguration(url: url))
        let otherProcess = try ModelContainer(for: Poster.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)

        var stored: [String: Stored] = [:]
        // What the context holds: saved posters with the values and version it read, and its unsaved work.
        var held: [String: Held] = [:]
        var changes: [String: (revision: Int, image: Image?)] = [:]
        var inserts: [String: (poster: Poster, revision: Int, image: Image?)] = [:]
        var deletes: Set<String> = []
        var nextName = 0
        var nextImage = 0
        var log: [String] = []

        func fail(_ message: String) throws -> Never {
            throw RandomRunDiverged.reported(message, seed: seed, log: log)
        }
        func newImage() -> Image? {
            nextImage += 1
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return nil
            case 1: return Image(seed: nextImage, isLarge: false)
            default: return Image(seed: nextImage, isLarge: true)
            }
        }
        func describe(_ image: Image?) -> String { image?.description ?? "none" }
        func shown(_ poster: Poster) -> String { "\(poster.name) r\(poster.revision) \(poster.image.map { "\($0.count) bytes" } ?? "none")" }
        func expectedShown(_ name: String, _ revision: Int, _ image: Image?) -> String {
            "\(name) r\(revision) \(image.map { "\($0.bytes.count) bytes" } ?? "none")"
        }

        /// The store as another container reads it, and its folder of files, against the plain model.
        func checkStore(_ moment: String) throws {
            let posters = try ModelContext(otherProcess).fetch(FetchDescriptor<Poster>())
            let listed = Set(posters.map(\.name))
            if listed != Set(stored.keys) { try fail("\(moment), another container lists \(listed.sorted()) vs \(stored.keys.sorted())") }
            for poster in posters {
                guard let expected = stored[poster.name] else { continue }
                if poster.revision != expected.revision || poster.image != expected.image?.bytes {
                    try fail("\(moment), another container reads \(shown(poster)) vs \(expectedShown(poster.name, expected.revision, expected.image))")
                }
            }
            let named = try DatabaseQueue(path: url.path).read { db in
                try String.fetchAll(db, sql: "SELECT image FROM Poster WHERE typeof(image) = 'text'")
            }
            // The folder's lock file (`.in-use.lock`) holds no value.
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: fileFolder.path)) ?? []).filter { !$0.hasPrefix(".") }
            if Set(files) != Set(named) || files.count != named.count {
                try fail("\(moment), \(files.count) external files for \(named.count) named by rows; "
                    + "not named: \(Set(files).subtracting(named).count), missing: \(Set(named).subtracting(files).count)")
            }
            let large = stored.values.filter { $0.image?.isLarge == true }.count
            if named.count != large { try fail("\(moment), rows name \(named.count) files for \(large) large images") }
        }

        /// A fetch of every poster in the context: it lists the store's and its own, and refreshes
        /// the posters it has not changed.
        func fetchAll(_ moment: String) throws {
            let fetched = try context.fetch(FetchDescriptor<Poster>())
            let expected = Set(stored.keys).union(inserts.keys).union(changes.keys).subtracting(deletes)
            let listed = Set(fetched.map(\.name))
            if listed != expected { try fail("\(moment), the context lists \(listed.sorted()) vs \(expected.sorted())") }
            for poster in fetched {
                let name = poster.name
                let want: (revision: Int, image: Image?)
                if let insert = inserts[name] {
                    want = (insert.revision, insert.image)
                } else if let change = changes[name] {
                    want = change
                } else if let row = stored[name] {
                    want = (row.revision, row.image)
                    if held[name]?.read.version != row.version || held[name]?.poster !== poster {
                        held[name] = Held(poster: poster, read: row, imageLoaded: row.image?.isLarge != true)
                    }
                } else {
                    continue
                }
                // Some images are left unread, for a later step to read them after another process's writes.
                let readsImage = inserts[name] != nil || changes[name] != nil || random.chance(25)
                if readsImage { held[name]?.imageLoaded = true }
                if poster.revision != want.revision || (readsImage && poster.image != want.image?.bytes) {
                    try fail("\(moment), the context shows \(shown(poster)) vs \(expectedShown(name, want.revision, want.image))")
                }
            }
            // A poster another process deleted, unchanged here, is gone from the context's view.
            for name in held.keys where stored[name] == nil && changes[name] == nil && !deletes.contains(name) { held[name] = nil }
        }

        /// Saves, expecting a conflict exactly when a changed or deleted poster's row moved on since it was read.
        func save(_ moment: String) throws {
            let conflicting = changes.keys.filter { stored[$0]?.version != held[$0]?.read.version }
                + deletes.filter { stored[$0] != nil && stored[$0]?.version != held[$0]?.read.version }
            do {
                try context.save()
            } catch let error as SwiftDataError where error.code == .saveConflict {
                if conflicting.isEmpty { try fail("\(moment), the save threw \(error)") }
                log.append("save: conflict over \(conflicting.sorted()), rolled back")
                context.rollback()
                changes = [:]
                inserts = [:]
                deletes = []
                try checkStore(moment + " after the conflict")
                return
            }
            if !conflicting.isEmpty { try fail("\(moment), the save wrote over \(conflicting.sorted())") }
            for name in deletes {
                stored[name] = nil
                held[name] = nil
            }
            for (name, change) in changes {
                let version = (stored[name]?.version ?? 0) + 1
                stored[name] = Stored(revision: change.revision, image: change.image, version: version)
                held[name]?.read = Stored(revision: change.revision, image: change.image, version: version)
            }
            for (name, insert) in inserts {
                // A new row, or the row another process added under the same name, taken over.
                let version = stored[name].map { $0.version + 1 } ?? 0
                stored[name] = Stored(revision: insert.revision, image: insert.image, version: version)
                held[name] = Held(poster: insert.poster, read: Stored(revision: insert.revision, image: insert.image, version: version),
                                  imageLoaded: true)
            }
            changes = [:]
            inserts = [:]
            deletes = []
            log.append("save")
            try checkStore(moment)
        }

        for step in 0..<steps {
            let moment = "step \(step)"
            let live = Set(held.keys).subtracting(deletes).union(inserts.keys)
            func poster(_ name: String) -> Poster? { inserts[name]?.poster ?? held[name]?.poster }
            /// Reads an unchanged poster's image if it has not yet: by the file the row named when the
            /// context read it; a file another process replaced since reads as the row is now, and one
            /// whose row another process deleted reads as no image.
            func loadImage(_ name: String) {
                guard var entry = held[name], !entry.imageLoaded, changes[name] == nil else { return }
                if let row = stored[name] {
                    if row.image != entry.read.image { entry.read.image = row.image }
                } else {
                    entry.read.image = nil
                }
                entry.imageLoaded = true
                held[name] = entry
            }
            /// Reads the image of a poster the context has not changed, as a page showing it would.
            func readImage(_ name: String, _ moment: String) throws {
                guard let poster = held[name]?.poster else { return }
                loadImage(name)
                let want = held[name]?.read.image
                if poster.image != want?.bytes { try fail("\(moment), \(name)'s image reads \(shown(poster)) vs \(describe(want))") }
                log.append("read \(name)'s image")
            }
            func current(_ name: String) -> (revision: Int, image: Image?)? {
                if let insert = inserts[name] { return (insert.revision, insert.image) }
                if let change = changes[name] { return change }
                // An unchanged poster shows what the context last read, however old.
                return held[name].map { ($0.read.revision, $0.read.image) }
            }
            func record(_ name: String, revision: Int, image: Image?) {
                if let insert = inserts[name] {
                    inserts[name] = (insert.poster, revision, image)
                } else {
                    changes[name] = (revision, image)
                }
            }
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<14:
                try fetchAll(moment)
                log.append("fetch")
            case 14..<32:
                // A new image, small, large or none, for a poster whose values the context knows.
                guard let name = random.pick(live), let target = poster(name) else { continue }
                // Setting a property reads what the model has not read yet.
                loadImage(name)
                guard let before = current(name) else { continue }
                let image = newImage()
                // Back to the values it read, a poster has nothing to save: ObjectGraph writes no update,
                // checks no version, and the plain model would need to tell that apart.
                if inserts[name] == nil, let read = held[name]?.read, read.revision == before.revision, read.image == image { continue }
                target.image = image?.bytes
                record(name, revision: before.revision, image: image)
                log.append("\(name) image \(describe(image))")
            case 32..<42:
                guard let name = random.pick(live), let target = poster(name) else { continue }
                loadImage(name)
                guard let before = current(name) else { continue }
                target.revision = step
                record(name, revision: step, image: before.image)
                log.append("\(name) revision \(step)")
            case 42..<50:
                guard let name = random.pick(live), let target = poster(name) else { continue }
                context.delete(target)
                if inserts.removeValue(forKey: name) == nil {
                    changes[name] = nil
                    deletes.insert(name)
                }
                log.append("delete \(name)")
            case 50..<58:
                nextName += 1
                let name = "p\(nextName)"
                let image = newImage()
                let new = Poster(name: name, revision: step, image: image?.bytes)
                context.insert(new)
                inserts[name] = (new, step, image)
                log.append("insert \(name) with \(describe(image))")
            case 58..<63:
                // An insert under the name of a poster another process added, which the context never
                // read: the save takes that row over.
                guard let name = random.pick(Set(stored.keys).subtracting(held.keys).subtracting(inserts.keys)) else { continue }
                let image = newImage()
                let new = Poster(name: name, revision: step, image: image?.bytes)
                context.insert(new)
                inserts[name] = (new, step, image)
                log.append("insert \(name) over another process's row, with \(describe(image))")
                try save(moment)
                try fetchAll(moment + " after the save")
            case 63..<78:
                try save(moment)
                try fetchAll(moment + " after the save")
            case 78..<84:
                context.rollback()
                changes = [:]
                inserts = [:]
                deletes = []
                log.append("rollback")
                try fetchAll(moment + " after the rollback")
            case 84..<88:
                // Delete by predicate, from a context holding no unsaved work, its posters just refreshed.
                guard !context.hasChanges else { continue }
                try fetchAll(moment)
                let below = step - Int.random(in: 0..<60, using: &random)
                try context.delete(model: Poster.self, where: #Predicate { $0.revision < below })
                try context.save()
                let gone = stored.filter { $0.value.revision < below }.map(\.key)
                for name in gone {
                    stored[name] = nil
                    held[name] = nil
                }
                log.append("delete revisions under \(below): \(gone.sorted())")
                try checkStore(moment)
                try fetchAll(moment + " after the delete")
            case 88..<92:
                // The image of a poster the context has not changed, most often one not read yet (whose
                // file another process may have replaced or deleted since).
                let unchanged = Set(held.keys).subtracting(changes.keys).subtracting(deletes)
                let unread = unchanged.filter { held[$0]?.imageLoaded == false }
                guard let name = random.pick(random.chance(70) && !unread.isEmpty ? unread : unchanged) else { continue }
                try readImage(name, moment)
            default:
                // Another process adds, edits or deletes a poster, in a context of its own.
                let other = ModelContext(otherProcess)
                let choice = Int.random(in: 0..<4, using: &random)
                if choice == 0 || stored.isEmpty {
                    nextName += 1
                    let name = "q\(nextName)"
                    let image = newImage()
                    other.insert(Poster(name: name, revision: step, image: image?.bytes))
                    try other.save()
                    stored[name] = Stored(revision: step, image: image, version: 0)
                    log.append("another process inserts \(name) with \(describe(image))")
                    try checkStore(moment)
                } else if let name = random.pick(stored.keys),
                          let target = try other.fetch(FetchDescriptor<Poster>(predicate: #Predicate { $0.name == name })).first,
                          var row = stored[name] {
                    if choice == 1 {
                        other.delete(target)
                        stored[name] = nil
                        log.append("another process deletes \(name)")
                    } else {
                        if choice == 2 {
                            row.image = newImage()
                            target.image = row.image?.bytes
                        } else {
                            row.revision = step
                            target.revision = step
                        }
                        // No image again is no change: ObjectGraph writes nothing, and the version stays.
                        if row != stored[name] { row.version += 1 }
                        stored[name] = row
                        log.append("another process sets \(name) to r\(row.revision) \(describe(row.image))")
                    }
                    try other.save()
                    try checkStore(moment)
                    // A page of the context shows that poster right after, its image perhaps never read
                    // before: its file is gone, replaced or with its row.
                    if random.chance(50), held[name] != nil, changes[name] == nil, !deletes.contains(name) { try readImage(name, moment) }
                } else {
                    try checkStore(moment)
                }
            }
        }
    }

    func testPostersWithImagesMatchThePlainModelAndTheirFiles() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_EXTERNAL", seeds: [20_261_128, 3, 12], steps: 1_000) { try run(seed: $0, steps: $1) }
    }
}
