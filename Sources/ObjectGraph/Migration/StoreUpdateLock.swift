import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The right to update one store file (convert its dates, run its migration stages), held by one
/// container at a time across threads and processes.
///
/// Without it, containers opening one old store at once (a server and a `check` beside it, two
/// threads) each migrated it from what they had read of it: they shared the working copy's name and
/// deleted each other's, and three of four opens failed ("cannot copy the store", "database is
/// locked"). A container that opened the store one had migrated could also have saved into a file
/// the next one's rename then put aside.
///
/// An exclusive `flock` on `<store>.updating`, a file of its own: never the store itself, since
/// closing any descriptor of the store would let go of the POSIX locks SQLite holds on it in this
/// process. The holder deletes the file before letting go, so that none is left beside the store; a
/// waiter then holds a lock on a file no longer there, sees so, and takes the lock again on a new one.
/// The kernel lets the lock go however the process ends, so a crash leaves no claim, only the file.
enum StoreUpdateLock {
    /// Waits until no other container is updating the store at `storeURL`, then runs `body` holding
    /// the right to.
    static func holding<T>(storeURL: URL, _ body: () throws -> T) throws -> T {
        let path = storeURL.path + ".updating"
        let descriptor = try lock(path, storeURL: storeURL)
        defer {
            // Deleted first, so that the next opener creates its own file and a waiter takes again.
            unlink(path)
            close(descriptor)
        }
        return try body()
    }

    private static func lock(_ path: String, storeURL: URL) throws -> CInt {
        while true {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                let reason = String(cString: strerror(errno))
                throw SwiftDataError(
                    .loadIssueModelContainer,
                    "cannot update the store at \(storeURL.path): cannot create \(path) to hold others off (\(reason))")
            }
            while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
            if fileIsStillAt(path, openAt: descriptor) { return descriptor }
            // The holder before us deleted the file it locked; lock the one at the path now.
            close(descriptor)
        }
    }
}
