import Foundation
import GRDB
import ObjectGraph
import XCTest

final class AttributeTypesTests: StoreTestCase {
    func testLongValuesAreStoredAfterTheShortColumns() throws {
        let container = try makeContainer(AllTypes.self)
        let context = ModelContext(container)
        let model = AllTypes()
        model.string = String(repeating: "long text ", count: 2_000)
        model.optionalDate = Date(timeIntervalSince1970: 42)
        context.insert(model)
        try context.save()

        let columns = try rawRows("PRAGMA table_info(\"AllTypes\")").map { $0["name"] as String }
        let firstLong = try XCTUnwrap(columns.firstIndex(of: "string"))
        for long in ["string", "data", "optionalString", "optionalData", "color", "words", "shape", "scores"] {
            XCTAssertGreaterThanOrEqual(columns.firstIndex(of: long) ?? -1, firstLong, "\(long) in \(columns)")
        }
        for short in ["int", "double", "bool", "date", "uuid", "optionalDate", "genre", "optionalGenre"] {
            XCTAssertLessThan(columns.firstIndex(of: short) ?? .max, firstLong, "\(short) in \(columns)")
        }
        let fresh = try ModelContext(container).fetch(FetchDescriptor<AllTypes>()).first
        XCTAssertEqual(fresh?.string.count, 20_000)
        XCTAssertEqual(fresh?.optionalDate, Date(timeIntervalSince1970: 42))
    }

    func testEveryAttributeTypeSurvivesARoundTripThroughTheFile() throws {
        let uuid = UUID()
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        do {
            let container = try makeContainer(AllTypes.self)
            let context = ModelContext(container)
            let value = AllTypes()
            value.int = -42
            value.int8 = -8
            value.int16 = -16_000
            value.int32 = -2_000_000_000
            value.int64 = Int64.min
            value.uint = 42
            value.uint8 = 255
            value.uint16 = 65_535
            value.uint32 = 4_000_000_000
            value.uint64 = UInt64.max
            value.double = 3.141592653589793
            value.float = 2.5
            value.decimal = Decimal(string: "12345678901234567890.123456789")!
            value.bool = true
            value.string = "héllo, wörld 👋"
            value.data = Data([0, 1, 2, 255])
            value.date = date
            value.url = URL(string: "https://example.com/a?b=c")!
            value.uuid = uuid
            value.optionalInt = 7
            value.optionalDouble = nil
            value.optionalString = "present"
            value.optionalDate = date
            value.optionalUUID = uuid
            value.optionalURL = URL(string: "file:///tmp/x")
            value.optionalData = Data([9])
            value.optionalDecimal = Decimal(string: "-0.5")
            value.genre = .kids
            value.optionalGenre = .poetry
            value.priority = .high
            value.shape = .square(side: 4)
            value.color = ColorData(red: 0.1, green: 0.2, blue: 0.3, alpha: 0.5)
            value.optionalColor = ColorData(red: 1, green: 1, blue: 1)
            value.words = ["a", "b", "c"]
            value.scores = ["x": 1.5]
            context.insert(value)
            try context.save()
        }

        let context = ModelContext(try makeContainer(AllTypes.self))
        let fetched = try XCTUnwrap(context.fetch(FetchDescriptor<AllTypes>()).first)
        XCTAssertEqual(fetched.int, -42)
        XCTAssertEqual(fetched.int8, -8)
        XCTAssertEqual(fetched.int16, -16_000)
        XCTAssertEqual(fetched.int32, -2_000_000_000)
        XCTAssertEqual(fetched.int64, Int64.min)
        XCTAssertEqual(fetched.uint, 42)
        XCTAssertEqual(fetched.uint8, 255)
        XCTAssertEqual(fetched.uint16, 65_535)
        XCTAssertEqual(fetched.uint32, 4_000_000_000)
        XCTAssertEqual(fetched.uint64, UInt64.max)
        XCTAssertEqual(fetched.double, 3.141592653589793)
        XCTAssertEqual(fetched.float, 2.5)
        XCTAssertEqual(fetched.decimal, Decimal(string: "12345678901234567890.123456789")!)
        XCTAssertEqual(fetched.bool, true)
        XCTAssertEqual(fetched.string, "héllo, wörld 👋")
        XCTAssertEqual(fetched.data, Data([0, 1, 2, 255]))
        XCTAssertEqual(fetched.date, date)
        XCTAssertEqual(fetched.url, URL(string: "https://example.com/a?b=c")!)
        XCTAssertEqual(fetched.uuid, uuid)
        XCTAssertEqual(fetched.optionalInt, 7)
        XCTAssertNil(fetched.optionalDouble)
        XCTAssertEqual(fetched.optionalString, "present")
        XCTAssertEqual(fetched.optionalDate, date)
        XCTAssertEqual(fetched.optionalUUID, uuid)
        XCTAssertEqual(fetched.optionalURL, URL(string: "file:///tmp/x"))
        XCTAssertEqual(fetched.optionalData, Data([9]))
        XCTAssertEqual(fetched.optionalDecimal, Decimal(string: "-0.5"))
        XCTAssertEqual(fetched.genre, .kids)
        XCTAssertEqual(fetched.optionalGenre, .poetry)
        XCTAssertEqual(fetched.priority, .high)
        XCTAssertEqual(fetched.shape, .square(side: 4))
        XCTAssertEqual(fetched.color, ColorData(red: 0.1, green: 0.2, blue: 0.3, alpha: 0.5))
        XCTAssertEqual(fetched.optionalColor, ColorData(red: 1, green: 1, blue: 1))
        XCTAssertEqual(fetched.words, ["a", "b", "c"])
        XCTAssertEqual(fetched.scores, ["x": 1.5])
    }

