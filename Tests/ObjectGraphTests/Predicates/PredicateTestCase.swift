import Foundation
@testable import ObjectGraph
import XCTest

/// Checks a predicate two ways: the SQL it becomes (a snapshot kept inline) and the rows it selects,
/// which must also be the rows Foundation's own `evaluate` keeps in memory.
class PredicateTestCase: StoreTestCase {
    var container: ModelContainer!
    var context: ModelContext!

    func open(_ types: any PersistentModel.Type...) throws {
        container = try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: storeURL))
        context = ModelContext(container)
    }

    func sql<T: PersistentModel>(_ predicate: Predicate<T>) throws -> String {
        try PredicateTranslator.translate(predicate, layout: container.store.layout(for: T.self), store: container.store).sql
    }

    /// Asserts the SQL snapshot, then that SQL and in-memory evaluation select the same models, named by `label`.
    func assertPredicate<T: PersistentModel>(
        _ predicate: Predicate<T>,
        sql expectedSQL: String? = nil,
        selects expected: [String],
        label: KeyPath<T, String>,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        if let expectedSQL { XCTAssertEqual(try sql(predicate), expectedSQL, "SQL snapshot", file: file, line: line) }
        let reader = ModelContext(container)
        let fromSQL = try reader.fetch(FetchDescriptor(predicate: predicate)).map { $0[keyPath: label] }.sorted()
        XCTAssertEqual(fromSQL, expected.sorted(), "rows selected by SQL", file: file, line: line)
        let all = try reader.fetch(FetchDescriptor<T>())
        let inMemory = try all.filter { try predicate.evaluate($0) }.map { $0[keyPath: label] }.sorted()
        XCTAssertEqual(fromSQL, inMemory, "SQL and Predicate.evaluate disagree", file: file, line: line)
        XCTAssertEqual(try reader.fetchCount(FetchDescriptor(predicate: predicate)), expected.count, "fetchCount", file: file, line: line)
    }
}
