import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether `path` still names the file `descriptor` has open: false once the file was removed or
/// another was renamed over it. Used where a descriptor kept for a path must follow what the path
/// names (`readAheadStoreFiles`' kept descriptors, `StoreUpdateLock`'s lock file).
func fileIsStillAt(_ path: String, openAt descriptor: CInt) -> Bool {
    var open = stat(), named = stat()
    guard fstat(descriptor, &open) == 0, stat(path, &named) == 0 else { return false }
    return open.st_dev == named.st_dev && open.st_ino == named.st_ino
}
