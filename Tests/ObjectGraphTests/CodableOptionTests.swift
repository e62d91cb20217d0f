import Foundation
import GRDB
import ObjectGraph
import XCTest

// `@Attribute(.codable)` (SwiftData, 2026): the value's Codable representation as one opaque value.
// Versions of one entity, as an app's history would have them.

struct StreetAddress: Codable, Hashable {
    var street: String
    var city: String
}

/// `StreetAddress` renamed, with a field added that old values do not have.
struct PostalAddress: Codable, Hashable {
    var street: String
    var city: String
    var postcode: String?
}

enum ContactMood: String, Codable {
    case calm, busy
}

enum ContactsV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Contact.self] }

    @Model final class Contact {
        var name: String
        @Attribute(.codable) var address: StreetAddress
        @Attribute(.codable) var rank: Int
        @Attribute(.codable) var mood: ContactMood?
        @Attribute(.codable) var nicknames: [String]
        var plainRank: Int
        var plainAddress: StreetAddress
        init(name: String, address: StreetAddress, rank: Int) {
            self.name = name
            self.address = address
            self.rank = rank
            self.nicknames = []
            self.plainRank = rank
            self.plainAddress = address
        }
    }
}

/// The `.codable` attributes change type: the address's struct is renamed and grows a field, the
/// rank becomes a `Double`.
enum ContactsV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Contact.self] }

    @Model final class Contact {
        var name: String
        @Attribute(.codable) var address: PostalAddress
        @Attribute(.codable) var rank: Double
        @Attribute(.codable) var mood: ContactMood?
        @Attribute(.codable) var nicknames: [String]
        var plainRank: Int
        var plainAddress: StreetAddress
        init(name: String) {
            self.name = name
            self.address = PostalAddress(street: "", city: "")
            self.rank = 0
            self.nicknames = []
            self.plainRank = 0
            self.plainAddress = StreetAddress(street: "", city: "")
        }
    }
}

/// `.codable` added to a number, which is stored as a number without it.
enum ContactsCodableNumber: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] { [Contact.self] }

    @Model final class Contact {
        var name: String
        @Attribute(.codable) var address: StreetAddress
        @Attribute(.codable) var rank: Int
        @Attribute(.codable) var mood: ContactMood?
        @Attribute(.codable) var nicknames: [String]
        @Attribute(.codable) var plainRank: Int
        var plainAddress: StreetAddress
        init(name: String) {
            self.name = name
            self.address = StreetAddress(street: "", city: "")
            self.rank = 0
            self.nicknames = []
            self.plainRank = 0
            self.plainAddress = StreetAddress(street: "", city: "")
        }
    }
}

/// `.codable` added to a struct, which is stored as JSON text without it too; and a plain type
/// change of a `.codable` attribute to one that is not.
enum ContactsCodableStruct: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(4, 0, 0) }
    static var models: [any PersistentModel.Type] { [Contact.self] }

    @Model final class Contact {
        var name: String
        @Attribute(.codable) var address: StreetAddress
        @Attribute(.codable) var rank: Int
        @Attribute(.codable) var mood: ContactMood?
        @Attribute(.codable) var nicknames: [String]
        var plainRank: Int
        @Attribute(.codable) var plainAddress: StreetAddress
        init(name: String) {
            self.name = name
            self.address = StreetAddress(street: "", city: "")
            self.rank = 0
            self.nicknames = []
            self.plainRank = 0
            self.plainAddress = StreetAddress(street: "", city: "")
        }
    }
}

final class CodableOptionTests: StoreTestCase {
    private typealias Contact = ContactsV1.Contact

    private func container<V: VersionedSchema>(_ version: V.Type) throws -> ModelContainer {
        try ModelContainer(for: Schema(versionedSchema: version), configurations: ModelConfiguration(url: storeURL))
    }

