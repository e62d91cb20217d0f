import Foundation
@testable import ObjectGraph
import XCTest

/// Random edits of two more shapes of graph, checked like `RandomGraphTests` after every save and
/// rollback: a cascade two levels deep (a library's shelves, a shelf's volumes; each to-one side
/// inferred as the inverse) and a one-to-one (a book and its ISBN, inferred inverse, nullify).
///
/// What the plain model takes from SwiftData's documentation: setting either side sets the other (a
/// one-to-one takes the ISBN from the book that had it), deleting a library deletes its shelves and
/// their volumes, deleting a shelf its volumes, and deleting a book or an ISBN leaves the other
/// unpaired; `rollback()` returns to the last save.
///
/// `RANDOM_CASCADE_SEED` and `RANDOM_CASCADE_STEPS` run other sequences, for hunting.
final class RandomCascadeTests: StoreTestCase {
    /// The graph as plain values, keyed by the names the models carry (unique in these runs).
    struct Graph: Equatable {
        var libraries: [String: Set<String>] = [:]
        var shelves: [String: (library: String?, volumes: Set<String>)] = [:]
        var volumes: [String: String?] = [:]
        var books: [String: String?] = [:]
        var isbns: [String: String?] = [:]

        static func == (left: Graph, right: Graph) -> Bool {
            left.libraries == right.libraries && left.volumes == right.volumes && left.books == right.books
                && left.isbns == right.isbns && left.shelves.count == right.shelves.count
                && left.shelves.allSatisfy { label, shelf in
                    right.shelves[label].map { $0.library == shelf.library && $0.volumes == shelf.volumes } ?? false
                }
        }

        func difference(from other: Graph) -> String {
            func lines<Value>(_ name: String, _ mine: [String: Value], _ theirs: [String: Value], same: (Value, Value) -> Bool) -> [String] {
                Set(mine.keys).union(theirs.keys).sorted().compactMap { key in
                    switch (mine[key], theirs[key]) {
                    case let (left?, right?) where same(left, right): return nil
                    case let (left, right): return "\(name) \(key): \(String(describing: left)) vs \(String(describing: right))"
                    }
                }
            }
            return (lines("library", libraries, other.libraries, same: ==)
                + lines("shelf", shelves, other.shelves, same: { $0.library == $1.library && $0.volumes == $1.volumes })
                + lines("volume", volumes, other.volumes, same: ==)
                + lines("book", books, other.books, same: ==)
                + lines("isbn", isbns, other.isbns, same: ==)).joined(separator: "\n")
        }
    }

    /// What the edits should leave, in the plain model's own terms.
    struct Expected {
        var libraries: Set<String> = []
        var shelfLibrary: [String: String?] = [:]
        var volumeShelf: [String: String?] = [:]
        var bookISBN: [String: String?] = [:]
        var isbns: Set<String> = []

        var graph: Graph {
            var graph = Graph()
            for library in libraries { graph.libraries[library] = [] }
            for (shelf, library) in shelfLibrary {
                graph.shelves[shelf] = (library, [])
                if let library { graph.libraries[library, default: []].insert(shelf) }
            }
            for (volume, shelf) in volumeShelf {
                graph.volumes[volume] = shelf
                if let shelf { graph.shelves[shelf]?.volumes.insert(volume) }
            }
            graph.books = bookISBN
            for isbn in isbns { graph.isbns[isbn] = .some(nil) }
            for (book, isbn) in bookISBN { if let isbn { graph.isbns[isbn] = book } }
            return graph
        }

        mutating func deleteShelf(_ label: String) {
            shelfLibrary[label] = nil
            for (volume, shelf) in volumeShelf where shelf == label { volumeShelf[volume] = nil }
        }

        /// Pairs a book with an ISBN (either may be nil): each leaves its old partner.
        mutating func pair(book: String?, isbn: String?) {
            if let isbn, let holder = bookISBN.first(where: { $0.value == isbn })?.key { bookISBN[holder] = .some(nil) }
            if let book { bookISBN[book] = .some(isbn) }
        }
    }

