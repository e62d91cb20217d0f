import Foundation
import GRDB

extension ModelContext {
    /// How many saved models match, for each value of an attribute: one `GROUP BY` query, for the
    /// counts beside filter choices. `matching` adds a full-text search (see ``search(_:for:where:weights:limit:offset:)``).
    ///
    /// ```swift
    /// let perLanguage = try context.counts(of: \Snippet.language, where: #Predicate { $0.isFavorite })
    /// ```
    public func counts<T: PersistentModel, Value: Hashable>(
        of keyPath: KeyPath<T, Value>, where predicate: Predicate<T>? = nil, matching text: String? = nil
    ) throws -> [Value: Int] {
        let (layout, grouping, codec) = try Self.grouping(of: keyPath, in: store)
        var result: [Value: Int] = [:]
        for (value, count) in try groupedCounts(layout, by: grouping, predicate: predicate, text: text) {
            guard let decoded = try codec.decode(value) as? Value else { continue }
            result[decoded, default: 0] += count
        }
        return result
    }

    /// How many saved models match, for each model a to-one relationship refers to (nil: none).
    public func counts<T: PersistentModel, Related: PersistentModel>(
        of keyPath: KeyPath<T, Related?>, where predicate: Predicate<T>? = nil, matching text: String? = nil
    ) throws -> [PersistentIdentifier?: Int] {
        let (layout, grouping, destination) = try Self.grouping(of: keyPath, in: store)
        var result: [PersistentIdentifier?: Int] = [:]
        for (value, count) in try groupedCounts(layout, by: grouping, predicate: predicate, text: text) {
            let identifier = Int64.fromDatabaseValue(value).map {
                PersistentIdentifier(entityName: destination, storeIdentifier: store.identifier, primaryKey: $0)
            }
            result[identifier, default: 0] += count
        }
        return result
    }

    /// How many saved models match, for each model of a to-many relationship (models without any
    /// related model are not counted).
    public func counts<T: PersistentModel, Related: PersistentModel>(
        ofEach keyPath: KeyPath<T, [Related]>, where predicate: Predicate<T>? = nil, matching text: String? = nil
    ) throws -> [PersistentIdentifier: Int] {
        let (layout, grouping, destination) = try Self.grouping(ofEach: keyPath, in: store)
        var result: [PersistentIdentifier: Int] = [:]
        for (value, count) in try groupedCounts(layout, by: grouping, predicate: predicate, text: text) {
            guard let key = Int64.fromDatabaseValue(value) else { continue }
            result[PersistentIdentifier(entityName: destination, storeIdentifier: store.identifier, primaryKey: key), default: 0] += count
        }
        return result
    }

    /// Reads ahead what the counts of `keyPath` for `predicate` will need, and keeps it as the counts
    /// keep it (following saves): the attribute's groups for every saved model, and the models that
    /// match each part of the predicate (see `matchingKeys`). The counts of that predicate, or of any
    /// combination of it with parts seen before, then run no SQL: call it when a store opens, for the
    /// counts a first page shows, so that page does not count the whole store in SQL. (Not in SwiftData.)
    ///
    /// ```swift
    /// try context.prepareCounts(of: \Snippet.language, where: #Predicate { $0.deletedAt == nil })
    /// ```
    public func prepareCounts<T: PersistentModel, Value: Hashable>(of keyPath: KeyPath<T, Value>, where predicate: Predicate<T>? = nil) throws {
        let (layout, grouping, _) = try Self.grouping(of: keyPath, in: store)
        try prepareCounts(layout, by: grouping, predicate: predicate)
    }

    /// Reads ahead what the counts per related model of a to-one relationship will need (see above).
    public func prepareCounts<T: PersistentModel, Related: PersistentModel>(
        of keyPath: KeyPath<T, Related?>, where predicate: Predicate<T>? = nil
    ) throws {
        let (layout, grouping, _) = try Self.grouping(of: keyPath, in: store)
        try prepareCounts(layout, by: grouping, predicate: predicate)
    }

    /// Reads ahead what the counts per related model of a to-many relationship will need (see above).
    public func prepareCounts<T: PersistentModel, Related: PersistentModel>(
        ofEach keyPath: KeyPath<T, [Related]>, where predicate: Predicate<T>? = nil
    ) throws {
        let (layout, grouping, _) = try Self.grouping(ofEach: keyPath, in: store)
        try prepareCounts(layout, by: grouping, predicate: predicate)
    }

