import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A claim on a data directory by the one process that may change it as a whole: the server, or a
/// restore. Two servers on one directory each kept their own view of the accounts (the second still
/// offered first-time setup, so anyone reaching it could make an administrator), and a restore run
/// beside a server moved the directory away under it, so that what it saved afterwards went to the
/// copy set aside. `check`, `backup` and `seed` go through SQLite's own locking and need no claim;
/// beside an earlier version's server they refuse to update a store it uses, which they tell by the
/// record the holder writes into the lock file (`holderForm`, `Maintenance.refuseUpdatesBesideAServer`).
///
/// An advisory `flock` on `DATA_DIR/.snippetbox.lock`, held until the process ends (the kernel lets
/// it go however the process ends). `flock` is apart from the POSIX locks SQLite takes, so holding it
/// changes nothing for the stores.
public final class DataDirectoryLock: Sendable {
    private let descriptor: CInt

    private init(descriptor: CInt) {
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    public struct Taken: Error, CustomStringConvertible {
        public let dataDirectory: String
        public var description: String {
            "another snippetbox (a server, or a restore) is using \(dataDirectory); stop it first"
        }
    }

    /// The lock file's name in the data directory.
    static let fileName = ".snippetbox.lock"

    /// What the claim's holder writes into the lock file: the form of the stores it reads and writes.
    /// A holder that wrote nothing is a version from before the record, whose stores kept their dates
    /// in the earlier form (see `Maintenance.refuseUpdatesBesideAServer`).
    static let holderForm = "stores: ObjectGraph dates as seconds since 2001\n"

    /// Who holds `dataDirectory`'s claim now, as far as another process can tell. Creates nothing:
    /// without the lock file, nobody does.
    public enum Holder: Equatable, Sendable {
        case nobody
        /// A server or restore of this version, or a later one that keeps the same record.
        case current
        /// A server or restore that wrote no record: an earlier version.
        case earlierVersion
    }

    public static func holder(of dataDirectory: URL) -> Holder {
        let descriptor = open(dataDirectory.appendingPathComponent(fileName).path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return .nobody }
        defer { close(descriptor) }
        // A shared lock is refused only while someone holds the exclusive one; closing lets it go.
        guard flock(descriptor, LOCK_SH | LOCK_NB) != 0 else { return .nobody }
        var bytes = [UInt8](repeating: 0, count: 256)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        let record = count > 0 ? String(decoding: bytes.prefix(count), as: UTF8.self) : ""
        return record == holderForm ? .current : .earlierVersion
    }

    /// Claims `dataDirectory` (creating it), or throws `Taken` at once if another process holds it.
    public static func claim(_ dataDirectory: URL) throws -> DataDirectoryLock {
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let path = dataDirectory.appendingPathComponent(fileName).path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw Taken(dataDirectory: dataDirectory.path)
        }
        // The record is only read while the claim is held: one left from an earlier holder is replaced.
        let record = Array(holderForm.utf8)
        let written = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard ftruncate(descriptor, off_t(record.count)) == 0, written == record.count else {
            close(descriptor)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        return DataDirectoryLock(descriptor: descriptor)
    }
}
