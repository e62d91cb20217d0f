import Foundation
import ObjectGraph
import XCTest

/// A voyage is one per name and start date: the same name on another date is another voyage.
@Model final class Voyage {
    #Unique<Voyage>([\.name, \.startDate])
    var name: String
    var startDate: Date
    var notes: String = ""
    init(name: String, startDate: Date, notes: String = "") {
        self.name = name
        self.startDate = startDate
        self.notes = notes
    }
}

/// A bin's label is unique on its rack (a to-one relationship in the constraint), and its serial
/// number, when it has one, among all bins.
@Model final class Bin {
    #Unique<Bin>([\.rack, \.label], [\.serial])
    var label: String
    var serial: String?
    var rack: Rack?
    var contents: String = ""
    init(label: String, rack: Rack?, serial: String? = nil, contents: String = "") {
        self.label = label
        self.rack = rack
        self.serial = serial
        self.contents = contents
    }
}

@Model final class Rack {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \Bin.rack) var bins: [Bin] = []
    init(name: String) { self.name = name }
}

/// `#Unique` on the property `.unique` already marks, and on the pair: one index for the name.
@Model final class Medal {
    #Unique<Medal>([\.name], [\.name, \.level])
    @Attribute(.unique) var name: String
    var level: Int
    init(name: String, level: Int) {
        self.name = name
        self.level = level
    }
}

/// `#Unique` naming what has no column: the container must refuse it.
@Model final class Playbook {
    #Unique<Playbook>([\.title, \.plays])
    var title: String = ""
    var plays: [Play] = []
    init() {}
}

@Model final class Play {
    var name: String = ""
    init() {}
}

final class CompoundUniqueTests: StoreTestCase {
    private let june = Date(timeIntervalSince1970: 1_780_000_000)
    private let july = Date(timeIntervalSince1970: 1_782_600_000)

    func testInsertingTheSameCombinationUpdatesTheSavedModel() throws {
        let container = try makeContainer(Voyage.self)
        let first = ModelContext(container)
        let saved = Voyage(name: "Lisbon", startDate: june, notes: "first plan")
        first.insert(saved)
        first.insert(Voyage(name: "Porto", startDate: june))
        try first.save()
        let savedID = saved.persistentModelID

        let second = ModelContext(container)
        let again = Voyage(name: "Lisbon", startDate: june, notes: "second plan")
        second.insert(again)
        // The same name on another date, and another name on the same date, are other voyages.
        second.insert(Voyage(name: "Lisbon", startDate: july))
        try second.save()

        XCTAssertEqual(again.persistentModelID, savedID, "the insert took over the saved voyage's row")
        let rows = try rawRows("SELECT name, startDate, notes FROM Voyage ORDER BY name, startDate")
            .map { "\($0["name"] as String) \($0["notes"] as String)" }
        XCTAssertEqual(rows, ["Lisbon second plan", "Lisbon ", "Porto "])
        let fetched = try ModelContext(container).fetch(
            FetchDescriptor<Voyage>(predicate: #Predicate { $0.name == "Lisbon" }, sortBy: [SortDescriptor(\.startDate)]))
        XCTAssertEqual(fetched.map(\.notes), ["second plan", ""])
    }

    func testTwoPendingInsertsOfOneCombinationBecomeOneModel() throws {
        let context = ModelContext(try makeContainer(Voyage.self))
        let early = Voyage(name: "Rome", startDate: june, notes: "early")
        let late = Voyage(name: "Rome", startDate: june, notes: "late")
        context.insert(early)
        context.insert(late)
        context.insert(Voyage(name: "Rome", startDate: july, notes: "other"))
        try context.save()

        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Voyage>()), 2)
        XCTAssertEqual(early.persistentModelID, late.persistentModelID)
        XCTAssertEqual(early.notes, "late", "the later insert's values win, as an upsert's do")
        XCTAssertEqual(try rawRows("SELECT notes FROM Voyage ORDER BY startDate").map { $0["notes"] as String }, ["late", "other"])
    }

    func testEditingIntoAnotherModelsCombinationThrowsNamingEveryPropertyAndRollbackRecovers() throws {
        let context = ModelContext(try makeContainer(Voyage.self))
        let lisbon = Voyage(name: "Lisbon", startDate: june)
        let porto = Voyage(name: "Porto", startDate: june)
        context.insert(lisbon)
        context.insert(porto)
        try context.save()

        porto.name = "Lisbon"
        XCTAssertThrowsError(try context.save()) { error in
            let error = error as? SwiftDataError
            XCTAssertEqual(error?.code, .uniqueConstraintViolation)
            XCTAssertEqual(error?.entityName, "Voyage")
            XCTAssertEqual(
                error?.message,
                "Voyage's name and startDate must be unique together: another Voyage already has these values. "
                    + "Nothing was saved; change the value or call rollback()")
        }
        context.rollback()
        XCTAssertEqual(porto.name, "Porto")
        // The name alone is free to repeat once the date differs.
        porto.name = "Lisbon"
        porto.startDate = july
        try context.save()
        XCTAssertEqual(try rawRows("SELECT name FROM Voyage").map { $0["name"] as String }, ["Lisbon", "Lisbon"])
    }

