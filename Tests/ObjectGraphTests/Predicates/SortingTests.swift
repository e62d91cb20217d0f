import Foundation
@testable import ObjectGraph
import XCTest

final class SortingTests: PredicateTestCase {
    func testSortingByAnOptionalEnumsRawValuePutsNilFirst() throws {
        try open(Note.self)
        for (title, priority) in [("high", Priority.high), ("none", nil), ("low", Priority.low)] as [(String, Priority?)] {
            let note = Note(title: title)
            note.priority = priority
            context.insert(note)
        }
        try context.save()
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.priority?.rawValue)])).map(\.title),
                       ["none", "low", "high"])
        XCTAssertEqual(try reader.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.priority?.rawValue, order: .reverse)])).map(\.title),
                       ["high", "low", "none"])
    }

    func testSortingThroughAToOneRelationship() throws {
        try open(SnippetFolder.self)
        let zebra = SnippetFolder(name: "Zebra"), apple = SnippetFolder(name: "Apple")
        let one = SnippetItem(title: "one"), two = SnippetItem(title: "two"), three = SnippetItem(title: "three")
        zebra.snippets = [one]
        apple.snippets = [two]
        [zebra, apple].forEach { context.insert($0) }
        context.insert(three)
        try context.save()
        let reader = ModelContext(container)
        let sorted = try reader.fetch(FetchDescriptor<SnippetItem>(sortBy: [SortDescriptor(\.folder?.name), SortDescriptor(\.title)]))
        XCTAssertEqual(sorted.map(\.title), ["three", "two", "one"])
        let reversed = try reader.fetch(FetchDescriptor<SnippetItem>(sortBy: [SortDescriptor(\.folder?.name, order: .reverse)]))
        XCTAssertEqual(reversed.map(\.title), ["one", "two", "three"])
    }

    /// Ties go by insertion order, in the direction of the last descriptor: the order an index on
    /// the sorted columns holds them in, so a limited fetch reads it without sorting.
    func testSeveralDescriptorsApplyInOrderAndTiesFollowTheLastDescriptorsDirection() throws {
        try open(AllTypes.self)
        for (index, (int, string)) in [(2, "b"), (1, "z"), (2, "a"), (1, "z"), (1, "y")].enumerated() {
            let model = AllTypes()
            model.int = int
            model.string = string
            model.int64 = Int64(index)
            context.insert(model)
        }
        try context.save()
        let sorted = try ModelContext(container).fetch(FetchDescriptor<AllTypes>(
            sortBy: [SortDescriptor(\.int), SortDescriptor(\.string, order: .reverse)]))
        XCTAssertEqual(sorted.map(\.int64), [3, 1, 4, 0, 2], "1 and 3 tie: the later one first, as the string order is reversed")
        let forward = try ModelContext(container).fetch(FetchDescriptor<AllTypes>(
            sortBy: [SortDescriptor(\.int, order: .reverse), SortDescriptor(\.string)]))
        XCTAssertEqual(forward.map(\.int64), [2, 0, 4, 1, 3])
    }

    func testAReverseSortIsTheMirrorOfTheForwardSortTiesIncluded() throws {
        try open(AllTypes.self)
        for index in 0..<12 {
            let model = AllTypes()
            model.int = index % 3
            model.int64 = Int64(index)
            context.insert(model)
        }
        try context.save()
        let reader = ModelContext(container)
        let forward = try reader.fetch(FetchDescriptor<AllTypes>(sortBy: [SortDescriptor(\.int)])).map(\.int64)
        let reverse = try reader.fetch(FetchDescriptor<AllTypes>(sortBy: [SortDescriptor(\.int, order: .reverse)])).map(\.int64)
        XCTAssertEqual(forward, [0, 3, 6, 9, 1, 4, 7, 10, 2, 5, 8, 11])
        XCTAssertEqual(reverse, forward.reversed())
    }

    /// Unsaved models sort among the saved ones as they will once saved, so a window of results
    /// keeps its order across the save.
    /// A limited fetch first finds its window's keys, then reads those rows: the same rows, in the
    /// same order, as cutting the window out of the whole result.
    func testALimitedFetchReadsOnlyItsWindowsRowsAndGivesTheSameOrder() throws {
        try open(AllTypes.self)
        for index in 0..<40 {
            let model = AllTypes()
            model.int = (index * 7) % 5
            model.string = String(repeating: "long text ", count: 50) + "\(index % 3)"
            model.int64 = Int64(index)
            context.insert(model)
        }
        try context.save()
        let reader = ModelContext(container)
        for sortBy in [[SortDescriptor(\AllTypes.int)], [SortDescriptor(\AllTypes.int, order: .reverse), SortDescriptor(\AllTypes.string)],
                       [SortDescriptor(\AllTypes.string, order: .reverse), SortDescriptor(\AllTypes.int, order: .reverse)]] {
            let whole = try reader.fetch(FetchDescriptor<AllTypes>(predicate: #Predicate { $0.int != 2 }, sortBy: sortBy)).map(\.int64)
            for (offset, limit) in [(0, 5), (3, 10), (30, 10), (31, 1)] {
                var window = FetchDescriptor<AllTypes>(predicate: #Predicate { $0.int != 2 }, sortBy: sortBy)
                window.fetchOffset = offset
                window.fetchLimit = limit
                var fetched: [Int64] = []
                let selects = try selects(in: container) { fetched = try reader.fetch(window).map(\.int64) }
                XCTAssertEqual(fetched, Array(whole.dropFirst(offset).prefix(limit)), "\(sortBy), \(offset), \(limit)")
                let select = try XCTUnwrap(selects.first)
                XCTAssertTrue(select.contains("FROM (SELECT \"t0\".\"_pk\" FROM \"AllTypes\""), select)
            }
        }
    }

    func testUnsavedChangesTakeTheTiePlacesTheirSaveWillGiveThem() throws {
        for order in [SortOrder.forward, .reverse] {
            let container = try ModelContainer(for: AllTypes.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
            let context = ModelContext(container)
            for index in 0..<4 {
                let model = AllTypes()
                model.int64 = Int64(index)
                context.insert(model)
            }
            try context.save()
            let changed = try XCTUnwrap(context.fetch(FetchDescriptor<AllTypes>(predicate: #Predicate { $0.int64 == 1 })).first)
            changed.string = "edited"
            for index in 4..<6 {
                let model = AllTypes()
                model.int64 = Int64(index)
                context.insert(model)
            }
            var window = FetchDescriptor<AllTypes>(sortBy: [SortDescriptor(\.int, order: order)])
            window.fetchOffset = 1
            window.fetchLimit = 4
            let unsaved = try context.fetch(window).map(\.int64)
            XCTAssertEqual(unsaved, order == .forward ? [1, 2, 3, 4] : [4, 3, 2, 1], "\(order)")
            try context.save()
            XCTAssertEqual(try ModelContext(container).fetch(window).map(\.int64), unsaved, "\(order), once saved")
        }
    }

    /// A member of a `Codable` attribute, plain or optional, sorts as its values do, nil first; it threw
    /// `.unsupportedSortDescriptor` before. Unsaved models are sorted in memory by the same descriptors.
    func testSortingByAMemberOfACodableValue() throws {
        try open(AllTypes.self)
        for (name, red, green) in [("b", 0.5, 3.0), ("c", -2.0, nil), ("a", 10.0, 1.0), ("d", 2.25, 2.0)] as [(String, Double, Double?)] {
            let model = AllTypes()
            model.string = name
            model.color = ColorData(red: red, green: 0, blue: 0)
            model.optionalColor = green.map { ColorData(red: 0, green: $0, blue: 0) }
            context.insert(model)
        }
        try context.save()
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.fetch(FetchDescriptor<AllTypes>(sortBy: [SortDescriptor(\.color.red)])).map(\.string),
                       ["c", "b", "d", "a"])
        XCTAssertEqual(try reader.fetch(FetchDescriptor<AllTypes>(sortBy: [SortDescriptor(\.color.red, order: .reverse)])).map(\.string),
                       ["a", "d", "b", "c"])
        XCTAssertEqual(try reader.fetch(FetchDescriptor<AllTypes>(sortBy: [SortDescriptor(\.optionalColor?.green)])).map(\.string),
                       ["c", "a", "d", "b"])

        let unsaved = AllTypes()
        unsaved.string = "e"
        unsaved.color = ColorData(red: 1, green: 0, blue: 0)
        reader.insert(unsaved)
        XCTAssertEqual(try reader.fetch(FetchDescriptor<AllTypes>(sortBy: [SortDescriptor(\.color.red)])).map(\.string),
                       ["c", "b", "e", "d", "a"])
    }

    func testSortingOnSomethingNotStoredThrows() throws {
        try open(Note.self)
        XCTAssertThrowsError(try context.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.wordCount)]))) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .unsupportedSortDescriptor)
        }
    }
}

