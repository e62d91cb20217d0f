import Foundation
import GRDB

/// Translates a Foundation `Predicate` into a SQL condition on one entity's table.
enum PredicateTranslator {
    static func translate<T: PersistentModel>(_ predicate: Predicate<T>, layout: EntityLayout) throws -> SQLFragment {
        throw SwiftDataError(
            .unsupportedPredicate,
            "predicates on \(layout.name) cannot be translated to SQL yet: fetch without a predicate",
            entity: layout.name)
    }
}