    private func observed(in context: ModelContext) throws -> Graph {
        var graph = Graph()
        for library in try context.fetch(FetchDescriptor<Library>()) {
            graph.libraries[library.name] = Set(library.shelves.map(\.label))
        }
        for shelf in try context.fetch(FetchDescriptor<Shelf>()) {
            graph.shelves[shelf.label] = (shelf.library?.name, Set(shelf.volumes.map(\.title)))
        }
        for volume in try context.fetch(FetchDescriptor<Volume>()) { graph.volumes[volume.title] = .some(volume.shelf?.label) }
        for book in try context.fetch(FetchDescriptor<Book>()) { graph.books[book.title] = .some(book.isbn?.code) }
        for isbn in try context.fetch(FetchDescriptor<ISBN>()) { graph.isbns[isbn.code] = .some(isbn.book?.title) }
        return graph
    }


    private func run(seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        let url = folder.appendingPathComponent("cascade-\(seed).store")
        func open() throws -> ModelContainer {
            try ModelContainer(for: Library.self, Book.self, configurations: ModelConfiguration(url: url))
        }
        var container = try open()
        var context = ModelContext(container)
        let otherProcess = try open()
        var now = Expected()
        var saved = Expected()
        var nextName = 0
        var log: [String] = []
        func name(_ prefix: String) -> String {
            nextName += 1
            return "\(prefix)\(nextName)"
        }
        // Looked up by name each time: models of a fresh context stay unloaded until an edit needs them.
        func one<T: PersistentModel>(_ predicate: Predicate<T>, _ what: String) throws -> T {
            try XCTUnwrap(context.fetch(FetchDescriptor<T>(predicate: predicate)).first, what)
        }
        func library(_ name: String) throws -> Library { try one(#Predicate { $0.name == name }, name) }
        func shelf(_ label: String) throws -> Shelf { try one(#Predicate { $0.label == label }, label) }
        func volume(_ title: String) throws -> Volume { try one(#Predicate { $0.title == title }, title) }
        func book(_ title: String) throws -> Book { try one(#Predicate { $0.title == title }, title) }
        func isbn(_ code: String) throws -> ISBN { try one(#Predicate { $0.code == code }, code) }

        func check(_ moment: String) throws {
            let expected = now.graph
            let trail = log.suffix(30).joined(separator: "\n")
            var readers = [("a fresh context", ModelContext(container)), ("another container", ModelContext(otherProcess))]
            if random.chance(33) { readers.append(("the live context", context)) }
            for (reader, readingContext) in readers {
                let seen = try observed(in: readingContext)
                guard seen != expected else { continue }
                XCTFail("seed \(seed), \(moment), \(reader) (seen vs expected):\n\(seen.difference(from: expected))\nlast steps:\n\(trail)")
                throw RandomRunDiverged()
            }
        }

        for step in 0..<steps {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<5:
                let made = Library(name: name("l"))
                context.insert(made)
                now.libraries.insert(made.name)
                log.append("new library \(made.name)")
            case 5..<14:
                let made = Shelf(label: name("s"))
                let owner = random.chance(80) ? random.pick(now.libraries) : nil
                if let owner {
                    if random.chance(50) { made.library = try library(owner) } else { try library(owner).shelves.append(made) }
                }
                context.insert(made)
                now.shelfLibrary[made.label] = .some(owner)
                log.append("new shelf \(made.label) in \(owner ?? "-")")
            case 14..<26:
                let made = Volume(title: name("v"))
                let owner = random.chance(80) ? random.pick(now.shelfLibrary.keys) : nil
                if random.chance(50) { context.insert(made) }
                if let owner {
                    if random.chance(50) { made.shelf = try shelf(owner) } else { try shelf(owner).volumes.append(made) }
                }
                context.insert(made)
                now.volumeShelf[made.title] = .some(owner)
                log.append("new volume \(made.title) on \(owner ?? "-")")
            case 26..<34:
                let made = Book(title: name("b"))
                context.insert(made)
                now.bookISBN[made.title] = .some(nil)
                log.append("new book \(made.title)")
            case 34..<42:
                let made = ISBN(code: name("n"))
                let owner = random.chance(60) ? random.pick(now.bookISBN.keys) : nil
                if let owner {
                    if random.chance(50) { made.book = try book(owner) } else { try book(owner).isbn = made }
                }
                context.insert(made)
                now.isbns.insert(made.code)
                now.pair(book: owner, isbn: made.code)
                log.append("new isbn \(made.code) for \(owner ?? "-")")
            case 42..<50:
                guard let label = random.pick(now.shelfLibrary.keys) else { continue }
                let target = random.chance(85) ? random.pick(now.libraries) : nil
                let moved = try shelf(label)
                if let target, random.chance(50) {
                    try library(target).shelves.append(moved)
                } else if target == nil, random.chance(50), let old = now.shelfLibrary[label] ?? nil {
                    try library(old).shelves.removeAll { $0.label == label }
                } else {
                    moved.library = try target.map(library)
                }
                now.shelfLibrary[label] = .some(target)
                log.append("move shelf \(label) to \(target ?? "-")")
            case 50..<60:
                guard let title = random.pick(now.volumeShelf.keys) else { continue }
                let target = random.chance(85) ? random.pick(now.shelfLibrary.keys) : nil
                let moved = try volume(title)
                if let target, random.chance(50) {
                    try shelf(target).volumes.append(moved)
                } else if target == nil, random.chance(50), let old = now.volumeShelf[title] ?? nil {
                    try shelf(old).volumes.removeAll { $0.title == title }
                } else {
                    moved.shelf = try target.map(shelf)
                }
                now.volumeShelf[title] = .some(target)
                log.append("move volume \(title) to \(target ?? "-")")
            case 60..<68:
                // Pair or unpair a book and an ISBN, through either side.
                guard let code = random.pick(now.isbns) else { continue }
                let owner = random.chance(75) ? random.pick(now.bookISBN.keys) : nil
                if let owner {
                    if random.chance(50) { try isbn(code).book = try book(owner) } else { try book(owner).isbn = try isbn(code) }
                    now.pair(book: owner, isbn: code)
                } else if random.chance(50), let holder = now.bookISBN.first(where: { $0.value == code })?.key {
                    try book(holder).isbn = nil
                    now.pair(book: holder, isbn: nil)
                } else {
                    try isbn(code).book = nil
                    now.pair(book: nil, isbn: code)
                }
                log.append("isbn \(code) for \(owner ?? "-")")
            case 68..<71:
                guard let name = random.pick(now.libraries) else { continue }
                context.delete(try library(name))
                now.libraries.remove(name)
                for (shelf, owner) in now.shelfLibrary where owner == name { now.deleteShelf(shelf) }
                log.append("delete library \(name)")
            case 71..<74:
                guard let label = random.pick(now.shelfLibrary.keys) else { continue }
                context.delete(try shelf(label))
                now.deleteShelf(label)
                log.append("delete shelf \(label)")
            case 74..<77:
                guard let title = random.pick(now.volumeShelf.keys) else { continue }
                context.delete(try volume(title))
                now.volumeShelf[title] = nil
                log.append("delete volume \(title)")
            case 77..<80:
                if random.chance(50), let title = random.pick(now.bookISBN.keys) {
                    context.delete(try book(title))
                    now.bookISBN[title] = nil
                    log.append("delete book \(title)")
                } else if let code = random.pick(now.isbns) {
                    context.delete(try isbn(code))
                    now.pair(book: nil, isbn: code)
                    now.isbns.remove(code)
                    log.append("delete isbn \(code)")
                }
            case 80..<93:
                try context.save()
                saved = now
                log.append("save")
                try check("step \(step), after a save")
                if random.chance(30) {
                    context = ModelContext(container)
                    log.append("fresh context")
                } else if random.chance(10) {
                    container = try open()
                    context = ModelContext(container)
                    log.append("container reopened")
                }
            default:
                context.rollback()
                now = saved
                log.append("rollback")
                try check("step \(step), after a rollback")
            }
        }
        try context.save()
        saved = now
        try check("the end")
    }

    func testRandomEditsOfCascadesAndOneToOnesMatchThePlainModel() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_CASCADE", seeds: [20_261_127, 11, 500_009], steps: 400) { try run(seed: $0, steps: $1) }
    }
}
