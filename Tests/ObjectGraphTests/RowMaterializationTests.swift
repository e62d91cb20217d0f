import Foundation
@testable import ObjectGraph
import XCTest

@Model final class Letter {
    var text: String
    init(text: String) { self.text = text }
}

/// A model whose properties have defaults, one of which makes a model of another type.
@Model final class Envelope {
    var label: String = "unlabelled"
    var stamps: Int = 1
    var sentAt = Date(timeIntervalSince1970: 0)
    @Transient var draft = Letter(text: "draft")

    init(label: String, stamps: Int, sentAt: Date) {
        self.label = label
        self.stamps = stamps
        self.sentAt = sentAt
    }
}

/// A model with a slot of every kind a row fills: attributes, a to-one's key, a to-many, a
/// one-to-one, transient properties with a default and without.
@Model final class Parcel {
    var label: String
    var weight: Double?
    var courier: Courier?
    @Relationship(inverse: \Sticker.parcels) var stickers: [Sticker] = []
    var waybill: Waybill?
    @Transient var handlings: Int = 7
    @Transient var remark: String?

    init(label: String, weight: Double?) {
        self.label = label
        self.weight = weight
    }
}

@Model final class Courier {
    var name: String
    init(name: String) { self.name = name }
}

@Model final class Sticker {
    var text: String
    var parcels: [Parcel] = []
    init(text: String) { self.text = text }
}

@Model final class Waybill {
    var code: String
    var parcel: Parcel?
    init(code: String) { self.code = code }
}