    private func prepareCounts<T: PersistentModel>(_ layout: EntityLayout, by grouping: CountGrouping, predicate: Predicate<T>?) throws {
        // The groups' sets too, which the first count would otherwise make: for the three groupings
        // of 100,000 snippets, about 5 ms of the first list page after the store opened.
        try store.groupedKeys(layout, by: grouping).prepareCounts()
        _ = try matchingKeys(predicate, layout: layout)
    }

    /// The grouping of the counts per value of an attribute, and the attribute's codec.
    private static func grouping<T: PersistentModel, Value>(
        of keyPath: KeyPath<T, Value>, in store: SQLiteStore
    ) throws -> (EntityLayout, CountGrouping, AttributeCodec) {
        let layout = try store.layout(for: T.self)
        guard let slot = layout.slot(for: keyPath), let codec = slot.codec else {
            throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a stored attribute of \(layout.name)", entity: layout.name)
        }
        return (layout, .ownColumn("\(RowQuery.alias.quotedIdentifier).\(slot.name.quotedIdentifier)"), codec)
    }

    /// The grouping of the counts per related model of a to-one relationship, and the related entity.
    private static func grouping<T: PersistentModel, Related: PersistentModel>(
        of keyPath: KeyPath<T, Related?>, in store: SQLiteStore
    ) throws -> (EntityLayout, CountGrouping, String) {
        let layout = try store.layout(for: T.self)
        guard let slot = layout.slot(for: keyPath), slot.isForeignKey else {
            throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a to-one relationship of \(layout.name)", entity: layout.name)
        }
        return (layout, .ownColumn("\(RowQuery.alias.quotedIdentifier).\(slot.name.quotedIdentifier)"), layout.mapping(for: slot).destination.name)
    }

    /// The grouping of the counts per related model of a to-many relationship, and the related entity.
    private static func grouping<T: PersistentModel, Related: PersistentModel>(
        ofEach keyPath: KeyPath<T, [Related]>, in store: SQLiteStore
    ) throws -> (EntityLayout, CountGrouping, String) {
        let layout = try store.layout(for: T.self)
        guard let slot = layout.slot(for: keyPath), slot.isToMany else {
            throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a to-many relationship of \(layout.name)", entity: layout.name)
        }
        let mapping = layout.mapping(for: slot)
        switch mapping.storage {
        case .joinTable(let table):
            return (layout, .relatedRows(table: table.name, ownerColumn: table.ownColumn, groupColumn: table.otherColumn, ownersAllExist: true),
                    mapping.destination.name)
        case .inverseForeignKey(let column):
            return (layout, .relatedRows(table: mapping.destination.name, ownerColumn: column, groupColumn: "_pk", ownersAllExist: false),
                    mapping.destination.name)
        case .foreignKey:
            throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a to-many relationship", entity: layout.name)
        }
    }

