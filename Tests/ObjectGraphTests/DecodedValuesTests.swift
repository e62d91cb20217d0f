import Foundation
@testable import ObjectGraph
import XCTest

/// A point: plain data, so decoded values of it may be kept and shared.
struct GridPoint: Codable, Hashable {
    var x: Double
    var y: Double
}

/// A counter held by reference: a struct that holds one is not plain data.
final class SharedCounter: Codable {
    var count: Int
    init(count: Int) { self.count = count }
}

struct CounterHolder: Codable {
    var counter: SharedCounter
}

@Model final class Marker {
    var name: String
    var point: GridPoint
    var holder: CounterHolder

    init(name: String, point: GridPoint, holder: CounterHolder) {
        self.name = name
        self.point = point
        self.holder = holder
    }
}

/// An enum with an integer raw value, every case in `allCases`.
enum Level: Int, Codable, CaseIterable { case beginner = 10, expert = 30 }

/// An enum with a floating-point raw value.
enum Ratio: Double, Codable, CaseIterable { case half = 0.5, whole = 1 }

/// An enum whose `allCases` leaves a case out, as a type may for a case it keeps to itself.
enum Mood: String, Codable, CaseIterable {
    case calm, tense, hidden
    static var allCases: [Mood] { [.calm, .tense] }
}

/// A name held by reference: a raw-representable type that is not plain data.
final class NameBox {
    var name: String
    init(_ name: String) { self.name = name }
}

struct BoxedName: RawRepresentable, Codable {
    let box: NameBox
    var rawValue: String { box.name }
    init?(rawValue: String) { box = NameBox(rawValue) }
}

@Model final class Badge {
    var owner: String
    var genre: Genre
    var priority: Priority
    var title: BoxedName

    init(owner: String, genre: Genre, priority: Priority, title: BoxedName) {
        self.owner = owner
        self.genre = genre
        self.priority = priority
        self.title = title
    }
}

/// JSON-coded and raw-value attributes of plain-data types keep the values they decoded, by stored value.
final class DecodedValuesTests: StoreTestCase {
    func testPlainDataValuesAreKeptByTextAndBounded() throws {
        let kept = DecodedValues()
        let codec = AttributeCodec.jsonCodec(GridPoint.self, keeping: kept)
        let text = try codec.encode(GridPoint(x: 1, y: 2))
        XCTAssertEqual(try codec.decode(text) as? GridPoint, GridPoint(x: 1, y: 2))
        XCTAssertEqual(try codec.decode(text) as? GridPoint, GridPoint(x: 1, y: 2))
        XCTAssertEqual(kept.count, 1)
        XCTAssertEqual(try codec.decode(try codec.encode(GridPoint(x: 3, y: 4))) as? GridPoint, GridPoint(x: 3, y: 4))
        XCTAssertEqual(kept.count, 2)

        for index in 0..<(DecodedValues.capacity + 10) {
            _ = try codec.decode(try codec.encode(GridPoint(x: Double(index), y: 0.5)))
        }
        XCTAssertLessThanOrEqual(kept.count, DecodedValues.capacity)
        XCTAssertThrowsError(try codec.decode("not json".databaseValue), "a bad text is still an error")
    }

    func testOnlyPlainDataTypesKeepValues() throws {
        XCTAssertTrue(_isPOD(GridPoint.self))
        XCTAssertFalse(_isPOD(CounterHolder.self))
        let container = try makeContainer(Marker.self)
        let context = ModelContext(container)
        for name in ["a", "b"] {
            context.insert(Marker(name: name, point: GridPoint(x: 1, y: 1), holder: CounterHolder(counter: SharedCounter(count: 1))))
        }
        try context.save()

        let reader = ModelContext(container)
        let markers = try reader.fetch(FetchDescriptor<Marker>(sortBy: [SortDescriptor(\.name)]))
        XCTAssertEqual(markers.map(\.point), [GridPoint(x: 1, y: 1), GridPoint(x: 1, y: 1)])
        // Both rows hold the same text. Had the decoded holder been kept, both models would share one
        // counter, and a change through one would show in the other.
        markers[0].holder.counter.count = 5
        XCTAssertEqual(markers[1].holder.counter.count, 1)
        markers[0].point.x = 9
        XCTAssertEqual(markers[1].point, GridPoint(x: 1, y: 1))
    }

    func testCaseIterableRawValuesAreReadFromTheirCaseTable() throws {
        let kept = DecodedValues()
        let genres = try XCTUnwrap(AttributeCodec.rawValueCodec(Genre.self, keeping: kept))
        for genre in Genre.allCases {
            XCTAssertEqual(try genres.decode(genre.rawValue.databaseValue) as? Genre, genre)
            XCTAssertEqual(try genres.decode(genre.rawValue.databaseValue) as? Genre, genre)
        }
        // Every case is in the table made with the codec: nothing is kept, and no lock is taken.
        XCTAssertEqual(kept.count, 0)
        XCTAssertThrowsError(try genres.decode("sonnet".databaseValue), "a raw value of no case is still an error")
        XCTAssertThrowsError(try genres.decode(3.databaseValue), "so is a value of another storage class")

        let levels = try XCTUnwrap(AttributeCodec.rawValueCodec(Level.self, keeping: DecodedValues()))
        XCTAssertEqual(try levels.decode(10.databaseValue) as? Level, .beginner)
        XCTAssertEqual(try levels.decode(30.databaseValue) as? Level, .expert)
        XCTAssertThrowsError(try levels.decode(20.databaseValue))

        // Raw values stored as REAL have no table: they are decoded, and kept, as before.
        XCTAssertNil(CaseTable(Ratio.self, storedWith: try XCTUnwrap(AttributeCodec.make(for: Double.self))))
        let keptRatios = DecodedValues()
        let ratios = try XCTUnwrap(AttributeCodec.rawValueCodec(Ratio.self, keeping: keptRatios))
        XCTAssertEqual(try ratios.decode(0.5.databaseValue) as? Ratio, .half)
        XCTAssertEqual(keptRatios.count, 1)
    }