final class PropertiesToFetchTests: PredicateTestCase {
    func testOnlyTheNamedColumnsAreReadAndTheOthersFaultInOnAccess() throws {
        try open(SnippetFolder.self, Note.self)
        let note = Note(title: "kept", body: String(repeating: "long body ", count: 100))
        note.priority = .high
        context.insert(note)
        try context.save()

        let reader = ModelContext(container)
        var descriptor = FetchDescriptor<Note>()
        descriptor.propertiesToFetch = [\.title]
        let fetched = try XCTUnwrap(reader.fetch(descriptor).first)
        let layout = try container.store.layout(for: Note.self)
        let bodySlot = try XCTUnwrap(layout.slotsByName["body"])
        XCTAssertTrue(fetched.storage.values[bodySlot.index] is UnloadedValue, "body was not read")

        let modelQueries: ([String]) -> [String] = { $0.filter { $0.hasPrefix("SELECT") && !$0.contains("sqlite_master") } }
        let titleQueries = modelQueries(container.store.sqlLog.statements { XCTAssertEqual(fetched.title, "kept") })
        XCTAssertEqual(titleQueries, [], "title was read with the fetch")
        let restQueries = modelQueries(container.store.sqlLog.statements {
            XCTAssertTrue(fetched.body.hasPrefix("long body"))
            XCTAssertEqual(fetched.priority, .high)
        })
        XCTAssertEqual(restQueries.count, 1, "the other columns load together, once: \(restQueries)")
    }

    func testSavingAPartlyReadModelKeepsTheColumnsItDidNotRead() throws {
        try open(SnippetFolder.self, Note.self)
        context.insert(Note(title: "old", body: "precious"))
        try context.save()

        let reader = ModelContext(container)
        var descriptor = FetchDescriptor<Note>()
        descriptor.propertiesToFetch = [\.title]
        let fetched = try XCTUnwrap(reader.fetch(descriptor).first)
        fetched.title = "new"
        try reader.save()

        let check = try XCTUnwrap(ModelContext(container).fetch(FetchDescriptor<Note>()).first)
        XCTAssertEqual(check.title, "new")
        XCTAssertEqual(check.body, "precious")
    }
}
