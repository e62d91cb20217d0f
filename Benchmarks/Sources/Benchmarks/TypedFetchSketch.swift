import CSQLite
import Foundation
import GRDB
import Observation

// A sketch, not a contender: what fetching every snippet would cost if `@Model` kept each property's
// value typed, in code it generates, instead of ObjectGraph's `[Any]` values beside a committed
// `[DatabaseValue]` row. Issue 8 wants ObjectGraph's fetch within 2× of raw SQLite; it is about 4×
// in instructions and 5× in time, and the work left is spread over the values' boxes, the committed
// row and the objects made per model (HISTORY.md, "why the rest is structural"). This measures how
// far that redesign would go before anyone builds it: `instructions.sh` counts it beside raw SQLite
// and ObjectGraph on the same store, and `--time-typed-sketch N` times the three, read with the same
// SQL through the same kind of GRDB pool.
//
// It keeps the costs a redesign could not drop, so that it is a floor, not an estimate: the model
// registered with its context by key; a to-one kept as its row's key and a to-many as a fault; a
// row's version kept for conflicts; every property read through the model's Observation registrar
// (what SwiftData's `@Model` expands to); the texts decoded as ObjectGraph decodes them (GRDB's
// `String(sqliteStatement:)`). It leaves out what a redesign would not need per fetched row: the
// `[DatabaseValue]` row with its `Data` for the UUID (a change would copy the old value aside on its
// first write instead), and the boxing of every value in `Any`.
//
// Three shapes of model, from the most like ObjectGraph's to the least:
// - `SketchSnippet`: a model, its storage object holding the typed values, and a registrar;
// - `InlineSketchSnippet`: the typed values in the model itself, and a registrar;
// - `UnobservedSketchSnippet`: the typed values in the model, no registrar, which SwiftData's API does
//   not allow (a view must see a model change): the floor of any layer that makes an object per row.

/// One row's values, typed: a value on the stack, from which each shape of model is made.
struct SketchRow {
    var primaryKey: Int64
    var version: Int64
    var uuid: UUID
    var title: String
    var code: String
    var notes: String
    var language: Lang
    var isFavorite: Bool
    var createdAt: Date
    var updatedAt: Date
    /// A to-one not yet read: the related row's key.
    var folderKey: Int64?
}

/// The context's side: the models it holds by key, as `ModelContext.registered` does.
final class SketchContext<Model: AnyObject> {
    var registered: [Int64: Model] = [:]
}

/// What a sketch model offers the benchmark's loop: the properties it reads.
protocol SketchModel: AnyObject {
    init(row: SketchRow, context: AnyObject)
    var uuid: UUID { get }
    var title: String { get }
    var code: String { get }
    var notes: String { get }
    var language: Lang { get }
    var isFavorite: Bool { get }
    var createdAt: Date { get }
    var updatedAt: Date { get }
}

/// The storage `@Model` would generate: the row's values and the bookkeeping a context needs (which
/// properties changed; a to-many not yet read).
final class SketchSnippetStorage {
    var row: SketchRow
    weak var context: AnyObject?
    /// One bit a property, set on first write, when its committed value would be copied aside.
    var changedProperties: UInt64 = 0
    var tagsAreFault = true

    init(row: SketchRow, context: AnyObject) {
        self.row = row
        self.context = context
    }
}

final class SketchSnippet: SketchModel, Observable {
    let storage: SketchSnippetStorage
    private let registrar = ObservationRegistrar()

    init(row: SketchRow, context: AnyObject) { storage = SketchSnippetStorage(row: row, context: context) }

    var uuid: UUID { registrar.access(self, keyPath: \.uuid); return storage.row.uuid }
    var title: String { registrar.access(self, keyPath: \.title); return storage.row.title }
    var code: String { registrar.access(self, keyPath: \.code); return storage.row.code }
    var notes: String { registrar.access(self, keyPath: \.notes); return storage.row.notes }
    var language: Lang { registrar.access(self, keyPath: \.language); return storage.row.language }
    var isFavorite: Bool { registrar.access(self, keyPath: \.isFavorite); return storage.row.isFavorite }
    var createdAt: Date { registrar.access(self, keyPath: \.createdAt); return storage.row.createdAt }
    var updatedAt: Date { registrar.access(self, keyPath: \.updatedAt); return storage.row.updatedAt }
}

final class InlineSketchSnippet: SketchModel, Observable {
    private let row: SketchRow
    weak var context: AnyObject?
    var changedProperties: UInt64 = 0
    var tagsAreFault = true
    private let registrar = ObservationRegistrar()

    init(row: SketchRow, context: AnyObject) {
        self.row = row
        self.context = context
    }

