import Foundation
import ObjectGraph
import XCTest

/// A global actor of the program's own, which its data models are isolated to.
@globalActor actor LedgerActor {
    static let shared = LedgerActor()
}

/// Models isolated to a global actor other than the main actor: `@Model` makes their conformance to
/// `PersistentModel` isolated to that actor, as their generated members are. (Before, the conformance
/// was nonisolated, and the class did not compile: "crosses into global actor 'LedgerActor'-isolated
/// code".)
@LedgerActor
@Model
final class LedgerBook {
    var title: String
    @Relationship(deleteRule: .cascade, inverse: \LedgerEntry.book) var entries: [LedgerEntry] = []
    init(title: String) { self.title = title }
}

@LedgerActor
@Model
final class LedgerEntry {
    var amount: Int
    var book: LedgerBook?
    init(amount: Int) { self.amount = amount }
}

@LedgerActor
private func ledgerRoundTrip() throws -> (titles: [String], totals: [Int], entriesAfterDelete: Int) {
    let container = try ModelContainer(
        for: LedgerBook.self, LedgerEntry.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
    let context = ModelContext(container)
    for (title, amounts) in [("rent", [700, 710]), ("food", [40, 55, 61])] {
        let book = LedgerBook(title: title)
        context.insert(book)
        book.entries = amounts.map(LedgerEntry.init(amount:))
    }
    try context.save()

    let reader = ModelContext(container)
    let books = try reader.fetch(FetchDescriptor<LedgerBook>()).sorted { $0.title < $1.title }
    let totals = books.map { $0.entries.reduce(0) { $0 + $1.amount } }
    reader.delete(books[0])
    try reader.save()
    return (books.map(\.title), totals, try ModelContext(container).fetchCount(FetchDescriptor<LedgerEntry>()))
}

final class GlobalActorModelTests: XCTestCase {
    func testModelsIsolatedToAGlobalActorAreSavedRelatedFetchedAndCascaded() async throws {
        let result = try await ledgerRoundTrip()
        XCTAssertEqual(result.titles, ["food", "rent"])
        XCTAssertEqual(result.totals, [156, 1410])
        XCTAssertEqual(result.entriesAfterDelete, 2, "the food book's three entries went with it")
    }
}
