import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif

/// The folder beside a store that holds `@Attribute(.externalStorage)` values too large for a row.
///
/// A row refers to its file by name, in a TEXT column where an inline value would be a BLOB, so the
/// column's type alone tells the two apart. Files are written and synced before the transaction
/// that refers to them commits, and removed only after the transaction that drops them commits.
final class ExternalStorage: @unchecked Sendable {
    /// Values larger than this go to a file; smaller ones stay in the row, where reading them is cheaper.
    static let thresholdBytes = 128 * 1024

    let directory: URL

    init(directory: URL) {
        self.directory = directory
    }

    static func shouldStoreExternally(_ value: DatabaseValue) -> Bool {
        if case .blob(let data) = value.storage { return data.count > thresholdBytes }
        return false
    }

    static func referencedFileName(in value: DatabaseValue) -> String? {
        if case .string(let name) = value.storage { return name }
        return nil
    }

    /// Writes the value to a new file, synced to disk, and returns its name.
    func write(_ value: DatabaseValue) throws -> String {
        guard case .blob(let data) = value.storage else {
            throw SwiftDataError(.externalStorageFailure, "only Data values can be stored externally")
        }
        let name = UUID().uuidString
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let url = directory.appendingPathComponent(name)
            // Written in place, not through a temporary file: a crash mid-write leaves a file with a
            // name no row refers to, which the sweep at the next open removes; a temporary file's
            // name would escape it.
            try data.write(to: url)
            let handle = try FileHandle(forUpdating: url)
            try handle.synchronize()
            try handle.close()
        } catch let error as SwiftDataError {
            throw error
        } catch {
            throw SwiftDataError(.externalStorageFailure, "cannot write an external value to \(directory.path): \(error)")
        }
        return name
    }

    func read(_ name: String) throws -> Data {
        guard Self.isValidName(name) else {
            throw SwiftDataError(.externalStorageFailure, "\(name) is not the name of an external value")
        }
        do {
            return try Data(contentsOf: directory.appendingPathComponent(name))
        } catch {
            throw SwiftDataError(.externalStorageFailure, "the external value \(name) cannot be read: \(error)")
        }
    }

    func exists(_ name: String) -> Bool {
        Self.isValidName(name) && FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path)
    }

    func remove(_ name: String) {
        guard Self.isValidName(name) else { return }
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
    }

    func fileNames() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter(Self.isValidName)
    }

    /// Puts the named files into `target` (created), for a backup, and returns the names of those
    /// that are not here. Only the files rows name are given: a file written for a save not yet
    /// committed, or kept for a read still under way, belongs to no row of the copy.
    ///
    /// Each is hard-linked where it can be (a file is never written again once a row names it), so
    /// that all are held in a moment: another process removes a file its save dropped at once, and a
    /// copy of each in turn left the later ones that long to go. Copied where links cannot be made
    /// (another file system).
    func linkFiles(named names: Set<String>, to target: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        var missing: [String] = []
        for name in names.sorted() {
            guard Self.isValidName(name) else {
                missing.append(name)
                continue
            }
            let source = directory.appendingPathComponent(name), destination = target.appendingPathComponent(name)
            if link(source.path, destination.path) == 0 { continue }
            let failure = errno
            switch failure {
            case ENOENT:
                missing.append(name)
            case EXDEV, EPERM, EMLINK, ENOTSUP:
                do {
                    try FileManager.default.copyItem(at: source, to: destination)
                } catch where !FileManager.default.fileExists(atPath: source.path) {
                    missing.append(name)
                }
            default:
                throw SwiftDataError(.backupFailure, "cannot link \(source.path) into \(target.path): \(String(cString: strerror(failure)))")
            }
        }
        return missing
    }

    /// Names are UUIDs that ObjectGraph made: anything else never reaches the file system.
    private static func isValidName(_ name: String) -> Bool {
        UUID(uuidString: name) != nil && !name.contains("/")
    }
}
