import Foundation
import GRDB
import ObjectGraph
import XCTest

final class ExternalStorageTests: StoreTestCase {
    private func bytes(_ count: Int, seed: UInt8 = 7) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    func testALargeValueGoesToAFileAndASmallOneStaysInTheRow() throws {
        let large = bytes(2 * 1024 * 1024)
        let small = bytes(1024)
        do {
            let context = ModelContext(try makeContainer(Photo.self))
            context.insert(Photo(caption: "large", image: large))
            context.insert(Photo(caption: "small", image: small))
            try context.save()
        }
        XCTAssertEqual(externalFiles.count, 1)
        let rows = try rawRows("SELECT caption, typeof(image) AS kind, length(image) AS size FROM Photo ORDER BY caption")
        XCTAssertEqual(rows.map { $0["kind"] as String }, ["text", "blob"])
        XCTAssertEqual(rows[1]["size"] as Int, 1024)
        let fileName = try XCTUnwrap(try rawRows("SELECT image FROM Photo WHERE caption = 'large'").first?["image"] as String?)
        XCTAssertEqual(externalFiles, [fileName])

        let context = ModelContext(try makeContainer(Photo.self))
        let photos = try context.fetch(FetchDescriptor<Photo>(sortBy: [SortDescriptor(\.caption)]))
        XCTAssertEqual(photos[0].image, large)
        XCTAssertEqual(photos[1].image, small)
    }

    func testDeletingTheModelRemovesItsFileAfterTheSave() throws {
        let context = ModelContext(try makeContainer(Photo.self))
        let photo = Photo(caption: "big", image: bytes(300_000))
        context.insert(photo)
        try context.save()
        XCTAssertEqual(externalFiles.count, 1)
        context.delete(photo)
        XCTAssertEqual(externalFiles.count, 1, "the file stays until the delete is saved")
        try context.save()
        XCTAssertEqual(externalFiles, [])
    }

    func testReplacingOrClearingTheValueRemovesTheOldFile() throws {
        let context = ModelContext(try makeContainer(Photo.self))
        let photo = Photo(caption: "big", image: bytes(300_000))
        context.insert(photo)
        try context.save()
        let first = externalFiles

        photo.image = bytes(400_000, seed: 9)
        try context.save()
        XCTAssertEqual(externalFiles.count, 1)
        XCTAssertNotEqual(externalFiles, first)

        photo.image = nil
        try context.save()
        XCTAssertEqual(externalFiles, [])
        XCTAssertNil(try ModelContext(context.container).fetch(FetchDescriptor<Photo>()).first?.image)
    }

    func testChangingAnotherPropertyDoesNotRewriteTheFile() throws {
        let context = ModelContext(try makeContainer(Photo.self))
        let photo = Photo(caption: "big", image: bytes(300_000))
        context.insert(photo)
        try context.save()
        let before = externalFiles
        photo.caption = "renamed"
        try context.save()
        XCTAssertEqual(externalFiles, before)
    }

    func testAFailedSaveLeavesNoNewFileBehind() throws {
        let context = ModelContext(try makeContainer(Photo.self, Label.self))
        context.insert(Label(name: "a"))
        let b = Label(name: "b")
        context.insert(b)
        try context.save()

        context.insert(Photo(caption: "big", image: bytes(300_000)))
        b.name = "a"
        XCTAssertThrowsError(try context.save())
        XCTAssertEqual(externalFiles, [])
    }

    func testOrphanedFilesAreSweptWhenTheStoreOpens() throws {
        do {
            let context = ModelContext(try makeContainer(Photo.self))
            context.insert(Photo(caption: "kept", image: bytes(300_000)))
            try context.save()
        }
        let kept = externalFiles
        let orphan = folder.appendingPathComponent("test.store.external").appendingPathComponent(UUID().uuidString)
        try Data([1, 2, 3]).write(to: orphan)
        XCTAssertEqual(externalFiles.count, 2)

        _ = try makeContainer(Photo.self)
        XCTAssertEqual(externalFiles, kept)
    }

    func testDeleteAllDataRemovesRowsAndFiles() throws {
        let container = try makeContainer(Photo.self)
        let context = ModelContext(container)
        context.insert(Photo(caption: "big", image: bytes(300_000)))
        try context.save()
        container.deleteAllData()
        XCTAssertEqual(externalFiles, [])
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<Photo>()), 0)
    }
}