    private func groupedCounts<T: PersistentModel>(
        _ layout: EntityLayout, by grouping: CountGrouping, predicate: Predicate<T>?, text: String?
    ) throws -> [(DatabaseValue, Int)] {
        // Key sets count a negated part by complement themselves, once the grouping's pairs are read.
        if let predicate, let split = NegatedRelationshipTest(predicate), store.keptGroupedKeys(layout, by: grouping) == nil {
            let every = try groupedCounts(layout, by: grouping, predicate: split.others, text: text)
            let holding = try groupedCounts(layout, by: grouping, predicate: split.othersAndTest, text: text)
            var counts = Dictionary(every, uniquingKeysWith: +)
            for (group, count) in holding { counts[group, default: 0] -= count }
            // Below zero, the two counts read different states of the store (outside a read
            // transaction, a save came between them): count directly instead.
            if counts.values.allSatisfy({ $0 >= 0 }) {
                return counts.filter { $0.value > 0 }.map { ($0.key, $0.value) }
            }
        }
        let alias = RowQuery.alias.quotedIdentifier
        var conditions: [String] = []
        var arguments: [DatabaseValue] = []
        var fullTextMatch: (index: FullTextIndex, match: String)?
        if let text {
            guard let match = FullTextQuery(text).matchExpression else { return [] }
            guard let index = store.fullTextIndexes[layout.name] else {
                throw SwiftDataError(.unsupportedPredicate, "\(layout.name) has no attribute marked @Attribute(.spotlight)", entity: layout.name)
            }
            let fts = index.tableName.quotedIdentifier
            conditions.append("\(alias).\"_pk\" IN (SELECT rowid FROM \(fts) WHERE \(fts) MATCH ?)")
            arguments.append(match.databaseValue)
            fullTextMatch = (index, match)
        }
        // Without a full-text match the count walks the rows the condition picks: a to-many test is
        // best a set made once. With one, the index's hits drive the count and each hit is tested on
        // its own (the set made a common word's counts per language 30 -> 36 ms).
        let use: ConditionUse = text == nil ? .collectingMatches : .testingRows
        var predicateCondition: SQLFragment?
        if let predicate {
            let condition = try PredicateTranslator.translate(predicate, layout: layout, store: store, use: use)
            predicateCondition = condition
            conditions.append(condition.sql)
            arguments += condition.arguments
        }
        /// The same conditions on one row at a time, for the count restricted to a save's rows: the
        /// full-text match by rowid, a to-many test by the row's own related rows (collecting a tag's
        /// owners again for every kept count, before and after each save, made saves at 100,000
        /// snippets 2.3 -> 5-9 ms). Made only when a result is kept.
        func rowCondition() throws -> SQLFragment {
            var rowConditions: [String] = []
            var rowArguments: [DatabaseValue] = []
            if let fullTextMatch {
                rowConditions.append(fullTextMatch.index.rowMatchCondition(alias: alias))
                rowArguments.append(fullTextMatch.match.databaseValue)
            }
            if let predicate {
                let row = try use == .testingRows ? predicateCondition : PredicateTranslator.translate(predicate, layout: layout, store: store)
                if let row {
                    rowConditions.append(row.sql)
                    rowArguments += row.arguments
                }
            }
            return SQLFragment(rowConditions.joined(separator: " AND "), rowArguments)
        }
        func whereClause(_ conditions: [String]) -> String {
            conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        }
        let filter = "FROM \(layout.name.quotedIdentifier) AS \(alias)" + whereClause(conditions)
        // Predicates become subqueries, which add no rows, so each row counts once per group and
        // COUNT(*) needs no DISTINCT and its sort.
        let sql: String
        switch grouping {
        case .ownColumn(let column):
            sql = "SELECT \(column), COUNT(*) \(filter) GROUP BY 1"
        case .relatedRows(let table, let ownerColumn, let groupColumn, _):
            // The matching rows' keys as a set, read from an index, and the related rows found by
            // owner: joining instead walked the whole join table and looked up each owner's row (with
            // its code) for the condition; 0.8 s against 0.2 s for the tags of 100,000 snippets.
            sql = "SELECT \"g\".\(groupColumn.quotedIdentifier), COUNT(*) FROM \(table.quotedIdentifier) AS \"g\" "
                + "WHERE \"g\".\(ownerColumn.quotedIdentifier) IN (SELECT \(alias).\"_pk\" \(filter)) GROUP BY 1"
        }
        /// The same count over a save's rows, made only when the result is kept; none (the result is
        /// dropped by a save that touches what it reads) if the predicate cannot be translated again.
        func upkeep() -> CountUpkeep? {
            guard let row = try? rowCondition() else { return nil }
            let rowWhere = row.sql.isEmpty ? "" : " WHERE \(row.sql)"
            let changedRows = CountUpkeep.fromChangedRows(of: layout.name)
            let restrictedSQL: String
            switch grouping {
            case .ownColumn(let column):
                restrictedSQL = "SELECT \(column), COUNT(*) \(changedRows)\(rowWhere) GROUP BY 1"
            case .relatedRows(let table, let ownerColumn, let groupColumn, _):
                // A few rows: each one's related rows found by owner.
                restrictedSQL = "SELECT \"g\".\(groupColumn.quotedIdentifier), COUNT(*) \(changedRows) "
                    + "CROSS JOIN \(table.quotedIdentifier) AS \"g\" ON \"g\".\(ownerColumn.quotedIdentifier) = \(alias).\"_pk\""
                    + "\(rowWhere) GROUP BY 1"
            }
            return CountUpkeep.grouped(entity: layout.name, restrictedSQL: restrictedSQL, arguments: row.arguments)
        }
        return try store.aggregateCache.value(sql: sql, arguments: arguments, upkeep: upkeep()) {
            // Once the grouping's pairs are read, from the kept key sets of the predicate's parts (see
            // `matchingKeys`) and of the full-text match. The pairs are looked up here, after the cache
            // noted the store's state: pairs from before a save with key sets from after it would be
            // kept as a wrong count.
            if let pairs = store.keptGroupedKeys(layout, by: grouping),
               var keys = try matchingKeys(predicate, layout: layout) {
                if let fullTextMatch {
                    // A common word's hits, read once for the page's counts, where each count ran the
                    // match again (20–50 ms apiece for a word in most snippets).
                    keys = keys.intersection(try fullTextKeys(layout, index: fullTextMatch.index, match: fullTextMatch.match))
                }
                return pairs.counts(of: keys)
            }
            if case .relatedRows(let table, let ownerColumn, let groupColumn, true) = grouping {
                let condition = SQLFragment(conditions.joined(separator: " AND "), arguments)
                // With a full-text match, the count a search of the same text and predicate makes.
                let matchingCount = {
                    if let fullTextMatch {
                        return try self.fullTextCount(
                            layout, index: fullTextMatch.index, match: fullTextMatch.match, condition: predicateCondition)
                    }
                    return try self.store.count(layout, condition: condition, rowCondition: rowCondition)
                }
                if let counts = try countsByComplement(
                    layout, table: table, ownerColumn: ownerColumn, groupColumn: groupColumn,
                    condition: condition, matchingCount: matchingCount) {
                    return counts
                }
            }
            return try store.read { db in
                try CountUpkeep.groupedRows(db, sql: sql, arguments: arguments)
            }
        }
    }

