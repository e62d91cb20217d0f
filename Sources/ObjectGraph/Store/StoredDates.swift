import Foundation
import GRDB

/// The form a store keeps its dates in, and the one-time conversion of stores in the earlier form.
///
/// A store records `secondsSinceReferenceDate` under the `dates` key of its metadata table: its Date
/// columns, the dates inside its JSON columns and the dates its history keeps of deleted rows are
/// seconds since 2001, the number a `Date` holds, so they read back exactly (see `Date.storedValue`).
/// A store without that record was written by an earlier ObjectGraph, which kept seconds since 1970.
/// When such a store opens, before a migration stage or a context reads it, each of those values
/// becomes seconds since 2001, in one transaction: `d - 978,307,200`, the same subtraction that
/// `Date(timeIntervalSince1970:)` makes, so every date reads as it read before. (Between 1985 and
/// 2032 the subtraction is exact; elsewhere it rounds as reading did.)
enum StoredDates {
    static let metadataKey = "dates"
    static let currentForm = "secondsSinceReferenceDate"

    /// The store's recorded form of dates; nil for a store without one (written before the record).
    static func recordedForm(in db: Database) throws -> String? {
        try StoreSchemaWriter.metadataValue(metadataKey, in: db)
    }

    /// Records the current form in a store that has no record yet: a new store, whose every date is
    /// written in it. An existing store reaches this only after `convert` (see `StoreMigrator`).
    static func recordCurrentFormIfAbsent(in db: Database) throws {
        try db.execute(
            sql: "INSERT OR IGNORE INTO \(StoreSchemaWriter.metadataTable.quotedIdentifier) (\"key\", \"value\") VALUES (?, ?)",
            arguments: [metadataKey, currentForm])
    }

    /// The error for a store whose dates are in a form this version does not know (a later version's).
    static func unknownForm(_ form: String, at url: URL) -> SwiftDataError {
        SwiftDataError(
            .loadIssueModelContainer,
            "the store at \(url.path) keeps its dates as \"\(form)\", which this version of ObjectGraph does not read; "
                + "it was left untouched: open it with the version that wrote it, or a later one")
    }

    /// Converts the dates of the store at `url` to the current form, unless it records that form already
    /// (another process may have converted it since it was inspected). `dataSchema` is the schema its rows
    /// were written with; with `recorded`, only properties recorded with the same type are converted.
    /// `keepACopy` runs first, inside the conversion's transaction, once the store is known to need it:
    /// a copy read through another connection then holds the store as it was.
    static func convert(storeAt url: URL, dataSchema: Schema, recorded: StoredSchema?, keepACopy: () throws -> Void) throws {
        var configuration = Configuration()
        configuration.busyMode = SQLiteStore.busyMode
        do {
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            defer { try? queue.close() }
            // Immediate: two processes opening one old store convert it once, the second waiting for the first.
            try queue.inTransaction(.immediate) { db in
                switch try recordedForm(in: db) {
                case currentForm?: return .commit
                case let form?: throw unknownForm(form, at: url)
                case nil: break
                }
                do {
                    try keepACopy()
                } catch {
                    throw SwiftDataError(
                        .loadIssueModelContainer,
                        "cannot copy the store at \(url.path) before converting its dates: \(error); it was left untouched")
                }
                let converter = Converter(dataSchema: dataSchema, recorded: recorded)
                try converter.convertColumns(in: db)
                try converter.convertTombstones(in: db)
                try StoreSchemaWriter.createMetadataTable(in: db)
                try recordCurrentFormIfAbsent(in: db)
                return .commit
            }
        } catch let error as SwiftDataError {
            throw error
        } catch {
            throw SwiftDataError(
                .loadIssueModelContainer,
                "cannot convert the dates of the store at \(url.path) to seconds since 2001: \(error); it was left as it was")
        }
    }

    /// What one property's stored values need.
    private enum Conversion {
        /// A Date column (optional or not): seconds since 1970 less the offset.
        case seconds
        /// A JSON column whose value may hold dates: decoded as written and encoded again.
        case json(any Codable.Type)
    }

    private struct Converter {
        let dataSchema: Schema
        /// Each entity's properties that need converting, by name, found once.
        private var conversionsByEntity: [String: [String: Conversion]] = [:]

        init(dataSchema: Schema, recorded: StoredSchema?) {
            self.dataSchema = dataSchema
            for entity in dataSchema.entities {
                var conversions: [String: Conversion] = [:]
                for slot in entity.layout.columnSlots {
                    if let conversion = Self.conversion(of: slot, in: entity.name, recorded: recorded) {
                        conversions[slot.name] = conversion
                    }
                }
                conversionsByEntity[entity.name] = conversions
            }
        }

