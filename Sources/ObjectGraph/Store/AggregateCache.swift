import Foundation
import GRDB

/// Results of count queries, kept until the store changes.
///
/// A list page asks for the same counts on every visit (per folder, per tag, per language, the
/// total), and each is a scan of the whole table: at 100,000 rows they cost far more than the page
/// itself. They only change when the store does, so they are answered from here until then. The store
/// calls `storeDidChange()` after each of its writes; a write by another process (say, a command-line
/// import while the server runs) is noticed by the store file's write-ahead log changing size or time.
final class AggregateCache: @unchecked Sendable {
    private struct Key: Hashable {
        let sql: String
        let arguments: [DatabaseValue]
    }

    /// What the store's files looked like when the cached results were computed.
    private struct FileStamp: Equatable {
        var logSize: Int64 = -1
        var logModified: Double = -1
        var storeModified: Double = -1
    }

    private let lock = NSLock()
    private var entries: [Key: Any] = [:]
    private var generation: UInt64 = 0
    private var stamp = FileStamp()
    private let storePath: String?
    /// Enough for the counts of many filter combinations; beyond it the cache starts over.
    private let capacity = 512

    init(storePath: String?) {
        self.storePath = storePath
    }

    /// The cached result of a query, or `compute()`'s, which is kept unless the store changed meanwhile.
    func value<Result>(sql: String, arguments: [DatabaseValue], compute: () throws -> Result) throws -> Result {
        let key = Key(sql: sql, arguments: arguments)
        let current = fileStamp()
        let (cached, startGeneration): (Any?, UInt64) = lock.withLock {
            if current != stamp {
                entries.removeAll()
                stamp = current
                generation &+= 1
            }
            return (entries[key], generation)
        }
        if let cached = cached as? Result { return cached }
        let result = try compute()
        lock.withLock {
            // A write that committed while this was computed may not be in `result`: don't keep it.
            guard generation == startGeneration else { return }
            if entries.count >= capacity { entries.removeAll() }
            entries[key] = result
        }
        return result
    }

    func storeDidChange() {
        lock.withLock {
            entries.removeAll()
            generation &+= 1
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
