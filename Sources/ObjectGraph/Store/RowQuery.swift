import Foundation
import GRDB

/// A SELECT over one entity's table: condition, order, window. The order always ends with the
/// primary key, so that pages never repeat or skip rows that tie on the requested order. The key
/// runs in the direction of the last sort term: every index ends with the row's key, so an index
/// on the sorted columns then gives the rows in order and a LIMIT stops early. Against the
/// direction (`updatedAt DESC, _pk ASC`) SQLite sorts every matching row first, with its columns;
/// at 100,000 rows, the 2,000th page took 440 ms that way and 9 ms this way.
struct RowQuery {
    /// The alias of the queried entity's table, which conditions and orderings refer to.
    static let alias = "t0"

    /// The largest limit written into the SQL rather than bound (see `sql(selecting:from:)`).
    static let largestLiteralLimit = 100

    var condition: SQLFragment?
    var orderBy: [String] = []
    var limit: Int?
    var offset: Int?

    /// The one row with this primary key.
    static func row(_ primaryKey: Int64) -> RowQuery {
        RowQuery(condition: SQLFragment("\"_pk\" = ?", [primaryKey.databaseValue]), limit: 1)
    }

    /// The rows with these primary keys, in key order.
    static func rows(_ primaryKeys: [Int64]) -> RowQuery {
        RowQuery(condition: keyIsAmong(primaryKeys))
    }

    /// "The row's key is one of these": the keys bound as one JSON list, so one statement serves any number.
    static func keyIsAmong(_ primaryKeys: [Int64]) -> SQLFragment {
        SQLFragment("\(alias.quotedIdentifier).\"_pk\" IN (SELECT value FROM json_each(?))",
                    [SQLiteStore.jsonArray(primaryKeys).databaseValue])
    }

    func sql(selecting columns: String, from layout: EntityLayout) -> (String, [DatabaseValue]) {
        var sql = "SELECT \(columns) FROM \(layout.name.quotedIdentifier) AS \(Self.alias.quotedIdentifier)"
        var arguments: [DatabaseValue] = []
        if let condition {
            sql += " WHERE \(condition.sql)"
            arguments += condition.arguments
        }
        sql += " ORDER BY " + orderClause
        if limit != nil || offset != nil {
            // A page's limit is written into the SQL, not bound: SQLite plans for a literal LIMIT
            // only (a page of 25 is cheap to sort, so a filter's own index wins), and for `LIMIT ?`
            // plans as if every match were wanted, walking the date index and reading each row to
            // test the rest of the filter. A folder's snippets with an image took 22 ms for page 1
            // and 137 ms for page 4 that way at 100,000 snippets, 2 ms with the filter's index.
            // Larger limits stay bound, as the offset does (it does not change the plan): each text
            // is a statement the connection keeps prepared, and there are only so many page sizes.
            if let limit, (0...Self.largestLiteralLimit).contains(limit) {
                sql += " LIMIT \(limit)"
            } else {
                sql += " LIMIT ?"
                arguments.append((limit ?? -1).databaseValue)
            }
            sql += " OFFSET ?"
            arguments.append((offset ?? 0).databaseValue)
        }
        return (sql, arguments)
    }

    /// Like `sql(selecting:from:)`, but a limited query first finds its window's keys, and reads the
    /// columns of those rows only. When SQLite has to sort (a filter served by one index, an order by
    /// another), its sorter otherwise carries every matching row whole, long text included: at
    /// 100,000 snippets, the newest 25 in one language took 80 ms that way and 10 ms this way.
    func windowSQL(selecting columns: String, from layout: EntityLayout) -> (String, [DatabaseValue]) {
        guard limit != nil else { return sql(selecting: columns, from: layout) }
        let alias = Self.alias.quotedIdentifier
        let (keys, arguments) = sql(selecting: "\(alias).\"_pk\"", from: layout)
        let sql = "SELECT \(columns) FROM (\(keys)) AS \"window_keys\" "
            + "JOIN \(layout.name.quotedIdentifier) AS \(alias) ON \(alias).\"_pk\" = \"window_keys\".\"_pk\" ORDER BY \(orderClause)"
        return (sql, arguments)
    }

    /// The requested order, then the tie-break.
    private var orderClause: String {
        (orderBy + [Self.tieBreak(after: orderBy)]).joined(separator: ", ")
    }

    /// The primary-key term that ends an ORDER BY, in the direction of the term before it.
    static func tieBreak(after orderBy: [String]) -> String {
        let descending = orderBy.last?.hasSuffix(" DESC") ?? false
        return "\(alias.quotedIdentifier).\"_pk\"\(descending ? " DESC" : "")"
    }

    /// Translates sort descriptors to ORDER BY terms: attributes, enum raw values and to-one paths.
    static func orderBy<T: PersistentModel>(
        _ descriptors: [SortDescriptor<T>], layout: EntityLayout, store: SQLiteStore
    ) throws -> [String] {
        try descriptors.map { descriptor in
            guard let keyPath = descriptor.keyPath,
                  let term = try SortKeyPathResolver.orderTerm(for: keyPath, in: layout, store: store) else {
                throw SwiftDataError(
                    .unsupportedSortDescriptor,
                    "cannot sort \(layout.name) by \(descriptor.keyPath.map { "\($0)" } ?? "a comparator"): "
                        + "sort on stored attributes of \(layout.name) or of models it refers to, or their Codable members "
                        + "(not on one stored with @Attribute(.codable), an opaque value)",
                    entity: layout.name)
            }
            // Foundation puts nil first in forward order; so does SQLite's ASC.
            return "\(term) \(descriptor.order == .forward ? "ASC" : "DESC")"
        }
    }
}
