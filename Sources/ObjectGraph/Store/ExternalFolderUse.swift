import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A store's claim on its external folder, shared with every other open store of the same file (in
/// this process or another), which tells the sweep of orphaned files whether it may run.
///
/// A save writes its external files before the transaction that names them commits, and a save that
/// drops files holds them back while an older read may still see them (`ExternalFileRetirement`). So
/// while another store of the file is open, a file no row names may be one it is about to commit or
/// still reading: a `snippetbox check` or `backup` opened beside the server deleted an image whose
/// upload had not committed yet, and the row then named a missing file. The sweep therefore runs only
/// when the store opening is the file's only user: it holds an exclusive `flock` on a file in the
/// external folder while it sweeps, and a shared one for as long as it stays open. `flock` locks are
/// apart from the POSIX locks SQLite takes on the database, so closing this descriptor touches none of
/// SQLite's; the kernel lets them go however the process ends, so a crashed server leaves no claim.
final class ExternalFolderUse: Sendable {
    /// The file locked, inside the external folder: its name is no external value's (`ExternalStorage`
    /// names files by UUID), so the sweep, the integrity check and backups pass it by.
    static let lockFileName = ".in-use.lock"

    private let descriptor: CInt

    /// Claims the folder: runs `sweep` if no other store of the file is open, then holds a shared claim.
    /// Returns nil where no claim can be taken (a folder that cannot be created, a read-only disk):
    /// the store still opens, and does not sweep, since it cannot tell who else is using the folder.
    init?(directory: URL, sweep: () throws -> Void) rethrows {
        guard (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)) != nil else {
            return nil
        }
        let descriptor = open(directory.appendingPathComponent(Self.lockFileName).path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
            // Another store opening meanwhile waits for the shared claim below, so none saves mid-sweep.
            try sweep()
        }
        // Taken while exclusive (a downgrade) or, with others open, after an exclusive one being swept
        // under ends; either way the wait is short.
        while flock(descriptor, LOCK_SH) != 0 && errno == EINTR {}
    }

    deinit {
        close(descriptor)
    }
}
