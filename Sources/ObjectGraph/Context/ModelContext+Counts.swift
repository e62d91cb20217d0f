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
        let layout = try store.layout(for: T.self)
        guard let slot = layout.slot(for: keyPath), let codec = slot.codec else {
            throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a stored attribute of \(layout.name)", entity: layout.name)
        }
        let column = "\(RowQuery.alias.quotedIdentifier).\(slot.name.quotedIdentifier)"
        var result: [Value: Int] = [:]
        for (value, count) in try groupedCounts(layout, groupExpression: column, join: nil, predicate: predicate, text: text) {
            guard let decoded = try codec.decode(value) as? Value else { continue }
            result[decoded, default: 0] += count
        }
        return result
    }

    /// How many saved models match, for each model a to-one relationship refers to (nil: none).
    public func counts<T: PersistentModel, Related: PersistentModel>(
        of keyPath: KeyPath<T, Related?>, where predicate: Predicate<T>? = nil, matching text: String? = nil
    ) throws -> [PersistentIdentifier?: Int] {
        let layout = try store.layout(for: T.self)
        guard let slot = layout.slot(for: keyPath), slot.isForeignKey else {
            throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a to-one relationship of \(layout.name)", entity: layout.name)
        }
        let destination = layout.mapping(for: slot).destination.name
        let column = "\(RowQuery.alias.quotedIdentifier).\(slot.name.quotedIdentifier)"
        var result: [PersistentIdentifier?: Int] = [:]
        for (value, count) in try groupedCounts(layout, groupExpression: column, join: nil, predicate: predicate, text: text) {
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
        let layout = try store.layout(for: T.self)
        guard let slot = layout.slot(for: keyPath), slot.isToMany else {
            throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a to-many relationship of \(layout.name)", entity: layout.name)
        }
        let mapping = layout.mapping(for: slot)
        let alias = RowQuery.alias.quotedIdentifier
        let (join, group): (String, String)
        switch mapping.storage {
        case .joinTable(let table):
            join = "JOIN \(table.name.quotedIdentifier) AS \"g\" ON \"g\".\(table.ownColumn.quotedIdentifier) = \(alias).\"_pk\""
            group = "\"g\".\(table.otherColumn.quotedIdentifier)"
        case .inverseForeignKey(let column):
            join = "JOIN \(mapping.destination.name.quotedIdentifier) AS \"g\" ON \"g\".\(column.quotedIdentifier) = \(alias).\"_pk\""
            group = "\"g\".\"_pk\""
        case .foreignKey:
            throw SwiftDataError(.unsupportedKeyPath, "\(keyPath) is not a to-many relationship", entity: layout.name)
        }
        var result: [PersistentIdentifier: Int] = [:]
        for (value, count) in try groupedCounts(layout, groupExpression: group, join: join, predicate: predicate, text: text) {
            guard let key = Int64.fromDatabaseValue(value) else { continue }
            result[PersistentIdentifier(entityName: mapping.destination.name, storeIdentifier: store.identifier, primaryKey: key), default: 0] += count
        }
        return result
    }

    private func groupedCounts<T: PersistentModel>(
        _ layout: EntityLayout, groupExpression: String, join: String?, predicate: Predicate<T>?, text: String?
    ) throws -> [(DatabaseValue, Int)] {
        let alias = RowQuery.alias.quotedIdentifier
        // Each row counts once per group: the join is to the rows' own related keys (one per pair), and
        // predicates become subqueries, which add no rows; so COUNT(*) needs no DISTINCT and its sort.
        var sql = "SELECT \(groupExpression), COUNT(*) FROM \(layout.name.quotedIdentifier) AS \(alias)"
        var arguments: [DatabaseValue] = []
        var conditions: [String] = []
        if let join { sql += " \(join)" }
        if let text {
            guard let match = FullTextQuery(text).matchExpression else { return [] }
            guard let index = store.fullTextIndexes[layout.name] else {
                throw SwiftDataError(.unsupportedPredicate, "\(layout.name) has no attribute marked @Attribute(.spotlight)", entity: layout.name)
            }
            let fts = index.tableName.quotedIdentifier
            conditions.append("\(alias).\"_pk\" IN (SELECT rowid FROM \(fts) WHERE \(fts) MATCH ?)")
            arguments.append(match.databaseValue)
        }
        if let predicate {
            let condition = try PredicateTranslator.translate(predicate, layout: layout)
            conditions.append(condition.sql)
            arguments += condition.arguments
        }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += " GROUP BY 1"
        return try store.aggregateCache.value(sql: sql, arguments: arguments) {
            try store.writer.read { db in
                try Row.fetchAll(db.cachedStatement(sql: sql), arguments: StatementArguments(columnValues: arguments)).map { row in
                    (row[0] as DatabaseValue, row[1] as Int)
                }
            }
        }
    }
}