        private static func conversion(of slot: PropertySlot, in entity: String, recorded: StoredSchema?) -> Conversion? {
            guard let codec = slot.codec, slot.attribute?.transformer == nil else { return nil }
            // A property the store recorded with another type is not what this schema says it holds.
            if let recorded, recorded.entity(named: entity)?.property(named: slot.name)?.type != "\(slot.valueType)" { return nil }
            if codec.storesJSON {
                return (slot.wrappedValueType as? any Codable.Type).map { .json($0) }
            }
            return slot.wrappedValueType == Date.self ? .seconds : nil
        }

        func convertColumns(in db: Database) throws {
            for entity in dataSchema.entities {
                guard let conversions = conversionsByEntity[entity.name], !conversions.isEmpty,
                      try db.tableExists(entity.name) else { continue }
                let table = entity.name.quotedIdentifier
                let columns = Set(try db.columns(in: entity.name).map(\.name))
                for (name, conversion) in conversions.sorted(by: { $0.key < $1.key }) where columns.contains(name) {
                    let column = name.quotedIdentifier
                    switch conversion {
                    case .seconds:
                        try db.execute(
                            sql: "UPDATE \(table) SET \(column) = \(column) - ? WHERE typeof(\(column)) IN ('real', 'integer')",
                            arguments: [Date.timeIntervalBetween1970AndReferenceDate])
                    case .json(let type):
                        let rows = try Row.fetchAll(db, sql: "SELECT \"_pk\", \(column) FROM \(table) WHERE typeof(\(column)) = 'text'")
                        let update = try db.makeStatement(sql: "UPDATE \(table) SET \(column) = ? WHERE \"_pk\" = ?")
                        for row in rows {
                            let key: Int64 = row[0]
                            guard let text = String.fromDatabaseValue(row[1]),
                                  let converted = Self.reencoded(text, as: type) else { continue }
                            try update.execute(arguments: [converted, key])
                        }
                    }
                }
            }
        }

        /// The JSON text with its dates in the current form; nil when it holds none, or cannot be read
        /// as `type` (it stays as it is, and reads as the error it read as before).
        static func reencoded(_ text: String, as type: any Codable.Type) -> String? {
            func reencoded<T: Codable>(_ type: T.Type) -> String? {
                guard let value = try? JSONCoding.legacyDecoder.decode(T.self, from: Data(text.utf8)),
                      let legacy = try? JSONCoding.legacyEncoder.encode(value),
                      let current = try? JSONCoding.encoder.encode(value) else { return nil }
                // Encoded alike in both forms: the value holds no date, and its text is left as written.
                return legacy == current ? nil : String(decoding: current, as: UTF8.self)
            }
            return reencoded(type)
        }

        /// The values the history keeps of deleted rows (`.preserveValueOnDeletion`), in the column's form.
        func convertTombstones(in db: Database) throws {
            guard try db.tableExists(HistoryLog.table) else { return }
            let table = HistoryLog.table.quotedIdentifier
            // Only a delete with preserved values writes JSON, which starts `[[`, into its line.
            let rows = try Row.fetchAll(
                db, sql: "SELECT \"transaction\", \"changes\" FROM \(table) WHERE instr(\"changes\", '[[') > 0")
            for row in rows {
                let transaction: Int64 = row[0]
                // A row that cannot be read (written from outside ObjectGraph) is left as it is: reading
                // the history names it, and the store's data still opens.
                guard let changes = String.fromDatabaseValue(row[1]),
                      var runs = try? HistoryLog.decode(changes, transaction: transaction) else { continue }
                var changed = false
                for index in runs.indices {
                    guard let preserved = runs[index].preserved, let tombstones = runs[index].tombstones,
                          let conversions = conversionsByEntity[runs[index].entity] else { continue }
                    runs[index].tombstones = tombstones.map { values in
                        guard values.count == preserved.count else { return values }
                        return zip(preserved, values).map { name, value in
                            guard let conversion = conversions[name], let converted = Self.converted(value, by: conversion) else { return value }
                            changed = true
                            return converted
                        }
                    }
                }
                if changed {
                    try db.execute(sql: "UPDATE \(table) SET \"changes\" = ? WHERE \"transaction\" = ?",
                                   arguments: [try HistoryLog.encode(runs), transaction])
                }
            }
        }

        private static func converted(_ value: HistoryLog.PreservedValue, by conversion: Conversion) -> HistoryLog.PreservedValue? {
            switch (conversion, value) {
            case (.seconds, .real(let seconds)): .real(seconds - Date.timeIntervalBetween1970AndReferenceDate)
            case (.seconds, .integer(let seconds)): .real(Double(seconds) - Date.timeIntervalBetween1970AndReferenceDate)
            case (.json(let type), .text(let text)): reencoded(text, as: type).map { .text($0) }
            default: nil
            }
        }
    }
}
