import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// A colour kept as a class: what SwiftData code stores through a value transformer (a `UIColor` on
/// Apple's platforms). `Codable` only so that a `#Predicate` may name it (the macro requires it of the
/// values it compares); the rows show the transformer's bytes are stored, not JSON.
final class Swatch: Equatable, Codable, Sendable {
    let red: UInt8, green: UInt8, blue: UInt8

    init(_ red: UInt8, _ green: UInt8, _ blue: UInt8) {
        (self.red, self.green, self.blue) = (red, green, blue)
    }

    static func == (lhs: Swatch, rhs: Swatch) -> Bool {
        (lhs.red, lhs.green, lhs.blue) == (rhs.red, rhs.green, rhs.blue)
    }
}

/// Written as for Foundation's `ValueTransformer` on Apple's platforms.
final class SwatchTransformer: ValueTransformer {
    override class func transformedValueClass() -> AnyClass { NSData.self }
    override class func allowsReverseTransformation() -> Bool { true }

    override func transformedValue(_ value: Any?) -> Any? {
        guard let swatch = value as? Swatch else { return nil }
        return Data([swatch.red, swatch.green, swatch.blue])
    }

    override func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data, data.count == 3 else { return nil }
        return Swatch(data[data.startIndex], data[data.startIndex + 1], data[data.startIndex + 2])
    }
}

@Model final class Paint {
    var name: String
    @Attribute(.transformable(by: SwatchTransformer.self)) var swatch: Swatch
    /// Through a transformer registered by name, as SwiftData's `.transformable(by: "name")`.
    @Attribute(.transformable(by: "TransformableTestsSwatch")) var mixedWith: Swatch?

    init(name: String, swatch: Swatch, mixedWith: Swatch? = nil) {
        self.name = name
        self.swatch = swatch
        self.mixedWith = mixedWith
    }
}

@Model final class UnregisteredPaint {
    @Attribute(.transformable(by: "NobodyRegisteredThisTransformer")) var swatch: Swatch?

    init(swatch: Swatch?) {
        self.swatch = swatch
    }
}

enum SwatchesV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Sample.self] }

    @Model final class Sample {
        @Attribute(.transformable(by: SwatchTransformer.self)) var swatch: Swatch
        init(swatch: Swatch) { self.swatch = swatch }
    }
}

/// The same attribute through another transformer, whose bytes may mean something else.
enum SwatchesV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Sample.self] }

    @Model final class Sample {
        @Attribute(.transformable(by: "TransformableTestsSwatch")) var swatch: Swatch
        init(swatch: Swatch) { self.swatch = swatch }
    }
}