    var uuid: UUID { registrar.access(self, keyPath: \.uuid); return row.uuid }
    var title: String { registrar.access(self, keyPath: \.title); return row.title }
    var code: String { registrar.access(self, keyPath: \.code); return row.code }
    var notes: String { registrar.access(self, keyPath: \.notes); return row.notes }
    var language: Lang { registrar.access(self, keyPath: \.language); return row.language }
    var isFavorite: Bool { registrar.access(self, keyPath: \.isFavorite); return row.isFavorite }
    var createdAt: Date { registrar.access(self, keyPath: \.createdAt); return row.createdAt }
    var updatedAt: Date { registrar.access(self, keyPath: \.updatedAt); return row.updatedAt }
}

final class UnobservedSketchSnippet: SketchModel {
    private let row: SketchRow
    weak var context: AnyObject?
    var changedProperties: UInt64 = 0
    var tagsAreFault = true

    init(row: SketchRow, context: AnyObject) {
        self.row = row
        self.context = context
    }

    var uuid: UUID { row.uuid }
    var title: String { row.title }
    var code: String { row.code }
    var notes: String { row.notes }
    var language: Lang { row.language }
    var isFavorite: Bool { row.isFavorite }
    var createdAt: Date { row.createdAt }
    var updatedAt: Date { row.updatedAt }
}

/// Reads ObjectGraph's snippet table (the store `ObjectGraphContender` wrote) into sketch models.
final class TypedFetchSketch {
    private let pool: DatabasePool
    private let sql: String
    private let hasFolderColumn: Bool

    init(path: String) throws {
        pool = try DatabasePool(path: path)
        let columns = try pool.read { db in try db.columns(in: "OGSnippet").map(\.name) }
        let attributes = ["_pk", "_version", "uuid", "title", "code", "notes", "language", "isFavorite", "createdAt", "updatedAt"]
        guard attributes.allSatisfy(columns.contains) else { throw BenchmarkError("OGSnippet lacks one of \(attributes): \(columns)") }
        // The to-one's column is named by ObjectGraph; it is the one that names the folder.
        let folder = columns.first { $0.lowercased().contains("folder") }
        hasFolderColumn = folder != nil
        sql = "SELECT " + (attributes + (folder.map { [$0] } ?? [])).map { "\"\($0)\"" }.joined(separator: ", ")
            + " FROM \"OGSnippet\""
    }

    /// Fetches every snippet into `SketchSnippet`s and reads every attribute, as
    /// `ObjectGraphContender.fetchAllNow` does. Never inlined: `instructions.sh` counts the
    /// instructions run under its symbol (`--toggle-collect`).
    @inline(never) func fetchAllNow() throws -> Int { try fetchAndRead(SketchSnippet.self) }

    @inline(never) func fetchAllInlineNow() throws -> Int { try fetchAndRead(InlineSketchSnippet.self) }

    @inline(never) func fetchAllUnobservedNow() throws -> Int { try fetchAndRead(UnobservedSketchSnippet.self) }

    private func fetchAndRead<Model: SketchModel>(_ type: Model.Type) throws -> Int {
        let context = SketchContext<Model>()
        var sum = 0
        for snippet in try fetchAll(into: context) {
            sum &+= snippet.uuid.hashValue & 1
            sum &+= snippet.title.utf8.count + snippet.code.utf8.count + snippet.notes.utf8.count
            sum &+= snippet.language.rawValue.utf8.count + (snippet.isFavorite ? 1 : 0)
            sum &+= Int(snippet.createdAt.timeIntervalSince1970) & 1 + Int(snippet.updatedAt.timeIntervalSince1970) & 1
        }
        return sum
    }

    private func fetchAll<Model: SketchModel>(into context: SketchContext<Model>) throws -> [Model] {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: sql)
            let cursor = try Row.fetchCursor(statement)
            let columns = statement.sqliteStatement
            var models: [Model] = []
            context.registered.reserveCapacity(1024)
            while try cursor.next() != nil {
                let key = sqlite3_column_int64(columns, 0)
                if let existing = context.registered[key] {
                    models.append(existing)
                    continue
                }
                guard let blob = sqlite3_column_blob(columns, 2), sqlite3_column_bytes(columns, 2) == 16 else {
                    throw BenchmarkError("row \(key): uuid is not 16 bytes")
                }
                let languageText = String(sqliteStatement: columns, index: 6)
                guard let language = Lang(rawValue: languageText) else { throw BenchmarkError("row \(key): language \(languageText)") }
                let row = SketchRow(
                    primaryKey: key, version: sqlite3_column_int64(columns, 1),
                    uuid: UUID(uuid: blob.loadUnaligned(as: uuid_t.self)),
                    title: String(sqliteStatement: columns, index: 3), code: String(sqliteStatement: columns, index: 4),
                    notes: String(sqliteStatement: columns, index: 5), language: language,
                    isFavorite: sqlite3_column_int64(columns, 7) != 0,
                    createdAt: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(columns, 8)),
                    updatedAt: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(columns, 9)),
                    folderKey: hasFolderColumn && sqlite3_column_type(columns, 10) != SQLITE_NULL ? sqlite3_column_int64(columns, 10) : nil)
                let model = Model(row: row, context: context)
                context.registered[key] = model
                models.append(model)
            }
            return models
        }
    }
}
