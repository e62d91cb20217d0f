import Foundation
@testable import ObjectGraph
import XCTest

/// Sizes in the order people wear them, which is neither their raw values' alphabetical order nor
/// the order the cases are declared in.
enum GarmentSize: String, Codable, CaseIterable, Comparable {
    case large, small, extraLarge = "xl", medium

    static func < (lhs: GarmentSize, rhs: GarmentSize) -> Bool {
        let worn: [GarmentSize] = [.small, .medium, .large, .extraLarge]
        return (worn.firstIndex(of: lhs) ?? 0) < (worn.firstIndex(of: rhs) ?? 0)
    }
}

/// A `Codable` value stored as JSON with a size inside.
struct GarmentFit: Codable {
    var size: GarmentSize
    var note: String
}

/// A raw-value enum whose `<` is its own, but which does not list its cases.
enum GarmentGrade: Int, Codable, Comparable {
    case seconds = 3, standard = 1, premium = 2

    static func < (lhs: GarmentGrade, rhs: GarmentGrade) -> Bool {
        let order: [GarmentGrade] = [.seconds, .standard, .premium]
        return (order.firstIndex(of: lhs) ?? 0) < (order.firstIndex(of: rhs) ?? 0)
    }
}

/// Stored as JSON text, which sorts "10.0" before "9.1".
struct PatternVersion: Codable, Comparable, Hashable {
    var major: Int
    var minor: Int

    static func < (lhs: PatternVersion, rhs: PatternVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}

@Model final class Garment {
    var name: String
    var size: GarmentSize
    var grade: GarmentGrade = GarmentGrade.standard
    var pattern: PatternVersion = PatternVersion(major: 1, minor: 0)
    var price: Decimal = 0
    var sizesInStock: [GarmentSize] = []
    var fit: GarmentFit = GarmentFit(size: GarmentSize.medium, note: "")

    init(name: String, size: GarmentSize) {
        self.name = name
        self.size = size
    }
}

/// A predicate's `<` and a sort descriptor mean the type's own order, as `Predicate.evaluate` and a
/// fetch of unsaved models have it; SQL must give the same models or refuse, never others.
final class ComparableOrderTests: StoreTestCase {
    private func garments(in context: ModelContext) {
        let sizes: [(String, GarmentSize)] = [("a", .extraLarge), ("b", .small), ("c", .large), ("d", .medium), ("e", .small)]
        for (name, size) in sizes { context.insert(Garment(name: name, size: size)) }
    }

    private func names(_ descriptor: FetchDescriptor<Garment>, in context: ModelContext) throws -> [String] {
        try context.fetch(descriptor).map(\.name)
    }