/// `@Attribute(.transformable(by:))`: SwiftData code storing a type that is not `Codable` through a
/// `ValueTransformer` compiled against ObjectGraph only once ObjectGraph had both (Foundation on
/// Linux has no `ValueTransformer`).
final class TransformableAttributeTests: StoreTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        ValueTransformer.setValueTransformer(SwatchTransformer(), forName: NSValueTransformerName("TransformableTestsSwatch"))
    }

    func testAValueGoesThroughItsTransformerIntoTheStoreAndBack() throws {
        let context = ModelContext(try makeContainer(Paint.self))
        context.insert(Paint(name: "teal", swatch: Swatch(0, 128, 128), mixedWith: Swatch(255, 255, 255)))
        context.insert(Paint(name: "plain", swatch: Swatch(1, 2, 3)))
        try context.save()

        // The column holds the transformer's bytes.
        let stored = try rawRows(#"SELECT "swatch", "mixedWith" FROM "Paint" ORDER BY "name""#)
        XCTAssertEqual(stored.map { $0["swatch"] as Data }, [Data([1, 2, 3]), Data([0, 128, 128])])
        XCTAssertEqual(stored.map { $0["mixedWith"] as Data? }, [nil, Data([255, 255, 255])])

        // A new container reads them back through the transformers.
        let reopened = ModelContext(try makeContainer(Paint.self))
        let paints = try reopened.fetch(FetchDescriptor<Paint>(sortBy: [SortDescriptor(\.name)]))
        XCTAssertEqual(paints.map(\.swatch), [Swatch(1, 2, 3), Swatch(0, 128, 128)])
        XCTAssertEqual(paints.map(\.mixedWith), [nil, Swatch(255, 255, 255)])

        // A change is saved through it too.
        paints[0].swatch = Swatch(9, 9, 9)
        paints[0].mixedWith = Swatch(7, 7, 7)
        try reopened.save()
        let again = try ModelContext(try makeContainer(Paint.self)).fetch(FetchDescriptor<Paint>(predicate: #Predicate { $0.name == "plain" }))
        XCTAssertEqual(again.first?.swatch, Swatch(9, 9, 9))
        XCTAssertEqual(again.first?.mixedWith, Swatch(7, 7, 7))
    }

    func testATransformerNamedButNotRegisteredIsAClearError() throws {
        XCTAssertThrowsError(try makeContainer(UnregisteredPaint.self)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedAttributeType, "\(error)")
            XCTAssertTrue("\(error)".contains("“NobodyRegisteredThisTransformer”, which is not registered"), "\(error)")
        }
    }

    func testAPredicateOnATransformedValueIsRefused() throws {
        let context = ModelContext(try makeContainer(Paint.self))
        context.insert(Paint(name: "teal", swatch: Swatch(0, 128, 128)))
        try context.save()
        let teal = Swatch(0, 128, 128)
        XCTAssertThrowsError(try context.fetch(FetchDescriptor<Paint>(predicate: #Predicate { $0.swatch == teal }))) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedPredicate, "\(error)")
            XCTAssertTrue("\(error)".contains("stored through a value transformer"), "\(error)")
        }
    }

    /// Bytes the transformer cannot turn back (written by another program) are an error when read,
    /// not a crash nor a value of another type.
    func testBytesTheTransformerCannotReadAreAnError() throws {
        let context = ModelContext(try makeContainer(Paint.self))
        context.insert(Paint(name: "teal", swatch: Swatch(0, 128, 128)))
        try context.save()
        let queue = try DatabaseQueue(path: storeURL.path)
        try queue.write { try $0.execute(sql: #"UPDATE "Paint" SET "swatch" = x'0102'"#) }
        try queue.close()

        XCTAssertThrowsError(try ModelContext(try makeContainer(Paint.self)).fetch(FetchDescriptor<Paint>())) { error in
            XCTAssertTrue("\(error)".contains("did not turn the stored 2 bytes back into a Swatch"), "\(error)")
        }
    }

    /// Another transformer would read the stored bytes as it makes its own: refused, the store unchanged.
    func testChangingTheTransformerNeedsAMigrationStage() throws {
        let context = ModelContext(try ModelContainer(for: Schema(versionedSchema: SwatchesV1.self), configurations: ModelConfiguration(url: storeURL)))
        context.insert(SwatchesV1.Sample(swatch: Swatch(4, 5, 6)))
        try context.save()
        let before = try Data(contentsOf: storeURL)
        XCTAssertThrowsError(try ModelContainer(for: Schema(versionedSchema: SwatchesV2.self), configurations: ModelConfiguration(url: storeURL))) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .migrationFailure, "\(error)")
            XCTAssertTrue("\(error)".contains("changes its value transformer"), "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: storeURL), before)
    }

    func testTransformersAreRegisteredByName() {
        let name = NSValueTransformerName("TransformableTestsSwatch")
        XCTAssertTrue(ValueTransformer.valueTransformerNames().contains(name))
        XCTAssertTrue(ValueTransformer.registered(forName: name) is SwatchTransformer)
        ValueTransformer.setValueTransformer(nil, forName: NSValueTransformerName("TransformableTestsGone"))
        XCTAssertNil(ValueTransformer.registered(forName: NSValueTransformerName("TransformableTestsGone")))
    }
}