    func testCaseTableTellsApartRawTextsOfEveryLengthAndTheirNearMisses() throws {
        let kept = DecodedValues()
        let glyphs = try XCTUnwrap(AttributeCodec.rawValueCodec(Glyph.self, keeping: kept))
        let table = try XCTUnwrap(CaseTable(Glyph.self, storedWith: try XCTUnwrap(AttributeCodec.make(for: String.self))))
        for glyph in Glyph.allCases {
            if glyph == .letterAndNul {
                // A save refuses text with a NUL, so no row holds it: left out of the table, and not
                // found as "a" either; `init(rawValue:)` still decodes it.
                XCTAssertNil(table.value(for: glyph.rawValue.databaseValue))
            } else {
                XCTAssertEqual(table.value(for: glyph.rawValue.databaseValue) as? Glyph, glyph, "\(glyph) is in the table")
            }
            XCTAssertEqual(try glyphs.decode(glyph.rawValue.databaseValue) as? Glyph, glyph)
        }
        XCTAssertEqual(kept.count, 1, "every case but the one with a NUL came from the table")

        // Texts a byte away from a case: shorter, longer, one more NUL, past the short texts' capacity.
        for nearMiss in ["ab", "a\u{0}\u{0}", "\u{0}", "abcdefg", "abcdefghij", "abcdefghijklmn", "abcdefghijklmnopq", "cp", "😁"] {
            XCTAssertNil(table.value(for: nearMiss.databaseValue), "\(nearMiss.debugDescription) is no case")
            XCTAssertThrowsError(try glyphs.decode(nearMiss.databaseValue))
        }
        // The same text in another Unicode normalization is equal as a `String`, as `init(rawValue:)`
        // compares it: not in the table, which compares bytes, but still decoded.
        XCTAssertNil(table.value(for: "e\u{301}".databaseValue))
        XCTAssertEqual(try glyphs.decode("e\u{301}".databaseValue) as? Glyph, .accented)
    }

    func testACaseLeftOutOfAllCasesStillDecodes() throws {
        let kept = DecodedValues()
        let moods = try XCTUnwrap(AttributeCodec.rawValueCodec(Mood.self, keeping: kept))
        XCTAssertEqual(try moods.decode("calm".databaseValue) as? Mood, .calm)
        XCTAssertEqual(kept.count, 0)
        XCTAssertEqual(try moods.decode("hidden".databaseValue) as? Mood, .hidden)
        XCTAssertEqual(kept.count, 1, "decoded as before, and kept")
    }

    func testRawValuesAreKeptByStoredValue() throws {
        let keptPriorities = DecodedValues()
        let priorities = try XCTUnwrap(AttributeCodec.rawValueCodec(Priority.self, keeping: keptPriorities))
        XCTAssertEqual(try priorities.decode(2.databaseValue) as? Priority, .high)
        XCTAssertEqual(try priorities.decode(2.databaseValue) as? Priority, .high)
        XCTAssertEqual(try priorities.decode(1.databaseValue) as? Priority, .low)
        XCTAssertEqual(keptPriorities.count, 2)
        XCTAssertThrowsError(try priorities.decode(7.databaseValue))
    }

    func testFetchedRawValuesAreRightAndNotSharedWhenHeldByReference() throws {
        XCTAssertTrue(_isPOD(Genre.self))
        XCTAssertFalse(_isPOD(BoxedName.self))
        let container = try makeContainer(Badge.self)
        let context = ModelContext(container)
        let badges = [("a", Genre.fiction, Priority.low), ("b", .poetry, .high), ("c", .fiction, .high), ("d", .kids, .low)]
        for (owner, genre, priority) in badges {
            context.insert(Badge(owner: owner, genre: genre, priority: priority, title: try XCTUnwrap(BoxedName(rawValue: "champion"))))
        }
        try context.save()

        let reader = ModelContext(container)
        let fetched = try reader.fetch(FetchDescriptor<Badge>(sortBy: [SortDescriptor(\.owner)]))
        XCTAssertEqual(fetched.map(\.genre), badges.map(\.1))
        XCTAssertEqual(fetched.map(\.priority), badges.map(\.2))
        // Every row holds the same title. Had the decoded value been kept, all four would share one
        // box, and renaming one would rename them all.
        fetched[0].title.box.name = "runner-up"
        XCTAssertEqual(fetched[1].title.rawValue, "champion")
        XCTAssertFalse(fetched[0].title.box === fetched[1].title.box)
    }
}

/// Raw texts around the lengths `ShortText` packs: empty, NUL bytes, 8 and 9 bytes (the second
/// integer), 15 and 16 (its capacity and one past), prefixes of each other, and beyond ASCII.
private enum Glyph: String, CaseIterable {
    case empty = ""
    case letter = "a"
    case letterAndNul = "a\u{0}"
    case eight = "abcdefgh"
    case nine = "abcdefghi"
    case fifteen = "abcdefghijklmno"
    case sixteen = "abcdefghijklmnop"
    case c = "c"
    case cpp = "cpp"
    case accented = "\u{e9}"
    case emoji = "😀"
}
