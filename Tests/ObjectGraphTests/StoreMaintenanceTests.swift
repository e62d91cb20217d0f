import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// Online backups and the integrity check.
final class StoreMaintenanceTests: StoreTestCase {
    private func bytes(_ count: Int, seed: UInt8) -> Data { Self.bytes(count, seed: seed) }

    private static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    func testABackupOpensWithEveryRowAndEveryExternalFile() throws {
        let container = try makeContainer(Photo.self)
        let context = ModelContext(container)
        context.insert(Photo(caption: "large", image: bytes(300_000, seed: 1)))
        context.insert(Photo(caption: "small", image: bytes(100, seed: 2)))
        try context.save()

        let copyURL = folder.appendingPathComponent("copy/backup.store")
        try container.backup(to: copyURL)
        // Changes after the backup do not reach it.
        context.insert(Photo(caption: "later", image: nil))
        try context.save()

        let copy = try ModelContainer(for: Schema([Photo.self]), configurations: ModelConfiguration(url: copyURL))
        let photos = try ModelContext(copy).fetch(FetchDescriptor<Photo>(sortBy: [SortDescriptor(\.caption)]))
        XCTAssertEqual(photos.map(\.caption), ["large", "small"])
        XCTAssertEqual(photos[0].image, bytes(300_000, seed: 1))
        XCTAssertEqual(photos[1].image, bytes(100, seed: 2))
        XCTAssertTrue(try copy.checkIntegrity().isOK)
    }

    /// The backup copied every file in the external folder, so a file written for a save not yet
    /// committed (or one no row names any more) went into the copy as an orphan.
    func testABackupCopiesOnlyTheFilesRowsName() throws {
        let container = try makeContainer(Photo.self)
        let context = ModelContext(container)
        context.insert(Photo(caption: "large", image: bytes(300_000, seed: 4)))
        try context.save()
        let referenced = try XCTUnwrap(externalFiles.first)
        let stray = UUID().uuidString
        try Data([1, 2, 3]).write(to: folder.appendingPathComponent("test.store.external/\(stray)"))

        let copyURL = folder.appendingPathComponent("copy/backup.store")
        let report = try container.backup(to: copyURL)
        XCTAssertEqual(report, StoreBackupReport(missingExternalFiles: []))
        let copied = try FileManager.default.contentsOfDirectory(atPath: copyURL.path + ".external")
        XCTAssertEqual(copied, [referenced], "the stray file stays out of the copy")
    }