    func testACaseIterableEnumComparesAndSortsByItsOwnOrderBeforeAndAfterTheSave() throws {
        let context = ModelContext(try makeContainer(Garment.self))
        garments(in: context)
        let medium = GarmentSize.medium
        let larger = FetchDescriptor<Garment>(predicate: #Predicate { $0.size > medium }, sortBy: [SortDescriptor(\.name)])
        let bySize = FetchDescriptor<Garment>(sortBy: [SortDescriptor(\.size), SortDescriptor(\.name)])
        let bySizeDown = FetchDescriptor<Garment>(sortBy: [SortDescriptor(\.size, order: .reverse), SortDescriptor(\.name)])
        let smallest = GarmentSize.small
        let upToMedium = FetchDescriptor<Garment>(
            predicate: #Predicate { (smallest...medium).contains($0.size) }, sortBy: [SortDescriptor(\.name)])

        for moment in ["unsaved", "saved", "read by another context"] {
            let reader = moment == "read by another context" ? ModelContext(context.container) : context
            XCTAssertEqual(try names(larger, in: reader), ["a", "c"], moment)
            XCTAssertEqual(try names(bySize, in: reader), ["b", "e", "d", "c", "a"], moment)
            XCTAssertEqual(try names(bySizeDown, in: reader), ["a", "c", "d", "b", "e"], moment)
            XCTAssertEqual(try names(upToMedium, in: reader), ["b", "d", "e"], moment)
            if moment == "unsaved" { try context.save() }
        }
        // The raw value is still there to compare and sort by, as text.
        let rawOrder = FetchDescriptor<Garment>(sortBy: [SortDescriptor(\.size.rawValue), SortDescriptor(\.name)])
        XCTAssertEqual(try names(rawOrder, in: ModelContext(context.container)), ["c", "d", "b", "e", "a"])
        let afterM = FetchDescriptor<Garment>(predicate: #Predicate { $0.size.rawValue > "m" }, sortBy: [SortDescriptor(\.name)])
        XCTAssertEqual(try names(afterM, in: ModelContext(context.container)), ["a", "b", "d", "e"])
        // An element of an array of them compares by rank too.
        let stocked = try context.fetch(FetchDescriptor<Garment>(sortBy: [SortDescriptor(\.name)]))
        stocked[0].sizesInStock = [.small, .medium]
        stocked[1].sizesInStock = [.extraLarge]
        try context.save()
        let stocksLarger = FetchDescriptor<Garment>(
            predicate: #Predicate { $0.sizesInStock.contains { $0 > medium } }, sortBy: [SortDescriptor(\.name)])
        XCTAssertEqual(try names(stocksLarger, in: ModelContext(context.container)), ["b"])

        // A size inside a value stored as JSON sorts as it compares, by rank.
        for garment in stocked { garment.fit = GarmentFit(size: garment.size, note: "fits") }
        try context.save()
        let byFit = FetchDescriptor<Garment>(sortBy: [SortDescriptor(\.fit.size), SortDescriptor(\.name)])
        XCTAssertEqual(try names(byFit, in: ModelContext(context.container)), ["b", "e", "d", "c", "a"])
        let fitsLarger = FetchDescriptor<Garment>(predicate: #Predicate { $0.fit.size > medium }, sortBy: [SortDescriptor(\.name)])
        XCTAssertEqual(try names(fitsLarger, in: ModelContext(context.container)), ["a", "c"])
    }

    /// A case's raw value is written into an ORDER BY as a literal; a `"` in it is not the start of a
    /// table's or column's name, which would hide the names after it from the kept results' upkeep.
    func testLiteralsInAStatementAreNotTakenForNames() {
        XCTAssertEqual(AggregateCache.identifiers(in: #"SELECT "t0"."_pk" FROM "Garment" AS "t0" ORDER BY (CASE "t0"."size" WHEN '12"' THEN 0 WHEN 'it''s' THEN 1 END), "t1"."name""#),
                       ["t0", "_pk", "Garment", "size", "t1", "name"])
    }

    func testAnOrderSQLCannotKnowIsRefusedWithAClearError() throws {
        let context = ModelContext(try makeContainer(Garment.self))
        garments(in: context)
        try context.save()
        let reader = ModelContext(context.container)
        let standard = GarmentGrade.standard
        let version = PatternVersion(major: 5, minor: 0)

        func assertRefused(_ descriptor: FetchDescriptor<Garment>, _ code: SwiftDataError.Code, naming type: String,
                           line: UInt = #line) {
            XCTAssertThrowsError(try reader.fetch(descriptor), line: line) { error in
                XCTAssertEqual((error as? SwiftDataError)?.code, code, "\(error)", line: line)
                XCTAssertTrue("\(error)".contains(type), "\(error)", line: line)
            }
        }
        assertRefused(FetchDescriptor(predicate: #Predicate { $0.grade > standard }), .unsupportedPredicate, naming: "GarmentGrade")
        assertRefused(FetchDescriptor(sortBy: [SortDescriptor(\.grade)]), .unsupportedSortDescriptor, naming: "GarmentGrade")
        assertRefused(FetchDescriptor(predicate: #Predicate { $0.pattern > version }), .unsupportedPredicate, naming: "PatternVersion")
        assertRefused(FetchDescriptor(sortBy: [SortDescriptor(\.pattern)]), .unsupportedSortDescriptor, naming: "PatternVersion")

        // What SQL can answer still works: equality, members, raw values.
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor(predicate: #Predicate<Garment> { $0.grade == standard })), 5)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor(predicate: #Predicate<Garment> { $0.pattern.major < 5 })), 5)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor(predicate: #Predicate<Garment> { $0.grade.rawValue > 0 })), 5)
        XCTAssertEqual(try reader.fetch(FetchDescriptor<Garment>(sortBy: [SortDescriptor(\.pattern.major)])).count, 5)
    }

    func testArithmeticOnADecimalAttributeIsRefusedNotComputedOnItsStoredText() throws {
        let context = ModelContext(try makeContainer(Garment.self))
        garments(in: context)
        for (garment, price) in zip(try context.fetch(FetchDescriptor<Garment>(sortBy: [SortDescriptor(\.name)])), ["-3", "0", "2.5", "3", "7.5"]) {
            garment.price = Decimal(string: price) ?? 0
        }
        try context.save()
        let reader = ModelContext(context.container)
        for predicate in [#Predicate<Garment> { $0.price * 2 > 5 }, #Predicate<Garment> { $0.price + 1 > 2 }, #Predicate<Garment> { -$0.price < -2 }] {
            XCTAssertThrowsError(try reader.fetch(FetchDescriptor(predicate: predicate))) { error in
                XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedPredicate, "\(error)")
                XCTAssertTrue("\(error)".contains("Decimal"), "\(error)")
            }
        }
        let threshold = Decimal(string: "2.5") ?? 0
        XCTAssertEqual(try names(FetchDescriptor(predicate: #Predicate { $0.price > threshold }, sortBy: [SortDescriptor(\.name)]), in: reader),
                       ["d", "e"], "a Decimal compares as its value")
    }
}