    /// Ada (rank 3, busy, two nicknames) and Grace (rank 12, no mood), saved at V1.
    private func makeV1Store() throws {
        let context = ModelContext(try container(ContactsV1.self))
        let ada = Contact(name: "Ada", address: StreetAddress(street: "1 Analytical Way", city: "London"), rank: 3)
        ada.mood = .busy
        ada.nicknames = ["Countess", "Enchantress of \"Numbers\""]
        context.insert(ada)
        context.insert(Contact(name: "Grace", address: StreetAddress(street: "2 Compiler Rd", city: "Arlington"), rank: 12))
        try context.save()
    }

    func testACodableAttributeIsStoredAsItsJSONTextAndReadBack() throws {
        try makeV1Store()
        let rows = try rawRows("""
            SELECT name, rank, typeof(rank) AS rankType, mood, address, nicknames, plainRank, typeof(plainRank) AS plainType
            FROM Contact ORDER BY name
            """)
        XCTAssertEqual(rows.count, 2)
        let ada = rows[0]
        // The number and the enum are JSON text with `.codable`, their own column types without it.
        XCTAssertEqual(ada["rankType"] as DatabaseValue, "text".databaseValue)
        XCTAssertEqual(ada["rank"] as DatabaseValue, "3".databaseValue)
        XCTAssertEqual(ada["plainType"] as DatabaseValue, "integer".databaseValue)
        XCTAssertEqual(ada["mood"] as DatabaseValue, "\"busy\"".databaseValue)
        XCTAssertEqual(ada["address"] as DatabaseValue, #"{"city":"London","street":"1 Analytical Way"}"#.databaseValue)
        XCTAssertEqual(ada["nicknames"] as DatabaseValue, #"["Countess","Enchantress of \"Numbers\""]"#.databaseValue)
        XCTAssertTrue((rows[1]["mood"] as DatabaseValue).isNull, "nil is NULL, not the text null")

        let context = ModelContext(try container(ContactsV1.self))
        let model = try XCTUnwrap(context.fetch(FetchDescriptor<Contact>(predicate: #Predicate { $0.name == "Ada" })).first)
        XCTAssertEqual(model.rank, 3)
        XCTAssertEqual(model.mood, .busy)
        XCTAssertEqual(model.address, StreetAddress(street: "1 Analytical Way", city: "London"))
        XCTAssertEqual(model.nicknames, ["Countess", "Enchantress of \"Numbers\""])

        // An edit is saved as JSON too, and an unchanged value is no change.
        model.rank = 4
        model.mood = nil
        XCTAssertTrue(model.hasChanges)
        try context.save()
        let edited = try rawRows("SELECT rank, mood FROM Contact WHERE name = 'Ada'")[0]
        XCTAssertEqual(edited["rank"] as DatabaseValue, "4".databaseValue)
        XCTAssertTrue((edited["mood"] as DatabaseValue).isNull)
        model.address = StreetAddress(street: "1 Analytical Way", city: "London")
        XCTAssertFalse(model.hasChanges, "the same value encodes to the same text")
    }

    /// As SwiftData documents: a `.codable` value cannot be filtered or sorted on. Reading its JSON
    /// text in SQL would compare text (`"12" < "3"`), so the fetch says why instead of answering wrongly.
    func testPredicatesAndSortsOnACodableAttributeAreRefusedClearly() throws {
        try makeV1Store()
        let context = ModelContext(try container(ContactsV1.self))
        let busy: ContactMood? = .busy
        let refusedPredicates: [Predicate<Contact>] = [
            #Predicate { $0.rank > 5 },
            #Predicate { $0.address.city == "London" },
            #Predicate { $0.mood == busy },
            #Predicate { $0.name == "Ada" && $0.nicknames.contains("Countess") },
        ]
        for predicate in refusedPredicates {
            XCTAssertThrowsError(try context.fetch(FetchDescriptor(predicate: predicate))) { error in
                let error = error as? SwiftDataError
                XCTAssertEqual(error?.code, .unsupportedPredicate)
                XCTAssertTrue(error?.message.contains("Contact.") == true && error?.message.contains("@Attribute(.codable)") == true,
                              error?.message ?? "")
            }
            XCTAssertThrowsError(try context.fetchCount(FetchDescriptor(predicate: predicate)))
        }
        XCTAssertThrowsError(try context.fetch(FetchDescriptor<Contact>(sortBy: [SortDescriptor(\.rank)]))) { error in
            let error = error as? SwiftDataError
            XCTAssertEqual(error?.code, .unsupportedSortDescriptor)
            XCTAssertTrue(error?.message.contains("@Attribute(.codable)") == true, error?.message ?? "")
        }

        // The same values without `.codable` filter and sort in SQL.
        let ranked = try context.fetch(FetchDescriptor<Contact>(
            predicate: #Predicate { $0.plainRank > 5 || $0.plainAddress.city == "London" }, sortBy: [SortDescriptor(\.plainRank)]))
        XCTAssertEqual(ranked.map(\.name), ["Ada", "Grace"])
        XCTAssertEqual(try context.fetch(FetchDescriptor<Contact>(predicate: #Predicate { $0.plainRank > 5 })).map(\.name), ["Grace"])
    }

    /// SwiftData's option asks for no migration stage when the type changes: the stored text is
    /// decoded as the new type when read.
    func testACodableAttributesTypeChangesWithoutAMigrationStage() throws {
        try makeV1Store()
        let context = ModelContext(try container(ContactsV2.self))
        let contacts = try context.fetch(FetchDescriptor<ContactsV2.Contact>(sortBy: [SortDescriptor(\.name)]))
        XCTAssertEqual(contacts.map(\.name), ["Ada", "Grace"])
        XCTAssertEqual(contacts[0].address, PostalAddress(street: "1 Analytical Way", city: "London", postcode: nil))
        XCTAssertEqual(contacts.map(\.rank), [3.0, 12.0])
        contacts[1].address.postcode = "22201"
        contacts[1].rank = 12.5
        try context.save()
        let grace = try rawRows("SELECT address, rank FROM Contact WHERE name = 'Grace'")[0]
        XCTAssertEqual(grace["address"] as DatabaseValue, #"{"city":"Arlington","postcode":"22201","street":"2 Compiler Rd"}"#.databaseValue)
        XCTAssertEqual(grace["rank"] as DatabaseValue, "12.5".databaseValue)
    }

    /// Adding `.codable` to a struct keeps its JSON text as it is; adding it to a number would leave
    /// numbers where JSON text is expected, so it is refused with the store unchanged, like a type change.
    func testAddingCodableIsAllowedWhereTheStoredFormStaysTheSame() throws {
        try makeV1Store()
        let before = try Data(contentsOf: storeURL)
        XCTAssertThrowsError(try container(ContactsCodableNumber.self)) { error in
            let error = error as? SwiftDataError
            XCTAssertEqual(error?.code, .migrationFailure)
            XCTAssertEqual(error?.propertyName, "plainRank")
            XCTAssertTrue(error?.message.contains("adds @Attribute(.codable)") == true, error?.message ?? "")
        }
        XCTAssertEqual(try Data(contentsOf: storeURL), before)

        let context = ModelContext(try container(ContactsCodableStruct.self))
        let contacts = try context.fetch(FetchDescriptor<ContactsCodableStruct.Contact>(predicate: #Predicate { $0.plainRank > 5 }))
        XCTAssertEqual(contacts.map(\.plainAddress), [StreetAddress(street: "2 Compiler Rd", city: "Arlington")])
    }

    /// A `.codable` attribute whose type cannot be encoded is refused when the schema is made, as
    /// any attribute of an unsupported type is.
    func testCodableOnATypeThatIsNotCodableIsRefusedByTheSchema() throws {
        XCTAssertThrowsError(try makeContainer(NotCodableHolder.self)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedAttributeType, "\(error)")
        }
    }
}

/// A reference type that is not Codable, marked `.codable` all the same.
final class OpaqueHandle: @unchecked Sendable {
    let number: Int
    init(number: Int) { self.number = number }
}

@Model final class NotCodableHolder {
    @Attribute(.codable) var handle: OpaqueHandle
    init(handle: OpaqueHandle) { self.handle = handle }
}
