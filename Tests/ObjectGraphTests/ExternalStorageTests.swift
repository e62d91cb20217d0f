import Foundation
import GRDB
import ObjectGraph
import XCTest

/// A scan's pixels are never nil: a value that cannot be read must still read as something.
@Model final class Scan {
    var label: String
    @Attribute(.externalStorage) var pixels: Data

    init(label: String, pixels: Data) {
        self.label = label
        self.pixels = pixels
    }
}

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

    func testDeletingAModelFetchedWithoutItsFileRemovesTheFile() throws {
        let container = try makeContainer(Photo.self)
        let context = ModelContext(container)
        context.insert(Photo(caption: "big", image: bytes(300_000)))
        try context.save()

        let other = ModelContext(container)
        var descriptor = FetchDescriptor<Photo>()
        descriptor.propertiesToFetch = [\.caption]
        for photo in try other.fetch(descriptor) { other.delete(photo) }
        try other.save()
        XCTAssertEqual(externalFiles, [])
    }

    func testDeletingAModelWhoseFileAnotherContextReplacedRemovesTheNewFile() throws {
        let (container, context, photo) = try savedPhotoInItsContext(bytes(300_000))

        // Another context replaces the file; this one still knows the first.
        let other = ModelContext(container)
        try other.fetch(FetchDescriptor<Photo>()).first?.image = bytes(400_000, seed: 9)
        try other.save()
        // Deleting what another context changed since is a conflict (see ConcurrencyTests); seen
        // again, the photo is deleted, and the file its row names now goes with it.
        context.delete(photo)
        XCTAssertThrowsError(try context.save())
        context.rollback()
        _ = try context.fetch(FetchDescriptor<Photo>())
        context.delete(photo)
        try context.save()
        XCTAssertEqual(externalFiles, [])
    }

    /// A container holding one photo of `image`, saved through the context returned with it.
    private func savedPhotoInItsContext(_ image: Data) throws -> (ModelContainer, ModelContext, Photo) {
        let container = try makeContainer(Photo.self)
        let context = ModelContext(container)
        let photo = Photo(caption: "big", image: image)
        context.insert(photo)
        try context.save()
        return (container, context, photo)
    }

    // MARK: Files are read when their property is

    /// A container holding one saved photo of `image`, and the name of its file.
    private func savedPhoto(_ image: Data) throws -> (ModelContainer, file: URL) {
        let (container, _, _) = try savedPhotoInItsContext(image)
        let name = try XCTUnwrap(externalFiles.first)
        return (container, folder.appendingPathComponent("test.store.external").appendingPathComponent(name))
    }

    func testAFetchReadsNoFileUntilThePropertyIsRead() throws {
        let (container, file) = try savedPhoto(bytes(300_000))
        let context = ModelContext(container)
        let photo = try XCTUnwrap(try context.fetch(FetchDescriptor<Photo>()).first)
        XCTAssertEqual(photo.caption, "big")
        // What the file holds when the property is read is what it returns: the fetch did not read it.
        let rewritten = bytes(200_000, seed: 3)
        try rewritten.write(to: file)
        XCTAssertEqual(photo.image, rewritten)
    }

    func testAFileAnotherContextReplacedAfterTheFetchReadsAsItIsNow() throws {
        let (container, _) = try savedPhoto(bytes(300_000))
        let context = ModelContext(container)
        let photo = try XCTUnwrap(try context.fetch(FetchDescriptor<Photo>()).first)

        let replacement = bytes(400_000, seed: 9)
        let other = ModelContext(container)
        try other.fetch(FetchDescriptor<Photo>()).first?.image = replacement
        try other.save()
        // The file the fetched row named is gone; the row names the new one.
        XCTAssertEqual(photo.image, replacement)
    }

    /// A model whose row another context deleted since the fetch has no file left to read: its image
    /// reads as nil, as the value is gone, and that is no error of the store's. It was reported as
    /// one, and the context's next save, whatever it held, threw "cannot read the rest of a Photo".
    func testAFileWhoseRowAnotherContextDeletedReadsAsNilAndTheNextSaveGoesThrough() throws {
        let (container, _) = try savedPhoto(bytes(300_000))
        let context = ModelContext(container)
        let photo = try XCTUnwrap(try context.fetch(FetchDescriptor<Photo>()).first)
        let other = ModelContext(container)
        other.delete(try XCTUnwrap(other.fetch(FetchDescriptor<Photo>()).first))
        try other.save()
        XCTAssertEqual(externalFiles, [])

        XCTAssertNil(photo.image)
        context.insert(Photo(caption: "new"))
        try context.save()
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Photo>()).map(\.caption), ["new"])
        // Changing the deleted model is still the conflict it was.
        photo.caption = "edited"
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .saveConflict)
        }
    }

    func testAMissingFileReadsAsNilAndTheNextSaveSaysWhy() throws {
        let (container, file) = try savedPhoto(bytes(300_000))
        try FileManager.default.removeItem(at: file)
        let context = ModelContext(container)
        let photo = try XCTUnwrap(try context.fetch(FetchDescriptor<Photo>()).first)
        XCTAssertNil(photo.image)
        XCTAssertThrowsError(try context.save()) { error in
            XCTAssertTrue("\(error)".contains("cannot be read"), "\(error)")
        }
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<Photo>()), 1, "the row is kept")
    }

    /// A write needs no external file it does not change. Setting any property read every file of
    /// the model first, so a model whose file was gone (a backup restored without it) could not be
    /// saved again at all, not even to clear that value; and renaming a photo read its image.
    func testAModelWhoseFileIsGoneCanBeChangedAndItsValueCleared() throws {
        let (container, file) = try savedPhoto(bytes(300_000))
        try FileManager.default.removeItem(at: file)

        let renaming = ModelContext(container)
        try XCTUnwrap(try renaming.fetch(FetchDescriptor<Photo>()).first).caption = "renamed"
        try renaming.save()
        XCTAssertEqual(try container.checkIntegrity().missingExternalFiles, [file.lastPathComponent],
                       "the row still names its file: nothing said the value changed")

        let clearing = ModelContext(container)
        try XCTUnwrap(try clearing.fetch(FetchDescriptor<Photo>()).first).image = nil
        try clearing.save()
        XCTAssertTrue(try container.checkIntegrity().isOK)
        let photo = try XCTUnwrap(try ModelContext(container).fetch(FetchDescriptor<Photo>()).first)
        XCTAssertEqual(photo.caption, "renamed")
        XCTAssertNil(photo.image)

        // A file still there is read when its property is, after a write of another one.
        let inserting = ModelContext(container)
        inserting.insert(Photo(caption: "big", image: bytes(300_000, seed: 3)))
        try inserting.save()
        let context = ModelContext(container)
        let kept = try XCTUnwrap(try context.fetch(FetchDescriptor<Photo>(predicate: #Predicate { $0.caption == "big" })).first)
        kept.caption = "changed first"
        XCTAssertEqual(kept.image, bytes(300_000, seed: 3))
        context.rollback()
        XCTAssertEqual(kept.caption, "big")
        XCTAssertEqual(kept.image, bytes(300_000, seed: 3))
        // A value replaced unread comes back from its file after a rollback.
        let replacing = ModelContext(container)
        let replaced = try XCTUnwrap(try replacing.fetch(FetchDescriptor<Photo>(predicate: #Predicate { $0.caption == "big" })).first)
        replaced.image = nil
        XCTAssertTrue(replacing.hasChanges)
        replacing.rollback()
        XCTAssertEqual(replaced.image, bytes(300_000, seed: 3))
        replaced.image = Data([1, 2, 3])
        try replacing.save()
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Photo>(predicate: #Predicate { $0.caption == "big" })).first?.image,
                       Data([1, 2, 3]))
        XCTAssertTrue(try container.checkIntegrity().isOK, "the replaced file was retired")
    }

    /// A property read cannot throw, and a `Data` that is not optional has no nil to read as: a missing
    /// file stopped the process ("read before it was given a value"). It reads as empty now, and the
    /// next save says why, as for an optional.
    func testAMissingFileOfAValueThatIsNotOptionalReadsAsEmptyAndTheNextSaveSaysWhy() throws {
        let context = ModelContext(try makeContainer(Scan.self))
        context.insert(Scan(label: "big", pixels: bytes(300_000)))
        try context.save()
        let name = try XCTUnwrap(externalFiles.first)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("test.store.external").appendingPathComponent(name))

        let reader = ModelContext(context.container)
        let scan = try XCTUnwrap(try reader.fetch(FetchDescriptor<Scan>()).first)
        XCTAssertEqual(scan.pixels, Data())
        XCTAssertThrowsError(try reader.save()) { error in
            XCTAssertTrue("\(error)".contains("cannot be read"), "\(error)")
        }
        XCTAssertEqual(try ModelContext(context.container).fetchCount(FetchDescriptor<Scan>()), 1, "the row is kept")
    }

    func testReplacingAFileNotReadYetRemovesTheOldOne() throws {
        let (container, _) = try savedPhoto(bytes(300_000))
        let first = externalFiles
        let context = ModelContext(container)
        let photo = try XCTUnwrap(try context.fetch(FetchDescriptor<Photo>()).first)
        photo.image = bytes(400_000, seed: 9)
        try context.save()
        XCTAssertEqual(externalFiles.count, 1)
        XCTAssertNotEqual(externalFiles, first)

        let another = ModelContext(container)
        try another.fetch(FetchDescriptor<Photo>()).first?.image = nil
        try another.save()
        XCTAssertEqual(externalFiles, [])
    }

    func testSavingAnotherPropertyKeepsAFileNotReadYet() throws {
        let image = bytes(300_000)
        let (container, _) = try savedPhoto(image)
        let before = externalFiles
        let context = ModelContext(container)
        try context.fetch(FetchDescriptor<Photo>()).first?.caption = "renamed"
        try context.save()
        XCTAssertEqual(externalFiles, before)
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Photo>()).first?.image, image)
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

    func testAStoreOpenedBesideAnotherSweepsNothing() throws {
        let running = try makeContainer(Photo.self)
        let context = ModelContext(running)
        context.insert(Photo(caption: "kept", image: bytes(300_000)))
        try context.save()
        // A file the running store has written for a save that has not committed yet: a second store
        // of the file opened now (`snippetbox check` or `backup` beside the server) cannot tell it
        // from an orphan, and removing it would leave the row about to commit naming a missing file.
        let pending = UUID().uuidString
        try Data([1, 2, 3]).write(to: folder.appendingPathComponent("test.store.external").appendingPathComponent(pending))

        let beside = try makeContainer(Photo.self)
        XCTAssertTrue(externalFiles.contains(pending))
        XCTAssertEqual(try ModelContext(beside).fetchCount(FetchDescriptor<Photo>()), 1)
        withExtendedLifetime(running) {}
    }

    func testTheSweepRunsOnceTheOtherStoresAreClosed() throws {
        var running: ModelContainer? = try makeContainer(Photo.self)
        let orphan = UUID().uuidString
        let directory = folder.appendingPathComponent("test.store.external")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: directory.appendingPathComponent(orphan))
        _ = try makeContainer(Photo.self)
        XCTAssertEqual(externalFiles, [orphan], "kept while the first store is open")

        XCTAssertNotNil(running)
        running = nil
        _ = try makeContainer(Photo.self)
        XCTAssertEqual(externalFiles, [], "the first store's claim ends with it")
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

    func testDeleteAllDataLeavesAFileNoRowNamesYet() throws {
        let container = try makeContainer(Photo.self)
        let context = ModelContext(container)
        context.insert(Photo(caption: "big", image: bytes(300_000)))
        try context.save()
        // A file a save on another thread has written and not yet committed a row for: removing it
        // would leave that row naming a missing file.
        let pending = UUID().uuidString
        try Data([1, 2, 3]).write(to: folder.appendingPathComponent("test.store.external").appendingPathComponent(pending))

        container.deleteAllData()
        XCTAssertEqual(externalFiles, [pending])
    }

    // MARK: Saves while a read transaction is open

    /// Saves a photo of `first` bytes, then runs `change` on another thread while a read transaction
    /// of a context of its own is open here, and checks that the transaction still reads `first`.
    private func readInsideATransaction(
        whileAnotherThreadRuns change: @escaping @Sendable (ModelContainer) throws -> Void,
        first: Data, filesInside: Int
    ) throws -> ModelContainer {
        let container = try makeContainer(Photo.self)
        let context = ModelContext(container)
        context.insert(Photo(caption: "big", image: first))
        try context.save()

        let reader = ModelContext(container)
        try reader.withReadTransaction {
            try onAnotherThread { try change(container) }
            XCTAssertEqual(externalFiles.count, filesInside, "the dropped file waits for the transaction")
            // The row as the transaction sees it still names the first file.
            XCTAssertEqual(try reader.fetch(FetchDescriptor<Photo>()).first?.image, first)
        }
        return container
    }

    func testAFileASaveReplacesStaysReadableInATransactionThatBeganBefore() throws {
        let first = bytes(300_000), second = bytes(400_000, seed: 9)
        let container = try readInsideATransaction(whileAnotherThreadRuns: { container in
            let context = ModelContext(container)
            try context.fetch(FetchDescriptor<Photo>()).first?.image = second
            try context.save()
        }, first: first, filesInside: 2)

        XCTAssertEqual(externalFiles.count, 1, "removed when the transaction ended")
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<Photo>()).first?.image, second)
    }

    func testAFileOfADeletedModelStaysReadableInATransactionThatBeganBefore() throws {
        let container = try readInsideATransaction(whileAnotherThreadRuns: { container in
            let context = ModelContext(container)
            for photo in try context.fetch(FetchDescriptor<Photo>()) { context.delete(photo) }
            try context.save()
        }, first: bytes(300_000), filesInside: 1)

        XCTAssertEqual(externalFiles, [])
        XCTAssertEqual(try ModelContext(container).fetchCount(FetchDescriptor<Photo>()), 0)
    }

    func testDeleteAllDataKeepsFilesATransactionThatBeganBeforeCanSee() throws {
        _ = try readInsideATransaction(whileAnotherThreadRuns: { container in
            container.deleteAllData()
        }, first: bytes(300_000), filesInside: 1)

        XCTAssertEqual(externalFiles, [])
    }

    func testAFileIsRemovedAtOnceWhenNoTransactionThatCouldSeeItIsOpen() throws {
        let (container, context, photo) = try savedPhotoInItsContext(bytes(300_000))

        try ModelContext(container).withReadTransaction {
            _ = try ModelContext(container).fetchCount(FetchDescriptor<Photo>())
        }
        photo.image = bytes(400_000, seed: 9)
        try context.save()
        XCTAssertEqual(externalFiles.count, 1)
    }
}