    func testAUIntAboveInt64MaxIsSavedAndFoundAsUInt64sAre() throws {
        // GRDB converts a UInt to Int64 with a trap above Int64.max: the save crashed the process.
        let container = try makeContainer(AllTypes.self)
        let context = ModelContext(container)
        let big = AllTypes()
        big.uint = UInt.max
        big.uint64 = UInt64.max
        let small = AllTypes()
        small.uint = 7
        context.insert(big)
        context.insert(small)
        try context.save()
        let fresh = ModelContext(container)
        let largest = UInt.max
        let found = try fresh.fetch(FetchDescriptor(predicate: #Predicate<AllTypes> { $0.uint == largest }))
        XCTAssertEqual(found.map(\.uint), [UInt.max])
        XCTAssertEqual(found.map(\.uint64), [UInt64.max])
        XCTAssertEqual(try fresh.fetch(FetchDescriptor(predicate: #Predicate<AllTypes> { $0.uint == 7 })).count, 1)
        XCTAssertEqual(try rawRows(#"SELECT "uint" FROM "AllTypes" ORDER BY "_pk""#).map { $0["uint"] as Int64 }, [-1, 7],
                       "the bits, as a UInt64 keeps them")
    }

    func testANaNIsRefusedByTheSaveNotTurnedIntoNilOrUnreadableText() throws {
        let container = try makeContainer(AllTypes.self)
        let context = ModelContext(container)
        let value = AllTypes()
        value.optionalDouble = .nan
        context.insert(value)
        // SQLite keeps a NaN as NULL: the optional read back as nil, and a non-optional failed as "needs a value".
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .modelValidationFailure)
            XCTAssertEqual((error as? SwiftDataError)?.propertyName, "optionalDouble")
            XCTAssertTrue("\(error)".contains("NaN"), "\(error)")
        }
        value.optionalDouble = 1.5
        value.float = .nan
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.propertyName, "float")
            XCTAssertTrue("\(error)".contains("NaN"), "\(error)")
        }
        value.float = .infinity
        value.optionalDecimal = .nan
        // It was saved as a negative number without digits, and then no fetch of the table could read it.
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.propertyName, "optionalDecimal")
            XCTAssertTrue("\(error)".contains("NaN"), "\(error)")
        }
        value.optionalDecimal = Decimal(string: "-2.5")
        try context.save()
        let fetched = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<AllTypes>()).first)
        XCTAssertEqual(fetched.optionalDouble, 1.5)
        XCTAssertEqual(fetched.float, .infinity)
        XCTAssertEqual(fetched.optionalDecimal, Decimal(string: "-2.5"))

        // A store written before NaNs were refused holds the NaN's old form: it reads back as a NaN.
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { try $0.execute(sql: #"UPDATE "AllTypes" SET "optionalDecimal" = '0498~'"#) }
        let reread = try XCTUnwrap(ModelContext(try makeContainer(AllTypes.self)).fetch(FetchDescriptor<AllTypes>()).first)
        XCTAssertEqual(reread.optionalDecimal?.isNaN, true)
    }

    /// SQLite is handed text up to its first NUL character (as GRDB binds text): the rest was dropped
    /// without a word, and the model read back shorter. The save refuses it instead, naming the property.
    func testATextWithANULCharacterIsRefusedByTheSaveNotCutShort() throws {
        let container = try makeContainer(AllTypes.self)
        let context = ModelContext(container)
        let value = AllTypes()
        value.string = "before\u{0}after"
        context.insert(value)
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .modelValidationFailure)
            XCTAssertEqual((error as? SwiftDataError)?.propertyName, "string")
            XCTAssertTrue("\(error)".contains("NUL"), "\(error)")
        }
        XCTAssertEqual(try rawRows(#"SELECT * FROM "AllTypes""#).count, 0, "nothing written")
        XCTAssertEqual(value.string, "before\u{0}after", "the model keeps its value")

        value.string = "kept"
        try context.save()
        value.optionalString = "\u{0}"
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.propertyName, "optionalString")
        }
        context.rollback()
        let fetched = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<AllTypes>()).first)
        XCTAssertEqual(fetched.string, "kept")
        XCTAssertNil(fetched.optionalString)
    }

    func testOptionalsSetToNilAreStoredAsNull() throws {
        let context = ModelContext(try makeContainer(AllTypes.self))
        context.insert(AllTypes())
        try context.save()
        let row = try XCTUnwrap(rawRows("SELECT optionalInt, optionalGenre, optionalColor FROM AllTypes").first)
        XCTAssertTrue((row["optionalInt"] as DatabaseValue).isNull)
        XCTAssertTrue((row["optionalGenre"] as DatabaseValue).isNull)
        XCTAssertTrue((row["optionalColor"] as DatabaseValue).isNull)
    }

    func testEnumsWithARawValueAreStoredAsTheirRawValueInOneColumn() throws {
        let context = ModelContext(try makeContainer(AllTypes.self))
        let value = AllTypes()
        value.genre = .poetry
        value.priority = .high
        context.insert(value)
        try context.save()
        let row = try XCTUnwrap(rawRows("SELECT genre, priority FROM AllTypes").first)
        XCTAssertEqual(row["genre"] as String, "poetry")
        XCTAssertEqual(row["priority"] as Int, 2)
    }

    func testCodableStructsAreJSONThatSQLiteCanQuery() throws {
        let context = ModelContext(try makeContainer(AllTypes.self))
        let value = AllTypes()
        value.color = ColorData(red: 0.25, green: 0.5, blue: 0.75)
        context.insert(value)
        try context.save()
        let row = try XCTUnwrap(rawRows("SELECT json_extract(color, '$.green') AS green FROM AllTypes").first)
        XCTAssertEqual(row["green"] as Double, 0.5)
    }

    func testDatesAreSortableNumbers() throws {
        let context = ModelContext(try makeContainer(AllTypes.self))
        let value = AllTypes()
        // Seconds since 2001, the number a `Date` holds: stored exactly (see `StoredDatesTests`).
        value.date = Date(timeIntervalSinceReferenceDate: 86_400.1)
        context.insert(value)
        try context.save()
        let row = try XCTUnwrap(rawRows("SELECT typeof(date) AS type, date FROM AllTypes").first)
        XCTAssertEqual(row["type"] as String, "real")
        XCTAssertEqual(row["date"] as Double, 86_400.1)
    }

    func testDecimalsStayExactAndSortNumerically() throws {
        let context = ModelContext(try makeContainer(AllTypes.self))
        let values = ["-1000", "-1.55", "-1.5", "-0.001", "0", "0.001", "0.1", "1", "1.5", "1.55", "9", "10", "99.99", "1e20",
                      "3.14159265358979323846264338327950288"]
        for text in values.shuffled() {
            let model = AllTypes()
            model.decimal = Decimal(string: text)!
            model.string = text
            context.insert(model)
        }
        try context.save()

        let sorted = try rawRows("SELECT string FROM AllTypes ORDER BY decimal").map { $0["string"] as String }
        let expected = values.sorted { Decimal(string: $0)! < Decimal(string: $1)! }
        XCTAssertEqual(sorted, expected)

        let fresh = ModelContext(try makeContainer(AllTypes.self))
        for model in try fresh.fetch(FetchDescriptor<AllTypes>()) {
            XCTAssertEqual(model.decimal, Decimal(string: model.string)!, "\(model.string) changed in the store")
        }
        let viaDescriptor = try fresh.fetch(FetchDescriptor<AllTypes>(sortBy: [SortDescriptor(\.decimal, order: .reverse)]))
        XCTAssertEqual(viaDescriptor.map(\.string), expected.reversed())
    }

    func testAColumnHoldingAnUnreadableValueThrowsNamingTheProperty() throws {
        do {
            let context = ModelContext(try makeContainer(AllTypes.self))
            context.insert(AllTypes())
            try context.save()
        }
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { try $0.execute(sql: "UPDATE AllTypes SET genre = 'opera'") }

        let context = ModelContext(try makeContainer(AllTypes.self))
        XCTAssertThrowsError(try context.fetch(FetchDescriptor<AllTypes>())) { error in
            let message = "\(error)"
            XCTAssertTrue(message.contains("AllTypes.genre"), message)
            XCTAssertTrue(message.contains("opera"), message)
        }
    }

    func testAnAttributeOfAnUnsupportedTypeIsRefusedWhenTheContainerOpens() throws {
        XCTAssertThrowsError(try makeContainer(Unstorable.self)) { error in
            let error = try? XCTUnwrap(error as? SwiftDataError)
            XCTAssertEqual(error?.code, .unsupportedAttributeType)
            XCTAssertEqual(error?.entityName, "Unstorable")
            XCTAssertEqual(error?.propertyName, "thing")
        }
    }
}
