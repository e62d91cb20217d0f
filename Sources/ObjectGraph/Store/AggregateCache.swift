import Foundation
import GRDB

/// What one save wrote, table by table: the aggregate cache drops only the results that read it.
struct StoreChange {
    /// Tables that gained or lost rows (inserts, deletes, join rows, full-text index entries).
    var tablesWithRowsChanged: Set<String> = []
    /// Columns updated in rows that stayed, by table.
    var updatedColumns: [String: Set<String>] = [:]

    mutating func rowsChanged(in table: String) {
        tablesWithRowsChanged.insert(table)
    }

    mutating func columnsUpdated(_ columns: some Sequence<String>, in table: String) {
        updatedColumns[table, default: []].formUnion(columns)
    }
}

/// Results of count queries, kept until the store changes what they read.
///
/// A list page asks for the same counts on every visit (per folder, per tag, per language, the
/// total), and each is a scan of the whole table: at 100,000 rows they cost far more than the page
/// itself. They only change when the store does, so they are answered from here until then.
///
/// A save through this store reports what it wrote (`storeDidChange(_:)`), and only the results whose
/// SQL names a written table (and, for rows updated in place, one of the updated columns) are dropped:
/// toggling a favourite leaves the counts per tag, which take 0.15 s to recompute at 100,000 snippets,
/// as they were. A write by another process (say, a command-line import while the server runs) or
/// another container cannot say what it wrote, so it drops everything. It is noticed by the store
/// file's write-ahead log changing size or time, confirmed by the writer connection's
/// `PRAGMA data_version`, which changes for every commit but that connection's own: a save here
/// changes the log too, and must not count as a stranger's.
final class AggregateCache: @unchecked Sendable {
    private struct Key: Hashable {
        let sql: String
        let arguments: [DatabaseValue]
    }

    private struct Entry {
        let value: Any
        /// Every identifier the SQL names (tables and columns alike): what a write must touch to drop it.
        let reads: Set<String>
    }

    /// What the store's files looked like when the cached results were last checked.
    private struct FileStamp: Equatable {
        var logSize: Int64 = -1
        var logModified: Double = -1
        var storeModified: Double = -1
    }

    private let lock = NSLock()
    private var entries: [Key: Entry] = [:]
    private var generation: UInt64 = 0
    private var stamp = FileStamp()
    private var writerDataVersion: Int?
    private let storePath: String?
    /// The writer connection's `PRAGMA data_version`, nil if it cannot be read.
    private let readWriterDataVersion: () -> Int?
    /// Enough for the counts of many filter combinations; beyond it the cache starts over.
    private let capacity = 512

    /// `storePath` is nil for a store in memory, which no other process can write.
    init(storePath: String?, readWriterDataVersion: @escaping () -> Int? = { nil }) {
        self.storePath = storePath
        self.readWriterDataVersion = readWriterDataVersion
    }

    /// The cached result of a query, or `compute()`'s, which is kept unless the store changed meanwhile.
    func value<Result>(sql: String, arguments: [DatabaseValue], compute: () throws -> Result) throws -> Result {
        let key = Key(sql: sql, arguments: arguments)
        forgetForeignWrites()
        let (cached, startGeneration): (Entry?, UInt64) = lock.withLock { (entries[key], generation) }
        if let cached = cached?.value as? Result { return cached }
        let result = try compute()
        lock.withLock {
            // A write that committed while this was computed may not be in `result`: don't keep it.
            guard generation == startGeneration else { return }
            if entries.count >= capacity { entries.removeAll() }
            entries[key] = Entry(value: result, reads: Self.identifiers(in: sql))
        }
        return result
    }

    /// Drops every result (the store was emptied, or what changed is not known).
    func storeDidChange() {
        lock.withLock {
            entries.removeAll()
            generation &+= 1
        }
    }

    /// Drops the results that read what a save of this store wrote.
    func storeDidChange(_ change: StoreChange) {
        lock.withLock {
            entries = entries.filter { !Self.change(change, affects: $0.value.reads) }
            generation &+= 1
        }
    }

    static func change(_ change: StoreChange, affects reads: Set<String>) -> Bool {
        if !change.tablesWithRowsChanged.isDisjoint(with: reads) { return true }
        return change.updatedColumns.contains { table, columns in
            reads.contains(table) && !columns.isDisjoint(with: reads)
        }
    }

    /// The double-quoted identifiers of a statement. ObjectGraph quotes every table and column it
    /// names and binds every value, so these are all it reads (a column of the same name in another
    /// table also counts: dropping a result too often is safe).
    static func identifiers(in sql: String) -> Set<String> {
        var names: Set<String> = []
        var current = ""
        var inside = false
        var iterator = sql.makeIterator()
        var pending: Character? = nil
        while let character = pending ?? iterator.next() {
            pending = nil
            guard character == "\"" else {
                if inside { current.append(character) }
                continue
            }
            if !inside {
                inside = true
                continue
            }
            // A doubled quote inside an identifier is a quote character of the name.
            if let next = iterator.next() {
                if next == "\"" {
                    current.append("\"")
                    continue
                }
                pending = next
            }
            names.insert(current)
            current = ""
            inside = false
        }
        return names
    }

    /// Drops everything when another connection committed since the last look.
    private func forgetForeignWrites() {
        guard storePath != nil else { return }
        let current = fileStamp()
        guard lock.withLock({ current != stamp }) else { return }
        // The files moved: by a save of this store, a checkpoint, or another connection's commit.
        // Only the last changes the writer connection's data version.
        let version = readWriterDataVersion()
        lock.withLock {
            guard current != stamp else { return }
            if version == nil || version != writerDataVersion {
                entries.removeAll()
                generation &+= 1
            }
            writerDataVersion = version
            stamp = current
        }
    }

    private func fileStamp() -> FileStamp {
        guard let storePath else { return FileStamp() }
        var stamp = FileStamp()
        var info = stat()
        if stat(storePath + "-wal", &info) == 0 {
            stamp.logSize = Int64(info.st_size)
            stamp.logModified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        }
        if stat(storePath, &info) == 0 {
            stamp.storeModified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        }
        return stamp
    }
}
