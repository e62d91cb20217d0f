import Foundation
@testable import ObjectGraph
import XCTest

final class RelationshipPredicateTests: PredicateTestCase {
    var work: SnippetFolder!

    override func setUpWithError() throws {
        try super.setUpWithError()
        try open(SnippetFolder.self, Budget.self)
        let swift = SnippetTag(name: "swift"), sql = SnippetTag(name: "sql"), unused = SnippetTag(name: "unused")
        work = SnippetFolder(name: "Work")
        let home = SnippetFolder(name: "Home")
        let fetch = SnippetItem(title: "fetch"), save = SnippetItem(title: "save"), query = SnippetItem(title: "query")
        let loose = SnippetItem(title: "loose")
        fetch.tags = [swift]
        save.tags = [swift, sql]
        query.tags = [sql]
        work.snippets = [fetch, save]
        home.snippets = [query]
        [work, home].forEach { context.insert($0) }
        context.insert(loose)
        context.insert(unused)
        try context.save()
    }

    func testToOnePaths() throws {
        try assertPredicate(#Predicate<SnippetItem> { $0.folder?.name == "Work" },
                            sql: #"((SELECT "t1"."name" FROM "SnippetFolder" AS "t1" WHERE "t1"."_pk" = "t0"."folder") = ?)"#,
                            selects: ["fetch", "save"], label: \.title)
        try assertPredicate(#Predicate<SnippetItem> { $0.folder?.name == "Nowhere" }, selects: [], label: \.title)
        let wanted: String? = "Home"
        try assertPredicate(#Predicate<SnippetItem> { $0.folder?.name == wanted }, selects: ["query"], label: \.title)
        // Without a folder the name is nil: unequal to "Work", equal to nil, as in Swift.
        try assertPredicate(#Predicate<SnippetItem> { $0.folder?.name != "Work" }, selects: ["query", "loose"], label: \.title)
        try assertPredicate(#Predicate<SnippetItem> { $0.folder?.name == nil }, selects: ["loose"], label: \.title)
        try assertPredicate(#Predicate<SnippetItem> { $0.folder == nil },
                            sql: #"("t0"."folder" IS NULL)"#, selects: ["loose"], label: \.title)
        try assertPredicate(#Predicate<SnippetItem> { $0.folder != nil && $0.folder!.name != "Work" },
                            sql: #"(("t0"."folder" IS NOT NULL) AND ((SELECT "t1"."name" FROM "SnippetFolder" AS "t1" WHERE "t1"."_pk" = "t0"."folder") IS NOT ?))"#,
                            selects: ["query"], label: \.title)
    }

    func testIdentityThroughPersistentModelID() throws {
        let folderID = work.persistentModelID
        try assertPredicate(#Predicate<SnippetItem> { $0.folder?.persistentModelID == folderID },
                            sql: #"("t0"."folder" IS ?)"#, selects: ["fetch", "save"], label: \.title)
        let otherEntity = try XCTUnwrap(context.fetch(FetchDescriptor<SnippetTag>()).first).persistentModelID
        try assertPredicate(#Predicate<SnippetItem> { $0.folder?.persistentModelID == otherEntity },
                            sql: "0", selects: [], label: \.title)
        let fetchID = try XCTUnwrap(context.fetch(FetchDescriptor<SnippetItem>()).first { $0.title == "fetch" }).persistentModelID
        try assertPredicate(#Predicate<SnippetItem> { $0.persistentModelID != fetchID },
                            sql: #"("t0"."_pk" IS NOT ?)"#, selects: ["save", "query", "loose"], label: \.title)
    }

    func testToManyTests() throws {
        // A unique name picks one tag: it is found once per statement, and each snippet's join rows by key.
        try assertPredicate(#Predicate<SnippetItem> { $0.tags.contains { $0.name == "sql" } },
                            sql: #"EXISTS (SELECT 1 FROM "_SnippetItem_tags" AS "t2" WHERE "t2"."source" = "t0"."_pk" AND "t2"."destination" IN (SELECT "t1"."_pk" FROM "SnippetTag" AS "t1" WHERE ("t1"."name" = ?)))"#,
                            selects: ["save", "query"], label: \.title)
        let sqlTag = try XCTUnwrap(context.fetch(FetchDescriptor<SnippetTag>()).first { $0.name == "sql" }).persistentModelID
        try assertPredicate(#Predicate<SnippetItem> { $0.tags.contains { $0.persistentModelID == sqlTag } },
                            sql: #"EXISTS (SELECT 1 FROM "_SnippetItem_tags" AS "t2" WHERE "t2"."source" = "t0"."_pk" AND "t2"."destination" IN (SELECT "t1"."_pk" FROM "SnippetTag" AS "t1" WHERE ("t1"."_pk" IS ?)))"#,
                            selects: ["save", "query"], label: \.title)
        // A condition that may pass many tags is tested on each snippet's own.
        try assertPredicate(#Predicate<SnippetItem> { $0.tags.contains { $0.name != "sql" } },
                            sql: #"EXISTS (SELECT 1 FROM "_SnippetItem_tags" AS "t2" JOIN "SnippetTag" AS "t1" ON "t1"."_pk" = "t2"."destination" WHERE "t2"."source" = "t0"."_pk" AND ("t1"."name" IS NOT ?))"#,
                            selects: ["fetch", "save"], label: \.title)
        try assertPredicate(#Predicate<SnippetItem> { $0.tags.isEmpty },
                            sql: #"NOT EXISTS (SELECT 1 FROM "_SnippetItem_tags" AS "t2" JOIN "SnippetTag" AS "t1" ON "t1"."_pk" = "t2"."destination" WHERE "t2"."source" = "t0"."_pk")"#,
                            selects: ["loose"], label: \.title)
        try assertPredicate(#Predicate<SnippetItem> { $0.tags.count >= 2 },
                            sql: #"((SELECT COUNT(*) FROM "_SnippetItem_tags" AS "t2" JOIN "SnippetTag" AS "t1" ON "t1"."_pk" = "t2"."destination" WHERE "t2"."source" = "t0"."_pk") >= ?)"#,
                            selects: ["save"], label: \.title)
        try assertPredicate(#Predicate<SnippetItem> { $0.tags.allSatisfy { $0.name == "swift" } },
                            sql: #"(NOT EXISTS (SELECT 1 FROM "_SnippetItem_tags" AS "t2" JOIN "SnippetTag" AS "t1" ON "t1"."_pk" = "t2"."destination" WHERE "t2"."source" = "t0"."_pk" AND (NOT COALESCE(("t1"."name" = ?), 0))))"#,
                            selects: ["fetch", "loose"], label: \.title)
        try assertPredicate(#Predicate<SnippetItem> { $0.tags.filter { $0.name.starts(with: "s") }.count == 2 },
                            sql: #"((SELECT COUNT(*) FROM "_SnippetItem_tags" AS "t2" JOIN "SnippetTag" AS "t1" ON "t1"."_pk" = "t2"."destination" WHERE "t2"."source" = "t0"."_pk" AND (substr("t1"."name", 1, length(?)) = ?)) = ?)"#,
                            selects: ["save"], label: \.title)
    }

    func testAToManyTestOnListedRowsIsASetOfOwnersInACountAndALookupPerRowInAFetch() throws {
        let names = ["sql", "unused"]
        let predicate = #Predicate<SnippetItem> { $0.tags.contains { names.contains($0.name) } }
        // A fetch (and so `assertPredicate`'s rows) tests each snippet's join rows; its fetchCount
        // reads the listed tags' owners once, and must count the same snippets.
        try assertPredicate(predicate,
                            sql: #"EXISTS (SELECT 1 FROM "_SnippetItem_tags" AS "t2" WHERE "t2"."source" = "t0"."_pk" AND "t2"."destination" IN (SELECT "t1"."_pk" FROM "SnippetTag" AS "t1" WHERE ("t1"."name" IN (?, ?))))"#,
                            selects: ["save", "query"], label: \.title)
        let layout = try container.store.layout(for: SnippetItem.self)
        XCTAssertEqual(try PredicateTranslator.translate(predicate, layout: layout, store: container.store, use: .collectingMatches).sql,
                       #"("t0"."_pk" IN (SELECT "t2"."source" FROM "_SnippetItem_tags" AS "t2" WHERE "t2"."destination" IN (SELECT "t1"."_pk" FROM "SnippetTag" AS "t1" WHERE ("t1"."name" IN (?, ?)))))"#)

        // Negated, and two tags that must both be there: counts and counts per group agree with the models.
        let reader = ModelContext(container)
        let all = try reader.fetch(FetchDescriptor<SnippetItem>())
        let untagged = #Predicate<SnippetItem> { !$0.tags.contains { $0.name == "sql" } }
        let both = #Predicate<SnippetItem> { $0.tags.contains { $0.name == "sql" } && $0.tags.contains { $0.name == "swift" } }
        for condition in [predicate, untagged, both] {
            let matching = try all.filter { try condition.evaluate($0) }
            XCTAssertEqual(try reader.fetchCount(FetchDescriptor(predicate: condition)), matching.count)
            let perFolder = try reader.counts(of: \SnippetItem.folder, where: condition)
            XCTAssertEqual(perFolder, Dictionary(grouping: matching, by: { $0.folder?.persistentModelID }).mapValues(\.count))
        }
        XCTAssertEqual(try all.filter { try untagged.evaluate($0) }.map(\.title).sorted(), ["fetch", "loose"])
        XCTAssertEqual(try all.filter { try both.evaluate($0) }.map(\.title), ["save"])

        // A condition that may pass many tags, or a to-many reached through a to-one, keeps the lookup per row.
        XCTAssertTrue(try PredicateTranslator.translate(#Predicate<SnippetItem> { $0.tags.contains { $0.name != "sql" } },
                                                        layout: layout, store: container.store, use: .collectingMatches).sql.hasPrefix("EXISTS"))
    }

    func testTheOtherSideOfRelationships() throws {
        try assertPredicate(#Predicate<SnippetTag> { $0.snippets.isEmpty },
                            sql: #"NOT EXISTS (SELECT 1 FROM "_SnippetItem_tags" AS "t2" JOIN "SnippetItem" AS "t1" ON "t1"."_pk" = "t2"."source" WHERE "t2"."destination" = "t0"."_pk")"#,
                            selects: ["unused"], label: \.name)
        try assertPredicate(#Predicate<SnippetFolder> { $0.snippets.contains { $0.tags.contains { $0.name == "sql" } } },
                            sql: #"EXISTS (SELECT 1 FROM "SnippetItem" AS "t1" WHERE "t1"."folder" = "t0"."_pk" AND EXISTS (SELECT 1 FROM "_SnippetItem_tags" AS "t3" WHERE "t3"."source" = "t1"."_pk" AND "t3"."destination" IN (SELECT "t2"."_pk" FROM "SnippetTag" AS "t2" WHERE ("t2"."name" = ?))))"#,
                            selects: ["Work", "Home"], label: \.name)
        try assertPredicate(#Predicate<SnippetFolder> { $0.snippets.count == 1 },
                            sql: #"((SELECT COUNT(*) FROM "SnippetItem" AS "t1" WHERE "t1"."folder" = "t0"."_pk") = ?)"#,
                            selects: ["Home"], label: \.name)
    }

    func testDeleteWithAPredicateOnARelationshipAppliesDeleteRules() throws {
        try context.delete(model: SnippetFolder.self, where: #Predicate { $0.name == "Work" })
        try context.save()
        let reader = ModelContext(container)
        XCTAssertEqual(try reader.fetch(FetchDescriptor<SnippetItem>()).map(\.title).sorted(), ["loose", "query"])
    }

    func testSortingByAnEnumAndByDecimal() throws {
        let context = ModelContext(container)
        for (note, amount) in [("b", "10.5"), ("a", "9.75"), ("c", "100")] {
            context.insert(Transaction(note: note, amount: Decimal(string: amount)!))
        }
        try context.save()
        let byAmount = try ModelContext(container).fetch(FetchDescriptor<Transaction>(sortBy: [SortDescriptor(\.amount)]))
        XCTAssertEqual(byAmount.map(\.note), ["a", "b", "c"])
        let filtered = try ModelContext(container).fetch(FetchDescriptor<Transaction>(
            predicate: #Predicate { $0.budget == nil && $0.amount >= 10 }, sortBy: [SortDescriptor(\.amount, order: .reverse)]))
        XCTAssertEqual(filtered.map(\.note), ["c", "b"])
    }
}