    /// The counts per related row of the owners that match `condition`, as every related row's
    /// count less that of the owners that do not; nil when most owners do not match, for which
    /// counting the matching ones directly is the cheaper way.
    ///
    /// Counting directly looks up the related rows of each matching owner: 0.1 s for the tags of the
    /// 100,000 snippets outside the trash, a page's sidebar after any change its counts could not
    /// follow (another process's write, the first page after a start). Counting every join row per
    /// tag reads one index (10 ms, kept until a save writes the join table, and shared by every
    /// condition); the owners that do not match (the trash) are few.
    ///
    /// `matchingCount` counts the owners that match `condition`, kept like any count (with the
    /// condition tested one row at a time for saves: the set form of a common word's match, run for
    /// every save, made each save 35 ms slower).
    private func countsByComplement(
        _ layout: EntityLayout, table: String, ownerColumn: String, groupColumn: String,
        condition: SQLFragment, matchingCount: () throws -> Int
    ) throws -> [(DatabaseValue, Int)]? {
        let total = try store.count(layout, condition: nil)
        let matching = condition.sql.isEmpty ? total : try matchingCount()
        guard matching * 2 > total else { return nil }
        let group = "\"g\".\(groupColumn.quotedIdentifier)"
        let owner = "\"g\".\(ownerColumn.quotedIdentifier)"
        let alias = RowQuery.alias.quotedIdentifier
        let everySQL = "SELECT \(group), COUNT(*) FROM \(table.quotedIdentifier) AS \"g\" GROUP BY 1"
        // Kept until a save writes the join table (no upkeep: it is one index read to count again).
        let every = try store.aggregateCache.value(sql: everySQL, arguments: []) {
            try store.read { db in try CountUpkeep.groupedRows(db, sql: everySQL, arguments: []) }
        }
        guard !condition.sql.isEmpty else { return every }
        // A row whose condition is false or NULL does not match (WHERE keeps only true).
        let othersSQL = "SELECT \(group), COUNT(*) FROM \(table.quotedIdentifier) AS \"g\" WHERE \(owner) IN "
            + "(SELECT \(alias).\"_pk\" FROM \(layout.name.quotedIdentifier) AS \(alias) WHERE NOT COALESCE((\(condition.sql)), 0)) GROUP BY 1"
        let others = try store.read { db in
            try CountUpkeep.groupedRows(db, sql: othersSQL, arguments: condition.arguments)
        }
        var counts = Dictionary(every, uniquingKeysWith: +)
        for (group, count) in others { counts[group, default: 0] -= count }
        // Below zero, the join table held rows the full count did not: count directly instead.
        guard counts.values.allSatisfy({ $0 >= 0 }) else { return nil }
        return counts.filter { $0.value > 0 }.map { ($0.key, $0.value) }
    }
}

/// What a grouped count groups by: a column of the counted rows, or the rows of another table
/// that refer to them (a to-many relationship's join table or inverse foreign key).
/// `ownersAllExist`: every row of that table refers to a row that exists (a join table, whose rows
/// leave with either side's), so its rows split into those of matching owners and of the others.
enum CountGrouping {
    case ownColumn(String)
    case relatedRows(table: String, ownerColumn: String, groupColumn: String, ownersAllExist: Bool)
}
