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

/// A cached result's query: its SQL and its arguments.
///
/// The hash is computed once, when the key is made: a save rebuilds the table of kept results, and
/// hashing every kept query's SQL again (hundreds of characters for a fetch of rows) made saves slower.
struct AggregateCacheKey: Hashable {
    let sql: String
    let arguments: [DatabaseValue]
    private let hash: Int

    init(sql: String, arguments: [DatabaseValue]) {
        self.sql = sql
        self.arguments = arguments
        var hasher = Hasher()
        hasher.combine(sql)
        hasher.combine(arguments)
        hash = hasher.finalize()
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.hash == rhs.hash && lhs.sql == rhs.sql && lhs.arguments == rhs.arguments
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
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
/// as they were. A count that a save's rows do change is brought up to date by the save itself when it
/// can be (see `CountUpkeep`): moving a snippet to the trash costs two lookups per count, not a
/// recount. A search's first ranks follow a save the same way unless it changes the full-text index,
/// whose every change moves every bm25 score; then they are dropped.
///
/// A write by another process (say, a command-line import while the server runs) or another
/// container is noticed by the store file's write-ahead log changing size or time, confirmed by
/// the writer connection's `PRAGMA data_version`, which changes for every commit but that
/// connection's own: a save here changes the log too, and must not count as a stranger's. What
/// it wrote is then read from the store's history, where every ObjectGraph save records its
/// changes, and only the results that read those tables and columns are dropped. A commit that
/// recorded nothing (a write from outside ObjectGraph) drops everything.
final class AggregateCache: @unchecked Sendable {
    typealias Key = AggregateCacheKey

    private struct Entry {
        let value: Any
        /// Every identifier the SQL names (tables and columns alike): what a write must touch to drop it.
        let reads: Set<String>
        /// Tells this result from one computed again under the same key while a save was running.
        let serial: UInt64
        /// How a save that changed a few of the counted rows brings the result up to date; nil for a
        /// result that must be computed again (a page's excerpts).
        let upkeep: CountUpkeep?
        /// Whether this is a result of fetched rows (`rows(sql:arguments:weigh:compute:)`), and the
        /// memory it holds, as weighed there.
        var holdsRows = false
        var bytes = 0
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
    /// How many times the writer's data version was found moved: another connection committed.
    private var foreignCommitsFollowed: UInt64 = 0
    private var nextSerial: UInt64 = 0
    private var stamp = FileStamp()
    private var writerDataVersion: Int?
    /// The newest transaction of the store's history whose writes the kept results account for;
    /// nil until `startFollowingHistory`.
    private var newestTransactionSeen: Int64?
    /// Reads what the transactions after one wrote (`SQLiteStore.recordedWrites(after:)`).
    private var readRecordedWrites: ((Int64) -> RecordedWrites?)?
    private let storePath: String?
    /// The writer connection's `PRAGMA data_version`, nil if it cannot be read.
    private let readWriterDataVersion: () -> Int?
    /// Enough for the counts of many filter combinations; beyond it the cache starts over.
    private let capacity = 512
    /// The most memory the kept results of fetched rows may hold (`ModelConfiguration.fetchedRowCacheBytes`);
    /// beyond it they are all dropped.
    let rowBudget: Int
    /// The most memory one kept result of fetched rows may hold: a sixteenth of the budget.
    var rowResultLimit: Int { rowBudget / 16 }
    /// How many results of fetched rows may be kept: one-off lookups (a session by its id, a model
    /// by its key) come and go without pushing out the counts and ranks, which cost far more to make.
    private let rowCapacity = 256
    /// The memory the kept results of fetched rows hold now, and how many there are.
    private var keptRowBytes = 0
    private var keptRowResults = 0

    /// The store, as its read transactions know it.
    private let store: ObjectIdentifier

    /// `storePath` is nil for a store in memory, which no other process can write.
    init(store: StoreIdentity, storePath: String?, rowBudget: Int = 0, readWriterDataVersion: @escaping () -> Int? = { nil }) {
        self.store = ObjectIdentifier(store)
        self.rowBudget = rowBudget
        self.storePath = storePath
        self.readWriterDataVersion = readWriterDataVersion
    }

    /// The generation now, as this process last saw it, without looking for another process's writes
    /// (`currentGeneration()` does): never newer than the store, so a relationship loaded under it is
    /// at worst read again once more than needed.
    var generationSeen: UInt64 { lock.withLock { generation } }

    /// How many times another connection's commits were noticed, after looking for them now
    /// (`StoreChangeWatch` watches it for other processes' saves).
    func foreignCommitsNoticed() -> UInt64 {
        forgetForeignWrites()
        return lock.withLock { foreignCommitsFollowed }
    }

    /// The generation now, after checking for another process's writes: what a read transaction
    /// that begins next reads is at least this recent.
    func currentGeneration() -> UInt64 {
        forgetForeignWrites()
        return lock.withLock { generation }
    }

    /// The cached result of a query, or `compute()`'s, which is kept unless the store changed meanwhile.
    /// With `upkeep`, a save that changes a few of the counted rows brings the result up to date
    /// instead of dropping it; it is made only when the result is computed, not on every hit.
    func value<Result>(
        sql: String, arguments: [DatabaseValue], upkeep: @autoclosure () -> CountUpkeep? = nil, compute: () throws -> Result
    ) throws -> Result {
        try value(sql: sql, arguments: arguments, upkeep: upkeep(), weighing: nil, compute: compute)
    }

    /// The kept result of a query, if there is one that this read may use; computes nothing.
    func keptValue<Result>(sql: String, arguments: [DatabaseValue]) -> Result? {
        let transaction = ReadTransactionScope.current(for: store)
        if transaction == nil { forgetForeignWrites() }
        let key = Key(sql: sql, arguments: arguments)
        let (cached, current): (Entry?, UInt64) = lock.withLock { (entries[key], generation) }
        if let transaction, transaction.generation != current { return nil }
        guard let cached else { return nil }
        return cached.value as? Result
    }

    /// The kept results whose key `isWanted` accepts, that this read may use; computes nothing. A walk
    /// of every kept result (at most `capacity`): for a result that a kept one of another query can
    /// stand in for, which its key alone does not find.
    func keptValues<Result>(where isWanted: (Key) -> Bool) -> [Result] {
        let transaction = ReadTransactionScope.current(for: store)
        if transaction == nil { forgetForeignWrites() }
        let (found, current): ([Any], UInt64) = lock.withLock {
            (entries.compactMap { isWanted($0.key) ? $0.value.value : nil }, generation)
        }
        if let transaction, transaction.generation != current { return [] }
        return found.compactMap { $0 as? Result }
    }

    /// Drops a kept result, if there is one.
    func forget(_ key: Key) {
        lock.withLock {
            guard let removed = entries.removeValue(forKey: key) else { return }
            if removed.holdsRows {
                keptRowBytes -= removed.bytes
                keptRowResults -= 1
            }
        }
    }

    /// Rows fetched by a query, kept like counts within `rowBudget`. `weigh` says how much memory
    /// the rows hold (their text and data, mostly).
    func rows<Result>(sql: String, arguments: [DatabaseValue], weigh: @escaping (Result) -> Int, compute: () throws -> Result) throws -> Result {
        try value(sql: sql, arguments: arguments, upkeep: nil, weighing: weigh, compute: compute)
    }

    private func value<Result>(
        sql: String, arguments: [DatabaseValue], upkeep: @autoclosure () -> CountUpkeep?, weighing weigh: ((Result) -> Int)?,
        compute: () throws -> Result
    ) throws -> Result {
        let key = Key(sql: sql, arguments: arguments)
        // A read transaction looked for other processes' writes once its snapshot was taken (see
        // `SQLiteStore.withReadTransaction`): what they write later is not in that snapshot, so the
        // reads inside need not look again (two `stat` calls each, 3% of a list page's time).
        let transaction = ReadTransactionScope.current(for: store)
        if transaction == nil { forgetForeignWrites() }
        let (cached, startGeneration): (Entry?, UInt64) = lock.withLock { (entries[key], generation) }
        // Inside a read transaction that began before the store last changed, the kept results are
        // newer than what the transaction reads, and what it computes is older than the store: it
        // neither takes nor keeps one.
        if let transaction, transaction.generation != startGeneration {
            return try compute()
        }
        // The entry first: `nil as? Result` succeeds when `Result` is itself optional.
        if let cached, let value = cached.value as? Result { return value }
        let result = try compute()
        // The upkeep restricts the counted table, which the SQL must not name twice: a condition that
        // reads other rows of it (a relationship to its own entity) would let a change to one row
        // change another's count. (Rows of a join table keyed by their owner need not name it at all.)
        let keptUpkeep = upkeep().flatMap { Self.names($0.entity.quotedIdentifier, atMostOnceIn: sql) ? $0 : nil }
        let bytes = weigh.map { $0(result) } ?? 0
        if weigh != nil && (bytes > rowResultLimit || rowBudget <= 0) { return result }
        lock.withLock {
            // A write that committed while this was computed may not be in `result`: don't keep it.
            guard generation == startGeneration else { return }
            if weigh == nil, entries.count - keptRowResults >= capacity { removeAllEntries() }
            if weigh != nil, keptRowBytes + bytes > rowBudget || keptRowResults >= rowCapacity { removeRowEntries() }
            nextSerial &+= 1
            if let replaced = entries[key], replaced.holdsRows {
                keptRowBytes -= replaced.bytes
                keptRowResults -= 1
            }
            entries[key] = Entry(value: result, reads: Self.identifiers(in: sql), serial: nextSerial, upkeep: keptUpkeep, holdsRows: weigh != nil, bytes: bytes)
            if weigh != nil {
                keptRowBytes += bytes
                keptRowResults += 1
            }
        }
        return result
    }

    /// Whether any kept result could follow a save: if none, a save need not work out which rows it
    /// changes (for a bulk insert, a set of every new key). One stored meanwhile is dropped by the save.
    var holdsResultsWithUpkeep: Bool {
        lock.withLock { entries.values.contains { $0.upkeep != nil } }
    }

    /// Drops the results that read what a save of this store wrote, except those `upkeep` brought up
    /// to date, which take their new values.
    func storeDidChange(_ change: StoreChange, upkeep: SaveUpkeep? = nil) {
        lock.withLock {
            var kept: [Key: Entry] = [:]
            for (key, entry) in entries {
                guard Self.change(change, affects: entry.reads) else {
                    kept[key] = entry
                    continue
                }
                // Only the very result the save started from: one stored meanwhile missed the save's rows.
                guard let updated = upkeep?.updatedValues[key], updated.serial == entry.serial else { continue }
                nextSerial &+= 1
                kept[key] = Entry(value: updated.value, reads: entry.reads, serial: nextSerial, upkeep: entry.upkeep)
            }
            entries = kept
            countRowEntries()
            generation &+= 1
        }
    }

    /// `tables(of:affecting:)` is not empty; asked of every kept result by every save, so it builds no set.
    static func change(_ change: StoreChange, affects reads: Set<String>) -> Bool {
        if !change.tablesWithRowsChanged.isDisjoint(with: reads) { return true }
        return change.updatedColumns.contains { table, columns in reads.contains(table) && !columns.isDisjoint(with: reads) }
    }

    /// The tables whose changes in `change` may alter a result that reads `reads`.
    static func tables(of change: StoreChange, affecting reads: Set<String>) -> Set<String> {
        var tables = change.tablesWithRowsChanged.intersection(reads)
        for (table, columns) in change.updatedColumns where reads.contains(table) && !columns.isDisjoint(with: reads) {
            tables.insert(table)
        }
        return tables
    }

    // MARK: Upkeep of counts through a save

    /// Starts a save's upkeep, in its transaction before it writes anything: counts only the rows
    /// the save will change, for each cached result that it can bring up to date. `changedRows` says,
    /// for each entity, which of its rows the save changes and which tables it changes only in ways
    /// those rows account for.
    func beginUpkeep(of change: StoreChange, changedRows: [String: ChangedRows], in db: Database) throws -> SaveUpkeep {
        // The save caught up with other connections' commits first (`catchUp(in:reading:)`): the
        // results counted from here follow them.
        let candidates: [(Key, Entry, CountUpkeep, ChangedRows)] = lock.withLock {
            entries.compactMap { key, entry in
                guard let upkeep = entry.upkeep, let rows = changedRows[upkeep.entity], rows.canKeepCounts else { return nil }
                let affecting = Self.tables(of: change, affecting: entry.reads)
                guard !affecting.isEmpty, affecting.isSubset(of: rows.accountedTables),
                      affecting.isDisjoint(with: upkeep.refusedTables) else { return nil }
                return (key, entry, upkeep, rows)
            }
        }
        var pending: [SaveUpkeep.Pending] = []
        for (key, entry, upkeep, rows) in candidates {
            let before = try upkeep.count(Array(rows.keys), db)
            pending.append(SaveUpkeep.Pending(key: key, serial: entry.serial, old: entry.value, upkeep: upkeep, before: before))
        }
        return SaveUpkeep(pending: pending)
    }

    /// Drops every result (the store was emptied, or what changed is not known).
    func storeDidChange() {
        lock.withLock {
            removeAllEntries()
            generation &+= 1
        }
    }

    /// The double-quoted identifiers of a statement. ObjectGraph quotes every table and column it
    /// names and binds every value, so these are all it reads (a column of the same name in another
    /// table also counts: dropping a result too often is safe).
    ///
    /// Read as UTF-8 bytes, as SQLite reads it: a quote is one byte that no other character's
    /// encoding contains. A few terms are written as literals (a `CaseIterable` type's cases in an
    /// ORDER BY, `StoredOrder`), and a `"` inside one is no identifier's: they are skipped.
    static func identifiers(in sql: String) -> Set<String> {
        var names: Set<String> = []
        var sql = sql
        sql.withUTF8 { bytes in
            var index = 0
            while index < bytes.count {
                if bytes[index] == apostrophe {
                    // A literal, to the apostrophe that ends it (a doubled one is inside it).
                    index += 1
                    while index < bytes.count {
                        if bytes[index] == apostrophe {
                            guard index + 1 < bytes.count, bytes[index + 1] == apostrophe else { break }
                            index += 1
                        }
                        index += 1
                    }
                    index += 1
                    continue
                }
                guard bytes[index] == quote else {
                    index += 1
                    continue
                }
                // An identifier: its bytes up to the quote that closes it, a doubled quote being a
                // quote character of the name.
                var name: [UInt8] = []
                index += 1
                while index < bytes.count {
                    if bytes[index] == quote {
                        guard index + 1 < bytes.count, bytes[index + 1] == quote else { break }
                        index += 1
                    }
                    name.append(bytes[index])
                    index += 1
                }
                // One left open at the end of the statement is not a name.
                if index < bytes.count { names.insert(String(decoding: name, as: UTF8.self)) }
                index += 1
            }
        }
        return names
    }

    private static let quote = UInt8(ascii: "\"")
    private static let apostrophe = UInt8(ascii: "'")

    /// Whether `sql` holds `quotedName` at most once, compared as UTF-8 bytes: `components(separatedBy:)`,
    /// which compared by `Character`, was about 1% of the server's time on a common word's first visit.
    static func names(_ quotedName: String, atMostOnceIn sql: String) -> Bool {
        var sql = sql
        var quotedName = quotedName
        return sql.withUTF8 { text in
            quotedName.withUTF8 { name in
                guard let first = name.first, name.count <= text.count else { return true }
                var found = 0
                var start = 0
                while start + name.count <= text.count {
                    if text[start] == first, name.indices.allSatisfy({ text[start + $0] == name[$0] }) {
                        found += 1
                        if found > 1 { return false }
                        start += name.count
                    } else {
                        start += 1
                    }
                }
                return true
            }
        }
    }

    /// From now on another connection's commits drop only what its history says they wrote; the
    /// history up to `newest` is accounted for.
    func startFollowingHistory(from newest: Int64, reading read: @escaping (Int64) -> RecordedWrites?) {
        // The data version from here on: the first look then finds no stranger's commit where there was none.
        let version = readWriterDataVersion()
        lock.withLock {
            newestTransactionSeen = newest
            readRecordedWrites = read
            writerDataVersion = version
        }
    }

    /// Drops what another connection's commits since the last look wrote (everything, when their
    /// history does not say).
    func forgetForeignWrites() {
        guard storePath != nil else { return }
        let current = fileStamp()
        guard lock.withLock({ current != stamp }) else { return }
        // The files moved: by a save of this store, a checkpoint, or another connection's commit.
        // Only the last changes the writer connection's data version.
        let version = readWriterDataVersion()
        let (knownVersion, seen, read) = lock.withLock { (writerDataVersion, newestTransactionSeen, readRecordedWrites) }
        // Read outside the lock: it is a query. A commit after the version was read may be in it too,
        // which only makes the next look find nothing recorded, and drop everything.
        var recorded: RecordedWrites?
        if let version, version != knownVersion, let seen, let read { recorded = read(seen) }
        // A commit writes the log before it publishes its data version: a look in between sees the new
        // log and the old version. Until the files are a moment old, the next look reads the version
        // again (a look from another thread while another process committed kept a stale count).
        let newest = max(current.logModified, current.storeModified)
        let settled = Date().timeIntervalSince1970 - newest > 0.1
        lock.withLock {
            guard current != stamp else { return }
            let changed = followCommits(to: version, recorded: recorded, readAfter: knownVersion)
            if changed || settled { stamp = current }
        }
    }

    /// Catches up, at the start of a save's transaction, with what other connections committed since
    /// the last look. The transaction holds the store's write lock (GRDB begins writes `IMMEDIATE`),
    /// so none commits before it ends: the save then brings kept counts up to date from values that
    /// follow every earlier commit, and its own transaction is the next after what the kept results
    /// account for (`noteOwnTransaction`). Without it, a write from outside ObjectGraph just before
    /// the save went unnoticed: the next look read only the save's own transaction in the history.
    func catchUp(in db: Database, reading read: (Int64) -> RecordedWrites?) throws {
        guard storePath != nil else { return }
        let version = try Self.dataVersion(in: db)
        let (knownVersion, seen) = lock.withLock { (writerDataVersion, newestTransactionSeen) }
        guard version == nil || version != knownVersion else { return }
        let recorded = seen.flatMap(read)
        lock.withLock { _ = followCommits(to: version, recorded: recorded, readAfter: knownVersion) }
    }

    /// The connection's `PRAGMA data_version`: it moves when another connection commits.
    static func dataVersion(in db: Database) throws -> Int? {
        try Int.fetchOne(db.cachedStatement(sql: "PRAGMA data_version"))
    }

    /// Notes a transaction of this store's own save, once it committed: the save dropped, or brought
    /// up to date, what it wrote, and caught up with every commit before it (`catchUp(in:reading:)`),
    /// so the next look need not read it back (a bulk insert's list of keys, for one). A transaction
    /// that is not the next one (a look read a later one meanwhile) is left to be read back.
    func noteOwnTransaction(_ transaction: Int64) {
        lock.withLock {
            guard let seen = newestTransactionSeen, transaction == seen + 1 else { return }
            newestTransactionSeen = transaction
        }
    }

    /// Follows the writer's data version to `version`: if it moved, drops what the commits wrote as
    /// `recorded` (read after the version was `knownVersion`) says, or everything when it cannot say
    /// (nothing recorded: a write from outside ObjectGraph). Returns whether it moved. Called with
    /// the lock held.
    private func followCommits(to version: Int?, recorded: RecordedWrites?, readAfter knownVersion: Int?) -> Bool {
        let changed = version == nil || version != writerDataVersion
        if changed {
            // Only writes the history records, read since the transaction the kept results had seen.
            if let recorded, let change = recorded.change, let seen = newestTransactionSeen, recorded.newest > seen,
               writerDataVersion == knownVersion {
                removeEntries(affectedBy: change)
            } else {
                removeAllEntries()
            }
            if let recorded { newestTransactionSeen = max(newestTransactionSeen ?? 0, recorded.newest) }
            generation &+= 1
            foreignCommitsFollowed &+= 1
        }
        writerDataVersion = version
        return changed
    }

    // Called with the lock held.

    private func removeEntries(affectedBy change: StoreChange) {
        entries = entries.filter { !Self.change(change, affects: $0.value.reads) }
        countRowEntries()
    }

    private func removeAllEntries() {
        entries.removeAll()
        countRowEntries()
    }

    private func removeRowEntries() {
        entries = entries.filter { !$0.value.holdsRows }
        countRowEntries()
    }

    private func countRowEntries() {
        let rows = entries.values.filter(\.holdsRows)
        keptRowResults = rows.count
        keptRowBytes = rows.reduce(0) { $0 + $1.bytes }
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

/// The keys of the few results of one kind a store keeps at most (the hit features of its most
/// recently ranked common words): the oldest is dropped from the cache when one more is kept.
final class KeptResultRing: @unchecked Sendable {
    private let lock = NSLock()
    private var keys: [AggregateCacheKey] = []
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Notes that `key` is kept in `cache`, dropping from it the oldest beyond the capacity.
    func note(_ key: AggregateCacheKey, in cache: AggregateCache) {
        let dropped: [AggregateCacheKey] = lock.withLock {
            keys.removeAll { $0 == key }
            keys.append(key)
            guard keys.count > capacity else { return [] }
            let oldest = Array(keys.prefix(keys.count - capacity))
            keys.removeFirst(oldest.count)
            return oldest
        }
        dropped.forEach(cache.forget)
    }
}
