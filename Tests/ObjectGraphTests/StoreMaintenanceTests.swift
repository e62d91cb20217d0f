import Foundation
import GRDB
import ObjectGraph
import XCTest

/// Online backups and the integrity check.
final class StoreMaintenanceTests: StoreTestCase {
    private func bytes(_ count: Int, seed: UInt8) -> Data {
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
}