    func testTwoVoyagesSwappingTheirDatesSave() throws {
        let container = try makeContainer(Voyage.self)
        let context = ModelContext(container)
        let first = Voyage(name: "Oslo", startDate: june, notes: "a")
        let second = Voyage(name: "Oslo", startDate: july, notes: "b")
        context.insert(first)
        context.insert(second)
        try context.save()

        first.startDate = july
        second.startDate = june
        try context.save()
        let rows = try rawRows("SELECT notes FROM Voyage ORDER BY startDate").map { $0["notes"] as String }
        XCTAssertEqual(rows, ["b", "a"])
    }

    func testANilInTheConstraintNeverCollides() throws {
        let context = ModelContext(try makeContainer(Bin.self, Rack.self))
        // No rack, no serial: both bins labelled "A" stay, as SQLite's unique index lets NULLs differ.
        context.insert(Bin(label: "A", rack: nil))
        context.insert(Bin(label: "A", rack: nil))
        try context.save()
        context.insert(Bin(label: "A", rack: nil))
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Bin>()), 3)
    }

    func testAToOneRelationshipInTheConstraintTellsBinsOnOtherShelvesApart() throws {
        let container = try makeContainer(Bin.self, Rack.self)
        let context = ModelContext(container)
        let top = Rack(name: "top")
        let bottom = Rack(name: "bottom")
        context.insert(top)
        context.insert(bottom)
        // The shelves are new: the two bins labelled "A" on the top rack meet before either has a key.
        context.insert(Bin(label: "A", rack: top, contents: "screws"))
        context.insert(Bin(label: "A", rack: top, contents: "nails"))
        context.insert(Bin(label: "A", rack: bottom, contents: "tape"))
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<Bin>()), 2)

        let later = ModelContext(container)
        let rack = try XCTUnwrap(try later.fetch(FetchDescriptor<Rack>(predicate: #Predicate { $0.name == "bottom" })).first)
        later.insert(Bin(label: "A", rack: rack, contents: "glue"))
        try later.save()

        let rows = try ModelContext(container).fetch(FetchDescriptor<Bin>(sortBy: [SortDescriptor(\.contents)]))
            .map { "\($0.rack?.name ?? "-") \($0.label) \($0.contents)" }
        XCTAssertEqual(rows, ["bottom A glue", "top A nails"])
    }

    /// Bins inserted before their new rack is: each row goes in before the rack has a key, so only the
    /// context can see that the two are one bin (by the rack they refer to, not yet by its key).
    func testBinsOfANewRackInsertedBeforeItMeetInTheContext() throws {
        let context = ModelContext(try makeContainer(Bin.self, Rack.self))
        let rack = Rack(name: "new")
        let first = Bin(label: "A", rack: rack, contents: "screws")
        let second = Bin(label: "A", rack: rack, contents: "nails")
        context.insert(first)
        context.insert(second)
        try context.save()
        XCTAssertEqual(first.persistentModelID, second.persistentModelID)
        XCTAssertEqual(try rawRows("SELECT contents FROM Bin").map { $0["contents"] as String }, ["nails"])
        XCTAssertEqual(rack.bins.map(\.contents), ["nails"])
    }

    func testAnInsertMatchingEitherConstraintTakesOverThatRow() throws {
        let container = try makeContainer(Bin.self, Rack.self)
        let context = ModelContext(container)
        let rack = Rack(name: "top")
        context.insert(rack)
        context.insert(Bin(label: "A", rack: rack, serial: "S-1", contents: "screws"))
        try context.save()

        // Another label, another rack, but the serial of the saved bin.
        let moved = Bin(label: "B", rack: nil, serial: "S-1", contents: "bolts")
        context.insert(moved)
        try context.save()
        XCTAssertEqual(try rawRows("SELECT label, serial, contents FROM Bin").map {
            "\($0["label"] as String) \($0["serial"] as String) \($0["contents"] as String)"
        }, ["B S-1 bolts"])
    }

    func testTheStoreHasOneUniqueIndexPerConstraint() throws {
        let container = try makeContainer(Bin.self, Rack.self, Medal.self)
        let bin = try XCTUnwrap(container.schema.entities.first { $0.name == "Bin" })
        XCTAssertEqual(bin.uniquenessConstraints, [["rack", "label"], ["serial"]])
        let badge = try XCTUnwrap(container.schema.entities.first { $0.name == "Medal" })
        XCTAssertEqual(badge.uniquenessConstraints, [["name"], ["name", "level"]])

        let indexes = try rawRows("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql LIKE 'CREATE UNIQUE%' ORDER BY name")
            .map { $0["name"] as String }
        XCTAssertEqual(indexes, ["Bin_rack_label_unique", "Bin_serial_unique", "Medal_name_level_unique", "Medal_name_unique"])
        XCTAssertTrue(Schema([Bin.self, Rack.self]).description.contains("#Unique [rack, label]"))
    }

    func testAConstraintOnAToManyRelationshipIsRefused() {
        XCTAssertThrowsError(try makeContainer(Playbook.self, Play.self)) { error in
            XCTAssertTrue("\(error)".contains("the #Unique of Playbook names plays, a to-many relationship"), "\(error)")
        }
    }
}
