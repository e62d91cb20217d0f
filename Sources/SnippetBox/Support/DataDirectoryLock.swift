import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A claim on a data directory by the one process that may change it as a whole: the server, or a
/// restore. Two servers on one directory each kept their own view of the accounts (the second still
/// offered first-time setup, so anyone reaching it could make an administrator), and a restore run
/// beside a server moved the directory away under it, so that what it saved afterwards went to the
/// copy set aside. `check`, `backup` and `seed` go through SQLite's own locking and need no claim;
/// beside a server they refuse to update a store it uses (`Maintenance.refuseUpdatesBesideAServer`).
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

    /// Whether another process (a server, a restore) holds `dataDirectory`'s claim now. Creates nothing:
    /// without the lock file, nobody does.
    public static func isHeldElsewhere(_ dataDirectory: URL) -> Bool {
        let descriptor = open(dataDirectory.appendingPathComponent(fileName).path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        // A shared lock is refused only while someone holds the exclusive one; closing lets it go.
        return flock(descriptor, LOCK_SH | LOCK_NB) != 0
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
        return DataDirectoryLock(descriptor: descriptor)
    }
}
