import Foundation
@testable import ObjectGraph
import XCTest

enum CreditRole: String, Codable {
    case singer, drummer
}

struct Credit: Codable {
    var name: String
    var role: CreditRole
}

@Model final class Recording {
    var title: String
    var ratings: [Int] = []
    var moods: Set<String> = []
    var plays: [String: Int] = [:]
    var credits: [Credit] = []
    var sessions: [Date] = []
    var labels: [String]?
    var trackTitles: [Int: String] = [:]

    init(title: String) { self.title = title }
}

/// Predicates over array, set and dictionary attributes, which are stored as JSON text: each is
/// checked against Foundation's own `evaluate` over the same models (`assertPredicate`). Before, only
/// `contains(_:)`, `count` and `isEmpty` were translated; the rest threw `.unsupportedPredicate`.
final class CollectionPredicateTests: PredicateTestCase {
    let reference = Date(timeIntervalSinceReferenceDate: 800_000_000)

    override func setUpWithError() throws {
        try super.setUpWithError()
        try open(Recording.self)
        func add(_ title: String, ratings: [Int], moods: Set<String>, plays: [String: Int], credits: [Credit],
                 sessionDays: [Double], labels: [String]?) {
            let recording = Recording(title: title)
            recording.ratings = ratings
            recording.moods = moods
            recording.plays = plays
            recording.credits = credits
            recording.sessions = sessionDays.map { reference.addingTimeInterval($0 * 86_400) }
            recording.labels = labels
            context.insert(recording)
        }
        add("Blue", ratings: [5, 3, 4], moods: ["calm", "sad"], plays: ["Ann": 3, "Bo": 1],
            credits: [Credit(name: "Ann", role: .singer)], sessionDays: [-3, 1], labels: ["live"])
        add("Red", ratings: [], moods: [], plays: [:], credits: [], sessionDays: [], labels: nil)
        add("Green", ratings: [1, 2], moods: ["happy"], plays: ["Bo": 7],
            credits: [Credit(name: "Cy", role: .drummer), Credit(name: "Ann", role: .drummer)], sessionDays: [-10], labels: [])
        add("Gold", ratings: [5], moods: ["calm", "happy"], plays: ["Ann": 1, "a.b": 2],
            credits: [Credit(name: "Di", role: .singer)], sessionDays: [2, 5], labels: ["live", "studio"])
        try context.save()
    }

