import Foundation
import GRDB

/// Counts made from kept sets of keys rather than by SQL aggregates.
///
/// A list page shows, for the filter it is asked, the total and the counts per folder, per language
/// and per tag, each for the filter less its own choice. Counted in SQL, each is a walk of every
/// matching row (5–8 ms per 94,000 rows at 100,000 snippets), and a filter not seen before walked
/// them four times: 21–23 ms for a first visit. Yet the filters are made of a few parts
/// (`Predicates.all`) that recur from one page to the next: the library, a folder, a tag, favourites.
///
/// So each part's matching keys are read once, as a `KeySet`, and each grouping's pairs of row and
/// group once, as `GroupedKeys`; both are kept in the aggregate cache and follow saves there as counts
/// do (what the save's rows matched before it is taken out, what they match after it put in). A count
/// is then the intersection of its parts' sets and a walk of the grouping's pairs, in memory: a filter
/// whose parts are all known costs no SQL at all, and a new part one walk of its own rows.
extension ModelContext {
    /// The keys of the saved models that match `predicate` (every model, for nil): the intersection
    /// of the key sets of its parts. Nil when a key is out of a set's range.
    ///
    /// With `unlessAllNew`, nil too when no part's set is kept: a total alone is one SQL count, where
    /// reading a part's set costs as much and more (every key, from an index, into the set), and after
    /// another process's write (which drops every set) each page would read them all again. A page's
    /// counts per group, which come after its total, read the sets its total did not.
    func matchingKeys<T: PersistentModel>(_ predicate: Predicate<T>?, layout: EntityLayout, unlessAllNew: Bool = false) throws -> KeySet? {
        // Each part's set: a negated to-many test's is that of the test it negates (its holders, found
        // from the join table's index, are taken out of what the other parts match below: the negation
        // itself makes SQLite test every model against that set). Translated once, for the check too.
        let sets = try Self.parts(of: predicate).map { part in
            let operand = part.flatMap { NegatedRelationshipTest<T>.operand(of: $0) }
            let set = operand ?? part
            return (set: set, isExcluded: operand != nil, query: try keySetQuery(of: set, layout: layout))
        }
        if unlessAllNew {
            guard sets.contains(where: { isKept($0.query) }) else { return nil }
        }
        var matching: KeySet?
        var excluded: [KeySet] = []
        for part in sets {
            let keys = try keySet(of: part.set, query: part.query, layout: layout)
            if part.isExcluded {
                excluded.append(keys)
            } else {
                matching = matching.map { $0.intersection(keys) } ?? keys
            }
        }
        // Only negated parts: every model less the holders.
        let every = Predicate<T>?.none
        var result = try matching ?? keySet(of: every, query: keySetQuery(of: every, layout: layout), layout: layout)
        for holders in excluded { result = result.subtracting(holders) }
        return result.unrepresentable ? nil : result
    }

    /// The parts of a predicate that are kept as key sets of their own: those of `Predicates.all`, or
    /// the predicate itself; `[nil]` (every model) for none.
    static func parts<T>(of predicate: Predicate<T>?) -> [Predicate<T>?] {
        guard let predicate else { return [nil] }
        return Predicates.conjuncts(of: predicate)
    }

    /// The statement that reads the keys of the saved models that match one part.
    private func keySetQuery<T: PersistentModel>(of part: Predicate<T>?, layout: EntityLayout) throws -> SQLFragment {
        let alias = RowQuery.alias.quotedIdentifier
        let condition = try part.map { try PredicateTranslator.translate($0, layout: layout, store: store, use: .collectingMatches) }
        if let owners = condition?.ownerKeys { return SQLFragment(owners.sql, owners.arguments) }
        let whereClause = condition.map { $0.sql.isEmpty ? "" : " WHERE \($0.sql)" } ?? ""
        return SQLFragment("SELECT \(alias).\"_pk\" FROM \(layout.name.quotedIdentifier) AS \(alias)\(whereClause)", condition?.arguments ?? [])
    }

    private func isKept(_ query: SQLFragment) -> Bool {
        let kept: KeySet? = store.aggregateCache.keptValue(sql: query.sql, arguments: query.arguments)
        return kept != nil
    }

    /// The keys of the saved models that match one part, kept; a save tests its own rows again.
    private func keySet<T: PersistentModel>(of part: Predicate<T>?, query: SQLFragment, layout: EntityLayout) throws -> KeySet {
        /// The same test on a save's rows, each row testing its own related rows (see `ConditionUse`).
        func upkeep() -> CountUpkeep? {
            var row: SQLFragment?
            if let part {
                guard let translated = try? PredicateTranslator.translate(part, layout: layout, store: store) else { return nil }
                row = translated
            }
            let rowWhere = row.map { $0.sql.isEmpty ? "" : " WHERE \($0.sql)" } ?? ""
            let restrictedSQL = "SELECT \(RowQuery.alias.quotedIdentifier).\"_pk\" \(CountUpkeep.fromChangedRows(of: layout.name))\(rowWhere)"
            return CountUpkeep.keys(entity: layout.name, restrictedSQL: restrictedSQL, arguments: row?.arguments ?? [])
        }
        return try store.aggregateCache.value(sql: query.sql, arguments: query.arguments, upkeep: upkeep()) {
            try store.read { db in try Self.keySet(db, sql: query.sql, arguments: query.arguments) }
        }
    }

    /// The keys of the rows whose full-text entry matches `match`, kept; a save tests its own rows'
    /// entries again.
    ///
    /// `reading`, when given, reads the set in place of the walk of the word's entries here, if it is
    /// not kept: a ranking of the index alone collects them as it goes (see
    /// `FullTextRanking.best(_:_:sql:arguments:lengths:scoringOnly:collectingHits:filteredInWhere:)`).
    func fullTextKeys(
        _ layout: EntityLayout, index: FullTextIndex, match: String, reading: (() throws -> KeySet)? = nil
    ) throws -> KeySet {
        let sql = Self.fullTextKeysSQL(index)
        let restrictedSQL = "SELECT \(RowQuery.alias.quotedIdentifier).\"_pk\" \(CountUpkeep.fromChangedRows(of: layout.name)) "
            + "WHERE \(index.rowMatchCondition(alias: RowQuery.alias.quotedIdentifier))"
        let upkeep = CountUpkeep.keys(entity: layout.name, restrictedSQL: restrictedSQL, arguments: [match.databaseValue])
        return try store.aggregateCache.value(sql: sql, arguments: [match.databaseValue], upkeep: upkeep) {
            if let reading { return try reading() }
            return try store.read { db in try Self.keySet(db, sql: sql, arguments: [match.databaseValue]) }
        }
    }

    /// The kept keys of the rows whose full-text entry matches `match`, if a search read them.
    func keptFullTextKeys(_ index: FullTextIndex, match: String) -> KeySet? {
        store.aggregateCache.keptValue(sql: Self.fullTextKeysSQL(index), arguments: [match.databaseValue])
    }

    private static func fullTextKeysSQL(_ index: FullTextIndex) -> String {
        let fts = index.tableName.quotedIdentifier
        return "SELECT rowid FROM \(fts) WHERE \(fts) MATCH ?"
    }

    /// The keys a statement returns, as a set.
    private static func keySet(_ db: Database, sql: String, arguments: [DatabaseValue]) throws -> KeySet {
        var keys = KeySet()
        let cursor = try Int64.fetchCursor(db.cachedStatement(sql: sql), arguments: StatementArguments(columnValues: arguments))
        while let key = try cursor.next() { keys.insert(key) }
        return keys
    }
}
