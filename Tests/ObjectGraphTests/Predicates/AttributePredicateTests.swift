import Foundation
@testable import ObjectGraph
import XCTest

final class AttributePredicateTests: PredicateTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        try open(AllTypes.self, Note.self)
        let rows: [(String, Int, Double, String, Genre, Genre?, Int?, Decimal, Bool, Date)] = [
            ("alpha", 1, 1.5, "Hello World", .fiction, nil, nil, Decimal(string: "9.99")!, true, Date(timeIntervalSince1970: 100)),
            ("beta", 2, 2.5, "héllo wörld", .poetry, .kids, 5, Decimal(string: "10.01")!, false, Date(timeIntervalSince1970: 200)),
            ("gamma", 3, -1, "Swift Data", .kids, .fiction, 10, Decimal(string: "-3")!, true, Date(timeIntervalSince1970: 300)),
            ("delta", 4, 0, "", .fiction, nil, 0, Decimal(string: "100")!, false, Date(timeIntervalSince1970: 400)),
        ]
        for (name, int, double, text, genre, optionalGenre, optionalInt, decimal, bool, date) in rows {
            let model = AllTypes()
            model.string = name
            model.int = int
            model.double = double
            model.optionalString = text
            model.genre = genre
            model.optionalGenre = optionalGenre
            model.optionalInt = optionalInt
            model.decimal = decimal
            model.bool = bool
            model.date = date
            model.color = ColorData(red: double, green: 0.5, blue: 0)
            model.words = [name, "common"]
            context.insert(model)
        }
        try context.save()
    }

    func testEqualityAndComparisonOnColumns() throws {
        try assertPredicate(#Predicate<AllTypes> { $0.int == 2 },
                            sql: #"("t0"."int" = ?)"#, selects: ["beta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.int != 2 },
                            sql: #"("t0"."int" IS NOT ?)"#, selects: ["alpha", "gamma", "delta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.int > 2 },
                            sql: #"("t0"."int" > ?)"#, selects: ["gamma", "delta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.double <= 1.5 && $0.int >= 3 },
                            sql: #"(("t0"."double" <= ?) AND ("t0"."int" >= ?))"#, selects: ["gamma", "delta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.int == 1 || !$0.bool },
                            sql: #"(("t0"."int" = ?) OR (NOT COALESCE(("t0"."bool" IS 1), 0)))"#,
                            selects: ["alpha", "beta", "delta"], label: \.string)
    }

    func testCapturedValuesAreBoundNeverSpliced() throws {
        let hostile = "x'); DROP TABLE AllTypes; --"
        try assertPredicate(#Predicate<AllTypes> { $0.string == hostile },
                            sql: #"("t0"."string" = ?)"#, selects: [], label: \.string)
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<AllTypes>()), 4)
    }

    func testArithmeticAndConditionals() throws {
        try assertPredicate(#Predicate<AllTypes> { $0.int * 2 + 1 == 5 },
                            sql: #"((("t0"."int" * ?) + ?) = ?)"#, selects: ["beta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.int % 2 == 0 },
                            sql: #"(("t0"."int" % ?) = ?)"#, selects: ["beta", "delta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { -$0.double > 0 },
                            sql: #"((-"t0"."double") > ?)"#, selects: ["gamma"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { ($0.bool ? $0.int : 0) > 2 },
                            sql: #"((CASE WHEN ("t0"."bool" IS 1) THEN "t0"."int" ELSE ? END) > ?)"#, selects: ["gamma"], label: \.string)
    }

    func testOptionals() throws {
        try assertPredicate(#Predicate<AllTypes> { $0.optionalInt == nil },
                            sql: #"("t0"."optionalInt" IS NULL)"#, selects: ["alpha"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.optionalInt != nil },
                            sql: #"("t0"."optionalInt" IS NOT NULL)"#, selects: ["beta", "gamma", "delta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { ($0.optionalInt ?? 7) > 6 },
                            sql: #"(COALESCE("t0"."optionalInt", ?) > ?)"#, selects: ["alpha", "gamma"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.optionalInt.flatMap { $0 > 4 } == true },
                            sql: #"(("t0"."optionalInt" > ?) = ?)"#, selects: ["beta", "gamma"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.optionalInt != nil && $0.optionalInt! < 6 },
                            sql: #"(("t0"."optionalInt" IS NOT NULL) AND ("t0"."optionalInt" < ?))"#,
                            selects: ["beta", "delta"], label: \.string)
        let five: Int? = 5
        try assertPredicate(#Predicate<AllTypes> { $0.optionalInt == five },
                            sql: #"("t0"."optionalInt" = ?)"#, selects: ["beta"], label: \.string)
    }

    func testEnumsCompareByTheirRawValue() throws {
        let kids = Genre.kids
        try assertPredicate(#Predicate<AllTypes> { $0.genre == kids },
                            sql: #"("t0"."genre" = ?)"#, selects: ["gamma"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.optionalGenre == kids },
                            sql: #"("t0"."optionalGenre" = ?)"#, selects: ["beta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.optionalGenre == nil },
                            sql: #"("t0"."optionalGenre" IS NULL)"#, selects: ["alpha", "delta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.optionalGenre?.rawValue == "fiction" },
                            sql: #"("t0"."optionalGenre" = ?)"#, selects: ["gamma"], label: \.string)
        let wanted = [Genre.kids, Genre.poetry]
        try assertPredicate(#Predicate<AllTypes> { wanted.contains($0.genre) },
                            sql: #"("t0"."genre" IN (?, ?))"#, selects: ["beta", "gamma"], label: \.string)
    }

    func testStrings() throws {
        try assertPredicate(#Predicate<AllTypes> { $0.string.contains("et") },
                            sql: #"(instr("t0"."string", ?) > 0)"#, selects: ["beta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.string.starts(with: "ga") },
                            sql: #"(substr("t0"."string", 1, length(?)) = ?)"#, selects: ["gamma"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.string.count == 4 },
                            sql: #"(objectgraph_character_count("t0"."string") = ?)"#, selects: ["beta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { ($0.optionalString ?? "x").isEmpty },
                            sql: #"(COALESCE("t0"."optionalString", ?) = '')"#, selects: ["delta"], label: \.string)
        let query = "HELLO"
        try assertPredicate(#Predicate<AllTypes> { ($0.optionalString ?? "").localizedStandardContains(query) },
                            sql: #"(instr(objectgraph_fold(COALESCE("t0"."optionalString", ?)), objectgraph_fold(?)) > 0)"#,
                            selects: ["alpha", "beta"], label: \.string)
        let same = ComparisonResult.orderedSame
        try assertPredicate(#Predicate<AllTypes> { $0.string.caseInsensitiveCompare("ALPHA") == same },
                            sql: #"(objectgraph_compare_nocase("t0"."string", ?) = ?)"#, selects: ["alpha"], label: \.string)
        let ascending = ComparisonResult.orderedAscending
        try assertPredicate(#Predicate<AllTypes> { $0.string.localizedCompare("c") == ascending },
                            sql: #"(objectgraph_compare_localized("t0"."string", ?) = ?)"#, selects: ["alpha", "beta"], label: \.string)
        XCTAssertTrue(try #Predicate<AllTypes> { $0.string.localizedStandardContains("ÉLL") }.evaluate({
            let model = AllTypes()
            model.string = "hello"
            return model
        }()))
    }

    /// `Data`'s `count` and `isEmpty` are its bytes' (they were refused as unsupported).
    func testDataCountAndIsEmpty() throws {
        for model in try context.fetch(FetchDescriptor<AllTypes>()) {
            switch model.string {
            case "alpha": model.data = Data([1, 2, 3])
            case "beta": model.optionalData = Data()
            case "gamma": model.optionalData = Data([0])
            default: break
            }
        }
        try context.save()
        try assertPredicate(#Predicate<AllTypes> { $0.data.isEmpty }, selects: ["beta", "gamma", "delta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.data.count == 3 },
                            sql: #"(length("t0"."data") = ?)"#, selects: ["alpha"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.optionalData?.isEmpty == true }, selects: ["beta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { ($0.optionalData?.count ?? -1) > 0 }, selects: ["gamma"], label: \.string)
    }

    func testDatesDecimalsAndRanges() throws {
        let cutoff = Date(timeIntervalSince1970: 250)
        try assertPredicate(#Predicate<AllTypes> { $0.date > cutoff },
                            sql: #"("t0"."date" > ?)"#, selects: ["gamma", "delta"], label: \.string)
        let ten = Decimal(10)
        try assertPredicate(#Predicate<AllTypes> { $0.decimal > ten },
                            sql: #"("t0"."decimal" > ?)"#, selects: ["beta", "delta"], label: \.string)
        let start = Date(timeIntervalSince1970: 150), end = Date(timeIntervalSince1970: 300)
        try assertPredicate(#Predicate<AllTypes> { (start...end).contains($0.date) },
                            sql: #"("t0"."date" >= ? AND "t0"."date" <= ?)"#, selects: ["beta", "gamma"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { (1..<3).contains($0.int) },
                            sql: #"("t0"."int" >= ? AND "t0"."int" < ?)"#, selects: ["alpha", "beta"], label: \.string)
    }

    func testCodableMembersAndArrays() throws {
        try assertPredicate(#Predicate<AllTypes> { $0.color.red > 1 },
                            sql: #"(json_extract("t0"."color", ?) > ?)"#, selects: ["alpha", "beta"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.words.contains("gamma") },
                            sql: #"EXISTS (SELECT 1 FROM json_each("t0"."words") WHERE json_each.value = ?)"#,
                            selects: ["gamma"], label: \.string)
        try assertPredicate(#Predicate<AllTypes> { $0.words.count == 2 },
                            sql: #"(json_array_length("t0"."words") = ?)"#, selects: ["alpha", "beta", "gamma", "delta"], label: \.string)
    }

    func testConstantPredicates() throws {
        try assertPredicate(#Predicate<AllTypes> { _ in true }, sql: "1", selects: ["alpha", "beta", "gamma", "delta"], label: \.string)
        let enabled = false
        try assertPredicate(#Predicate<AllTypes> { $0.int > 0 && enabled },
                            sql: "0", selects: [], label: \.string)
    }

    func testUnsupportedFormsThrowNamingTheNode() throws {
        XCTAssertThrowsError(try sql(#Predicate<Note> { $0.wordCount > 1 })) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedPredicate)
            XCTAssertTrue("\(error)".contains("KeyPath"), "\(error)")
            XCTAssertTrue("\(error)".contains("Note"), "\(error)")
        }
        XCTAssertThrowsError(try context.fetch(FetchDescriptor(predicate: #Predicate<Note> { $0.wordCount > 1 })))
    }

    func testFetchCountAndDeleteUseTheSameTranslation() throws {
        XCTAssertEqual(try context.fetchCount(FetchDescriptor(predicate: #Predicate<AllTypes> { $0.bool })), 2)
        try context.delete(model: AllTypes.self, where: #Predicate { $0.bool })
        try context.save()
        let left = try ModelContext(container).fetch(FetchDescriptor<AllTypes>(sortBy: [SortDescriptor(\.string)])).map(\.string)
        XCTAssertEqual(left, ["beta", "delta"])
    }

    func testPendingChangesAreFilteredInMemory() throws {
        let extra = AllTypes()
        extra.string = "epsilon"
        extra.int = 2
        context.insert(extra)
        let twos = try context.fetch(FetchDescriptor(predicate: #Predicate<AllTypes> { $0.int == 2 }, sortBy: [SortDescriptor(\.string)]))
        XCTAssertEqual(twos.map(\.string), ["beta", "epsilon"])
        let beta = try XCTUnwrap(twos.first)
        beta.int = 9
        XCTAssertEqual(try context.fetch(FetchDescriptor(predicate: #Predicate<AllTypes> { $0.int == 2 })).map(\.string), ["epsilon"])
        XCTAssertEqual(try context.fetchCount(FetchDescriptor(predicate: #Predicate<AllTypes> { $0.int == 2 })), 1,
                       "fetchCount counts what fetch lists: the pending insert, and the edited model as it is now")
    }
}
