import Foundation
import ObjectGraph

enum Genre: String, Codable, CaseIterable { case fiction, poetry, kids }
enum Priority: Int, Codable { case low = 1, high = 2 }
enum Shape: Codable, Equatable {
    case circle(radius: Double)
    case square(side: Double)
}
struct ColorData: Codable, Hashable {
    var red: Double
    var green: Double
    var blue: Double
    var alpha: Double = 1
}

/// One attribute of every supported type, each with a default so tests set only what they check.
@Model final class AllTypes {
    var int: Int = 0
    var int8: Int8 = 0
    var int16: Int16 = 0
    var int32: Int32 = 0
    var int64: Int64 = 0
    var uint: UInt = 0
    var uint8: UInt8 = 0
    var uint16: UInt16 = 0
    var uint32: UInt32 = 0
    var uint64: UInt64 = 0
    var double: Double = 0
    var float: Float = 0
    var decimal: Decimal = 0
    var bool: Bool = false
    var string: String = ""
    var data: Data = Data()
    var date: Date = Date(timeIntervalSince1970: 0)
    var url: URL = URL(fileURLWithPath: "/")
    var uuid: UUID = UUID()
    var optionalInt: Int?
    var optionalDouble: Double?
    var optionalString: String?
    var optionalDate: Date?
    var optionalUUID: UUID?
    var optionalURL: URL?
    var optionalData: Data?
    var optionalDecimal: Decimal?
    var genre: Genre = Genre.fiction
    var optionalGenre: Genre?
    var priority: Priority = Priority.low
    var shape: Shape = Shape.circle(radius: 1)
    var color: ColorData = ColorData(red: 0, green: 0, blue: 0)
    var optionalColor: ColorData?
    var words: [String] = []
    var scores: [String: Double]?

    init() {}
}

@Model final class Note {
    var title: String
    var body: String = ""
    var createdAt: Date = Date.now
    var priority: Priority?
    @Transient var wordCount: Int = 0

    init(title: String, body: String = "") {
        self.title = title
        self.body = body
    }
}

@Model final class Label {
    @Attribute(.unique) var name: String
    var uses: Int = 0

    init(name: String, uses: Int = 0) {
        self.name = name
        self.uses = uses
    }
}

@Model final class Photo {
    var caption: String
    @Attribute(.externalStorage) var image: Data?

    init(caption: String, image: Data? = nil) {
        self.caption = caption
        self.image = image
    }
}

/// `let` and a `var` whose type is inferred: Swift keeps both in the instance.
@Model final class Account {
    let number: String
    var openedAt = Date(timeIntervalSince1970: 1_000)
    var balance: Decimal = 0

    init(number: String) {
        self.number = number
    }
}

/// A stored property named `id`, as many SwiftData models have.
@Model final class Ticket {
    @Attribute(.unique) var id: UUID
    var subject: String

    init(id: UUID = UUID(), subject: String) {
        self.id = id
        self.subject = subject
    }
}

@Model public final class PublicThing {
    public var name: String
    @Attribute(originalName: "size") public var weight: Double = 1

    public init(name: String) {
        self.name = name
    }
}

@Model final class Draft {
    var text: String
    @Attribute(.transient) var cursor: Int = 0
    @Attribute(.ephemeral) var selection: String?

    init(text: String) {
        self.text = text
    }
}

/// A model that cannot be stored: a property of a type ObjectGraph has no column for.
struct NotCodable { var value: Int }
@Model final class Unstorable {
    var thing: NotCodable = NotCodable(value: 1)
    init() {}
}

@Model final class Budget {
    var name: String
    @Relationship(deleteRule: .cascade) var transactions: [Transaction] = []

    init(name: String) {
        self.name = name
    }
}

@Model final class Transaction {
    var note: String
    var amount: Decimal
    var budget: Budget?

    init(note: String, amount: Decimal) {
        self.note = note
        self.amount = amount
    }
}

enum LibrarySchemaV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Book.self] }

    @Model final class Book {
        var title: String
        var genre: Genre = Genre.fiction

        init(title: String) {
            self.title = title
        }
    }
}

/// Property names that are Swift keywords, written in backticks.
@Model final class Keyworded {
    var `default`: String
    var `class`: Int = 0

    init(default value: String) {
        self.default = value
    }
}

/// An actor that names the protocol `@ModelActor` would add.
@ModelActor
actor ExplicitModelActor: ModelActor {
    func count() throws -> Int { try modelContext.fetchCount(FetchDescriptor<Keyworded>()) }
}