/// A model made from a row gets the row's backing data while its initializer runs.
final class RowMaterializationTests: StoreTestCase {
    /// Every slot of a fetched model holds what its row and declaration give it, whichever way the
    /// slot is filled: a column's value, a relationship's fault, a transient property's default.
    func testEverySlotOfAFetchedModelIsFilledFromItsRowOrItsDeclaration() throws {
        let container = try makeContainer(Parcel.self, Courier.self, Sticker.self, Waybill.self)
        let writer = ModelContext(container)
        let parcel = Parcel(label: "books", weight: 2.5)
        writer.insert(parcel)
        parcel.courier = Courier(name: "swift post")
        parcel.stickers = [Sticker(text: "fragile"), Sticker(text: "this way up")]
        parcel.waybill = Waybill(code: "WB-1")
        parcel.handlings = 99
        parcel.remark = "left at the door"
        writer.insert(Parcel(label: "empty box", weight: nil))
        try writer.save()

        let reader = ModelContext(container)
        let parcels = try reader.fetch(FetchDescriptor<Parcel>(sortBy: [SortDescriptor(\.label)]))
        XCTAssertEqual(parcels.map(\.label), ["books", "empty box"])
        let books = parcels[0], box = parcels[1]
        XCTAssertEqual(books.weight, 2.5)
        XCTAssertNil(box.weight)
        XCTAssertEqual(books.courier?.name, "swift post")
        XCTAssertNil(box.courier)
        XCTAssertEqual(books.stickers.map(\.text).sorted(), ["fragile", "this way up"])
        XCTAssertEqual(box.stickers.count, 0)
        XCTAssertEqual(books.waybill?.code, "WB-1")
        XCTAssertNil(box.waybill)
        // Transient properties are not stored: a fetched model has their declared defaults.
        XCTAssertEqual(books.handlings, 7)
        XCTAssertNil(books.remark)
        XCTAssertFalse(books.hasChanges)
        XCTAssertFalse(reader.hasChanges)

        // The one-to-one read from its other side, in a context of its own.
        let waybill = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<Waybill>()).first)
        XCTAssertEqual(waybill.parcel?.label, "books")
    }

    func testAFetchedModelHoldsItsRowAndTakesWritesOnceMade() throws {
        let container = try makeContainer(Envelope.self, Letter.self)
        let sent = Date(timeIntervalSince1970: 1_700_000_000)
        let writer = ModelContext(container)
        writer.insert(Envelope(label: "invoice", stamps: 3, sentAt: sent))
        try writer.save()

        let reader = ModelContext(container)
        let envelope = try XCTUnwrap(reader.fetch(FetchDescriptor<Envelope>()).first)
        // The defaults ran while the model was made, and were dropped.
        XCTAssertEqual(envelope.label, "invoice")
        XCTAssertEqual(envelope.stamps, 3)
        XCTAssertEqual(envelope.sentAt, sent)
        XCTAssertFalse(envelope.hasChanges)

        // Made, the model keeps what it is given.
        envelope.label = "receipt"
        XCTAssertEqual(envelope.label, "receipt")
        XCTAssertTrue(envelope.hasChanges)
        try reader.save()
        let third = ModelContext(container)
        XCTAssertEqual(try third.fetch(FetchDescriptor<Envelope>()).map(\.label), ["receipt"])
    }

    func testAModelMadeByAPropertyDefaultHasABackingDataOfItsOwn() throws {
        let container = try makeContainer(Envelope.self, Letter.self)
        let writer = ModelContext(container)
        writer.insert(Envelope(label: "invoice", stamps: 3, sentAt: .now))
        try writer.save()

        let envelope = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<Envelope>()).first)
        let draft = envelope.draft
        XCTAssertFalse(draft.storage === envelope.storage)
        XCTAssertEqual(draft.text, "draft")
        XCTAssertNil(draft.modelContext)
        draft.text = "dear sir"
        XCTAssertEqual(draft.text, "dear sir")
        XCTAssertEqual(envelope.label, "invoice")
    }

    /// A fetch makes a row's backing data of the fetched model type, from the class its entity's layout
    /// keeps, or, for another model type with the same entity name (another schema version's), of its
    /// own: never one model type's backing data under another's.
    func testAFetchedModelsBackingDataIsOfItsOwnTypeEvenUnderAnotherVersionsName() throws {
        let container = try makeContainer(ItemsV2.Item.self, ItemsV2.Box.self)
        let writer = ModelContext(container)
        writer.insert(ItemsV2.Item(name: "spoon", weight: 3))
        try writer.save()

        let current = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<ItemsV2.Item>()).first)
        XCTAssertTrue(type(of: current.persistentBackingData as AnyObject) == DefaultBackingData<ItemsV2.Item>.self)
        XCTAssertEqual(current.name, "spoon")

        // The entity "Item" of this container is ItemsV2's; ItemsV1.Item has the same name.
        let older = try ModelContext(container).fetch(FetchDescriptor<ItemsV1.Item>())
        XCTAssertEqual(older.count, 1)
        XCTAssertTrue(type(of: try XCTUnwrap(older.first).persistentBackingData as AnyObject) == DefaultBackingData<ItemsV1.Item>.self)
    }

    func testIdentifiersOfOtherEntitiesOrStoresWithTheSameKeyDiffer() throws {
        let snippet = PersistentIdentifier(entityName: "Snippet", storeIdentifier: "store", primaryKey: 1)
        let tag = PersistentIdentifier(entityName: "Tag", storeIdentifier: "store", primaryKey: 1)
        let elsewhere = PersistentIdentifier(entityName: "Snippet", storeIdentifier: "other", primaryKey: 1)
        let again = PersistentIdentifier(entityName: "Snippet", storeIdentifier: "store", primaryKey: 1)
        XCTAssertNotEqual(snippet, tag)
        XCTAssertNotEqual(snippet, elsewhere)
        XCTAssertEqual(snippet, again)
        XCTAssertEqual(snippet.hashValue, again.hashValue)
        XCTAssertEqual(Set([snippet, tag, elsewhere, again]).count, 3)

        // A context holds rows of two entities with the same key apart.
        let container = try makeContainer(Envelope.self, Letter.self)
        let writer = ModelContext(container)
        writer.insert(Envelope(label: "invoice", stamps: 3, sentAt: .now))
        writer.insert(Letter(text: "hello"))
        try writer.save()
        let reader = ModelContext(container)
        let envelope = try XCTUnwrap(reader.fetch(FetchDescriptor<Envelope>()).first)
        let letter = try XCTUnwrap(reader.fetch(FetchDescriptor<Letter>()).first)
        XCTAssertEqual(envelope.persistentModelID.primaryKey, letter.persistentModelID.primaryKey)
        XCTAssertTrue(reader.model(for: envelope.persistentModelID) === envelope)
        XCTAssertTrue(reader.model(for: letter.persistentModelID) === letter)
    }
}