    /// A row whose file is gone does not stop the backup of everything else: the report names the file.
    func testABackupGoesOnPastAMissingFileAndNamesIt() throws {
        let container = try makeContainer(Photo.self)
        let context = ModelContext(container)
        let lost = Photo(caption: "lost", image: bytes(300_000, seed: 5))
        context.insert(lost)
        try context.save()
        let lostFile = try XCTUnwrap(externalFiles.first)
        context.insert(Photo(caption: "kept", image: bytes(200_000, seed: 6)))
        try context.save()
        try FileManager.default.removeItem(at: folder.appendingPathComponent("test.store.external/\(lostFile)"))

        let copyURL = folder.appendingPathComponent("copy/backup.store")
        XCTAssertEqual(try container.backup(to: copyURL), StoreBackupReport(missingExternalFiles: [lostFile]))
        let copy = try ModelContainer(for: Schema([Photo.self]), configurations: ModelConfiguration(url: copyURL))
        let kept = try ModelContext(copy).fetch(FetchDescriptor<Photo>(predicate: #Predicate { $0.caption == "kept" }))
        XCTAssertEqual(kept.first?.image, bytes(200_000, seed: 6))
        XCTAssertEqual(try copy.checkIntegrity().missingExternalFiles, [lostFile])
    }

    func testABackupRefusesToOverwriteAFile() throws {
        let container = try makeContainer(Photo.self)
        let target = folder.appendingPathComponent("taken.store")
        try Data("keep me".utf8).write(to: target)
        XCTAssertThrowsError(try container.backup(to: target)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .backupFailure)
        }
        XCTAssertEqual(try Data(contentsOf: target), Data("keep me".utf8))
    }

    func testTheIntegrityCheckFindsMissingAndOrphanedFiles() throws {
        let container = try makeContainer(Photo.self)
        let context = ModelContext(container)
        context.insert(Photo(caption: "large", image: bytes(300_000, seed: 3)))
        try context.save()
        XCTAssertEqual(try container.checkIntegrity(), StoreIntegrityReport(
            sqliteCheck: ["ok"], missingExternalFiles: [], orphanedExternalFiles: []))

        let directory = folder.appendingPathComponent("test.store.external")
        let referenced = try XCTUnwrap(externalFiles.first)
        try FileManager.default.removeItem(at: directory.appendingPathComponent(referenced))
        let stray = UUID().uuidString
        try Data([1, 2, 3]).write(to: directory.appendingPathComponent(stray))

        let report = try container.checkIntegrity()
        XCTAssertFalse(report.isOK)
        XCTAssertEqual(report.missingExternalFiles, [referenced])
        XCTAssertEqual(report.orphanedExternalFiles, [stray])
    }

    func testCommitsAreSyncedInFull() throws {
        let container = try makeContainer(Photo.self)
        let level = try container.store.writer.write { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
        XCTAssertEqual(level, 2, "FULL")
    }

    func testReadingWhileAnotherContextReplacesTheFileNeverFails() throws {
        let container = try makeContainer(Photo.self)
        let setup = ModelContext(container)
        setup.insert(Photo(caption: "hot", image: bytes(200_000, seed: 0)))
        try setup.save()
        let writerDone = LockedFlag()
        let writer = Thread {
            let context = ModelContext(container)
            for round in 1...60 {
                guard let photo = try? context.fetch(FetchDescriptor<Photo>()).first else { break }
                photo.image = Self.bytes(200_000, seed: UInt8(round % 200))
                try? context.save()
            }
            writerDone.set()
        }
        writer.start()
        var reads = 0
        // Every read sees one whole image: the one its row named, or, when a save removed that
        // file meanwhile, the row's newer one.
        while !writerDone.isSet {
            let photo = try XCTUnwrap(try ModelContext(container).fetch(FetchDescriptor<Photo>()).first)
            XCTAssertEqual(photo.image?.count, 200_000)
            reads += 1
        }
        XCTAssertGreaterThan(reads, 10)
        XCTAssertTrue(try container.checkIntegrity().isOK)
    }

    /// A backup or check by another process (a command beside the server), while the server replaces
    /// images: the server removes each file its save dropped, and the other process's read of the rows
    /// may still name it. Backups then lacked files their rows named, sometimes without saying so (the
    /// names were read after the rows were copied), and the check reported files missing that were
    /// not. Here a second container of the same file is the other process: its saves and removals are
    /// its own, as a process's are.
    func testABackupAndACheckBesideAnotherProcessSavingImagesAreWhole() throws {
        let server = try makeContainer(Photo.self)
        let setup = ModelContext(server)
        // Enough rows that copying the database takes a while, as a real library's does.
        for index in 0..<3_000 { setup.insert(Photo(caption: "filler \(index)", image: bytes(2_000, seed: UInt8(index % 200)))) }
        for index in 0..<2 { setup.insert(Photo(caption: "hot \(index)", image: bytes(200_000, seed: UInt8(index)))) }
        try setup.save()
        let command = try makeContainer(Photo.self)

        let stop = LockedFlag()
        let saves = LockedValue(0)
        let writer = Thread {
            let context = ModelContext(server)
            var round = 0
            while !stop.isSet {
                round += 1
                guard let hot = try? context.fetch(FetchDescriptor<Photo>(predicate: #Predicate { $0.caption.starts(with: "hot") })) else { break }
                for photo in hot { photo.image = Self.bytes(200_000, seed: UInt8(round % 200)) }
                if (try? context.save()) != nil { saves.withLock { $0 += 1 } }
            }
        }
        writer.start()
        defer { stop.set() }
        var problems: [String] = []
        for round in 1...8 {
            let copyURL = folder.appendingPathComponent("copy\(round)/backup.store")
            let report = try command.backup(to: copyURL)
            if !report.missingExternalFiles.isEmpty { problems.append("backup \(round) reported \(report.missingExternalFiles)") }
            let copy = try ModelContainer(for: Schema([Photo.self]), configurations: ModelConfiguration(url: copyURL))
            let copyReport = try copy.checkIntegrity()
            if !copyReport.missingExternalFiles.isEmpty { problems.append("backup \(round) lacks \(copyReport.missingExternalFiles)") }
            let check = try command.checkIntegrity()
            if !check.missingExternalFiles.isEmpty { problems.append("check \(round) reported \(check.missingExternalFiles)") }
        }
        stop.set()
        while !writer.isFinished { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(problems, [])
        XCTAssertGreaterThan(saves.withLock { $0 }, 0, "the server saved meanwhile")
        XCTAssertTrue(try server.checkIntegrity().isOK)
    }
}

private final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