    /// `first` and `last` of an array threw `unsupportedPredicate` ("cannot be read in SQL").
    func testFirstAndLastOfAnArrayAreItsEnds() throws {
        try assertPredicate(#Predicate<Recording> { $0.ratings.first == 5 },
                            sql: #"(json_extract("t0"."ratings", '$[0]') = ?)"#, selects: ["Blue", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.ratings.last == 4 || $0.ratings.last == 2 }, selects: ["Blue", "Green"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.ratings.first == nil }, selects: ["Red"], label: \.title)
        try assertPredicate(#Predicate<Recording> { ($0.ratings.last ?? 0) > 3 }, selects: ["Blue", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.credits.last?.name == "Ann" }, selects: ["Blue", "Green"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.labels?.last == "studio" }, selects: ["Gold"], label: \.title)
        let day = reference
        try assertPredicate(#Predicate<Recording> { $0.sessions.first.flatMap { $0 < day } == true }, selects: ["Blue", "Green"], label: \.title)
    }

    func testContainsWhereAndAllSatisfyTestEachElement() throws {
        try assertPredicate(#Predicate<Recording> { $0.ratings.contains { $0 > 4 } },
                            sql: #"EXISTS (SELECT 1 FROM json_each("t0"."ratings") AS "t1" WHERE ("t1".value > ?))"#,
                            selects: ["Blue", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.ratings.allSatisfy { $0 >= 3 } },
                            selects: ["Blue", "Red", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.moods.contains { $0.starts(with: "ha") } },
                            selects: ["Green", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { !$0.moods.contains { $0 == "sad" } && $0.ratings.contains { $0 < 3 } },
                            selects: ["Green"], label: \.title)
    }

    func testFilteredElementsAreCountedAndTestedAgain() throws {
        try assertPredicate(#Predicate<Recording> { $0.ratings.filter { $0 >= 3 }.count >= 2 },
                            selects: ["Blue"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.ratings.filter { $0 > 4 }.isEmpty },
                            selects: ["Red", "Green"], label: \.title)
        let drummer = CreditRole.drummer
        try assertPredicate(#Predicate<Recording> { $0.credits.filter { $0.role == drummer }.contains { $0.name == "Ann" } },
                            selects: ["Green"], label: \.title)
        try assertPredicate(#Predicate<Recording> { ($0.ratings.filter { $0 < 5 }.max() ?? 0) == 4 },
                            selects: ["Blue"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.moods.filter { $0 != "calm" }.contains("happy") },
                            selects: ["Green", "Gold"], label: \.title)
    }

    func testAnElementsMembersAndCapturedValuesAreComparedAsJSON() throws {
        let drummer = CreditRole.drummer
        try assertPredicate(#Predicate<Recording> { $0.credits.contains { $0.name == "Ann" && $0.role == drummer } },
                            selects: ["Green"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.credits.allSatisfy { $0.role != drummer } },
                            selects: ["Blue", "Red", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.credits.contains { $0.name.count > 2 } }, selects: ["Blue", "Green"], label: \.title)
        let cutoff = reference
        try assertPredicate(#Predicate<Recording> { $0.sessions.contains { $0 > cutoff } },
                            selects: ["Blue", "Gold"], label: \.title)
    }

    func testMaximumMinimumAndPosition() throws {
        try assertPredicate(#Predicate<Recording> { ($0.ratings.max() ?? 0) >= 5 },
                            sql: #"(COALESCE((SELECT MAX("t1".value) FROM json_each("t0"."ratings") AS "t1"), ?) >= ?)"#,
                            selects: ["Blue", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { ($0.ratings.min() ?? 0) < 3 },
                            selects: ["Red", "Green"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.ratings.min() == 1 },
                            selects: ["Green"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.ratings.count > 0 && $0.ratings[0] == 5 },
                            selects: ["Blue", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.ratings.count > 1 && $0.ratings[1] < 3 },
                            selects: ["Green"], label: \.title)
        // A position outside an array makes Foundation's `evaluate` throw, so only SQL is asked of the
        // saved rows: such a position matches nothing.
        for position in [-1, 3, 9] {
            let outside = #Predicate<Recording> { $0.ratings[position] >= 0 }
            XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor(predicate: outside)), 0, "position \(position)")
        }
        let atTwo = #Predicate<Recording> { $0.ratings[2] == 4 }
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor(predicate: atTwo)).map(\.title), ["Blue"])
        // An unsaved model is tested in memory, by `evaluate`, whose error the fetch passes on.
        let editing = ModelContext(container)
        editing.insert(Recording(title: "Unsaved"))
        XCTAssertThrowsError(try editing.fetch(FetchDescriptor(predicate: atTwo)))
    }

    func testDictionaryValuesByKey() throws {
        try assertPredicate(#Predicate<Recording> { $0.plays["Ann"] == 3 },
                            sql: #"(json_extract("t0"."plays", ?) = ?)"#, selects: ["Blue"], label: \.title)
        try assertPredicate(#Predicate<Recording> { ($0.plays["Bo"] ?? 0) > 2 },
                            selects: ["Green"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.plays["Bo", default: 0] > 0 },
                            selects: ["Blue", "Green"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.plays["a.b"] == 2 },
                            selects: ["Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.plays["Cy"] == nil },
                            selects: ["Blue", "Red", "Green", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.plays.count == 2 },
                            sql: #"((SELECT COUNT(*) FROM json_each("t0"."plays")) = ?)"#, selects: ["Blue", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.plays.isEmpty }, selects: ["Red"], label: \.title)
        let key = "Ann"
        try assertPredicate(#Predicate<Recording> { $0.plays[key, default: 0] >= 1 },
                            selects: ["Blue", "Gold"], label: \.title)
    }

    /// A key is found whatever text it holds. `JSONEncoder` escapes some characters in the keys it
    /// writes (`/` as `\/`, a backslash, a quote, control characters), and a JSON path's quoted key
    /// is compared with the stored text as written, escapes and all.
    func testDictionaryKeysThatJSONWritesEscapedAreFound() throws {
        let odd = Recording(title: "Odd")
        odd.plays = ["a/b": 4, "back\\slash": 5, "line\nbreak": 6, "quote\"d": 7, "caf\u{E9}": 8, "Odd": 9]
        odd.moods = ["a/b", "quote\"d"]
        odd.credits = [Credit(name: "AC/DC", role: .drummer)]
        let quoted = Recording(title: "say \"hi\"")
        quoted.plays = ["say \"hi\"": 10, "a/b": 1]
        context.insert(odd)
        context.insert(quoted)
        try context.save()
        try assertPredicate(#Predicate<Recording> { $0.plays["a/b"] == 4 }, selects: ["Odd"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.plays["back\\slash"] == 5 }, selects: ["Odd"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.plays["line\nbreak"] == 6 }, selects: ["Odd"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.plays["quote\"d"] == 7 }, selects: ["Odd"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.plays["caf\u{E9}"] == 8 }, selects: ["Odd"], label: \.title)
        try assertPredicate(#Predicate<Recording> { ($0.plays["a/b"] ?? 0) > 0 }, selects: ["Odd", "say \"hi\""], label: \.title)
        // Elements are read unescaped too.
        try assertPredicate(#Predicate<Recording> { $0.moods.contains("a/b") && $0.moods.contains("quote\"d") },
                            selects: ["Odd"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.credits.contains { $0.name == "AC/DC" } }, selects: ["Odd"], label: \.title)
        // A key read from a column: the model's own title.
        try assertPredicate(#Predicate<Recording> { $0.plays[$0.title] != nil }, selects: ["Odd", "say \"hi\""], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.plays[$0.title, default: 0] >= 10 }, selects: ["say \"hi\""], label: \.title)
    }

    func testSetsAndOptionalArrays() throws {
        try assertPredicate(#Predicate<Recording> { $0.moods.contains("calm") },
                            selects: ["Blue", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.moods.count == 2 },
                            sql: #"(json_array_length("t0"."moods") = ?)"#, selects: ["Blue", "Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.moods.isEmpty }, selects: ["Red"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.labels?.contains { $0 == "studio" } == true },
                            selects: ["Gold"], label: \.title)
        try assertPredicate(#Predicate<Recording> { $0.labels.flatMap { $0.contains { $0 == "live" } } ?? false },
                            selects: ["Blue", "Gold"], label: \.title)
    }

    /// Text is not JSON: a member of it other than `count` and `isEmpty` is refused by name, where it
    /// was handed to `json_extract`, which failed on the text (a set's count was refused too).
    func testAMemberOfTextOtherThanCountIsRefused() throws {
        XCTAssertThrowsError(try sql(#Predicate<Recording> { $0.title.description == "Blue" })) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedPredicate, "\(error)")
            XCTAssertTrue("\(error)".contains("count and isEmpty"), "\(error)")
        }
        try assertPredicate(#Predicate<Recording> { $0.title.count == 4 }, selects: ["Blue", "Gold"], label: \.title)
    }

    /// `JSONEncoder` writes a dictionary whose keys are not text as an array of keys and values, which
    /// no JSON path reads by key: such a subscript is refused by name, not compared with the wrong value.
    func testAKeySubscriptOnADictionaryWithoutTextKeysIsRefused() throws {
        XCTAssertThrowsError(try sql(#Predicate<Recording> { $0.trackTitles[1] == "Intro" })) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedPredicate, "\(error)")
            XCTAssertTrue("\(error)".contains("String keys"), "\(error)")
        }
    }
}
