import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// A recipe: a unique name (drawn from a few, so that inserts upsert), two searchable texts and two
/// attributes to filter and count by.
@Model final class CookbookEntry {
    @Attribute(.unique) var name: String
    @Attribute(.spotlight) var title: String
    @Attribute(.spotlight) var method: String
    var cuisine: String
    var minutes: Int

    init(name: String, title: String, method: String, cuisine: String, minutes: Int) {
        self.name = name
        self.title = title
        self.method = method
        self.cuisine = cuisine
        self.minutes = minutes
    }
}

/// Searches, and counts narrowed by a search, against the table itself, while one long-lived context
/// inserts (upserting), edits, deletes (one by one and by predicate), saves and rolls back, and
/// another container writes as another process would. What is kept between searches (ranks, hit
/// sets, counts, document lengths, excerpts) must follow every save; the expected answer is worked
/// out from the rows read with SQL, not from anything ObjectGraph keeps.
///
/// After every save, rollback and write of the other container, one context of each container
/// runs a few random queries (words, two words, a prefix, an exclusion, a phrase, with and
/// without a filter) and checks the hits, their scores (SQLite's own bm25's) and order, the words their excerpts mark (words
/// of the query, in the text the row holds now), the total, paging two at a time,
/// and the counts per cuisine. `RANDOM_SEARCH_SEED` and `RANDOM_SEARCH_STEPS` run other sequences.
final class RandomSearchTests: StoreTestCase {
    private static let names = ["n0", "n1", "n2", "n3", "n4", "n5"]
    private static let words = ["apple", "apricot", "pear", "plum", "fig", "lime", "kiwi", "date"]
    private static let cuisines = ["thai", "greek", "french"]

    /// A row as SQL reads it.
    private struct StoredRecipe {
        var name: String
        var title: String
        var method: String
        var cuisine: String
        var minutes: Int
    }

    /// A query, how to tell whether a row matches it, and which words its excerpts may mark.
    private struct Query {
        let text: String
        let matches: (StoredRecipe) -> Bool
        let marks: (String) -> Bool
    }

    private static func tokens(_ text: String) -> [String] {
        text.lowercased().split(whereSeparator: { !$0.isLetter }).map(String.init)
    }

    private static func hasWord(_ recipe: StoredRecipe, _ word: String) -> Bool {
        tokens(recipe.title).contains(word) || tokens(recipe.method).contains(word)
    }

    private static func randomQuery(using random: inout SeededGenerator) -> Query {
        let first = random.pick(words)!, second = random.pick(words)!
        switch Int.random(in: 0..<5, using: &random) {
        case 0:
            return Query(text: first, matches: { hasWord($0, first) }, marks: { $0 == first })
        case 1:
            return Query(text: "\(first) \(second)", matches: { hasWord($0, first) && hasWord($0, second) },
                         marks: { $0 == first || $0 == second })
        case 2:
            let prefix = String(first.prefix(2))
            return Query(text: "\(prefix)*", matches: { recipe in
                (tokens(recipe.title) + tokens(recipe.method)).contains { $0.hasPrefix(prefix) }
            }, marks: { $0.hasPrefix(prefix) })
        case 3:
            return Query(text: "\(first) -\(second)", matches: { hasWord($0, first) && !hasWord($0, second) }, marks: { $0 == first })
        default:
            // A phrase: the two words next to each other, in one attribute.
            return Query(text: "\"\(first) \(second)\"", matches: { recipe in
                [recipe.title, recipe.method].contains { text in
                    let words = tokens(text)
                    return words.indices.dropLast().contains { words[$0] == first && words[$0 + 1] == second }
                }
            }, marks: { $0 == first || $0 == second })
        }
    }

    private static func randomText(using random: inout SeededGenerator, count: ClosedRange<Int>) -> String {
        (0..<Int.random(in: count, using: &random)).map { _ in random.pick(words)! }.joined(separator: " ")
    }

    private func run(seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        let url = folder.appendingPathComponent("search-\(seed).store")
        let container = try ModelContainer(for: Schema([CookbookEntry.self]), configurations: ModelConfiguration(url: url))
        let otherProcess = try ModelContainer(for: Schema([CookbookEntry.self]), configurations: ModelConfiguration(url: url))
        let writer = ModelContext(container)
        let reader = ModelContext(container)
        let otherReader = ModelContext(otherProcess)
        let sql = try DatabaseQueue(path: url.path)
        var held: [CookbookEntry] = []
        var log: [String] = []

        func fail(_ message: String) throws -> Never {
            throw RandomRunDiverged.reported(message, seed: seed, log: log)
        }
        func newRecipe(_ step: Int) -> CookbookEntry {
            CookbookEntry(name: random.pick(Self.names)!, title: Self.randomText(using: &random, count: 1...3),
                   method: Self.randomText(using: &random, count: 0...6), cuisine: random.pick(Self.cuisines)!,
                   minutes: Int.random(in: 5...60, using: &random))
        }

        func check(_ moment: String) throws {
            let stored = try sql.read { db in
                try Row.fetchAll(db, sql: #"SELECT "name", "title", "method", "cuisine", "minutes" FROM "CookbookEntry""#).map {
                    StoredRecipe(name: $0["name"], title: $0["title"], method: $0["method"], cuisine: $0["cuisine"], minutes: $0["minutes"])
                }
            }
            for _ in 0..<3 {
                let query = Self.randomQuery(using: &random)
                let context = random.chance(50) ? reader : (random.chance(50) ? writer : otherReader)
                let cuisine = random.chance(40) ? random.pick(Self.cuisines) : nil
                let quick = Int.random(in: 10...40, using: &random)
                let predicate: Predicate<CookbookEntry>? = cuisine.map { cuisine in #Predicate<CookbookEntry> { $0.cuisine == cuisine } }
                let expected = stored.filter { query.matches($0) && (cuisine == nil || $0.cuisine == cuisine) }
                let described = "\(moment), search \(query.text) in \(cuisine ?? "any cuisine")"

                let titleWeight = random.chance(50) ? 10.0 : 1.0
                let results = try context.search(CookbookEntry.self, for: query.text, where: predicate,
                                                 weights: [\CookbookEntry.title: titleWeight])
                let found = results.hits.map(\.model.name).sorted()
                if found != expected.map(\.name).sorted() { try fail("\(described) found \(found), the rows say \(expected.map(\.name).sorted())") }
                if results.totalCount != expected.count { try fail("\(described) counted \(results.totalCount), the rows say \(expected.count)") }
                // Excerpts mark words of the query that the row's text holds now, not when it was first searched.
                let storedByName = Dictionary(stored.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
                for hit in results.hits {
                    guard let row = storedByName[hit.model.name] else { continue }
                    if hit.excerpts.isEmpty { try fail("\(described): \(row.name) has no excerpt") }
                    for (attribute, fragments) in hit.excerpts {
                        let text = attribute == "title" ? row.title : row.method
                        for fragment in fragments where fragment.isMatch {
                            // Overlapping matches of a phrase are marked as one run ("plum plum plum" for "plum plum").
                            let marked = fragment.text.lowercased()
                            if !Self.tokens(marked).allSatisfy(query.marks) || !text.lowercased().contains(marked) {
                                try fail("\(described): \(row.name)'s \(attribute) \"\(text)\" has \"\(fragment.text)\" marked")
                            }
                        }
                    }
                }
                // Each score is SQLite's own bm25 of the row now, however much of the ranking was kept.
                let match = try XCTUnwrap(FullTextQuery(query.text).matchExpression)
                let bm25 = try sql.read { db in
                    Dictionary(try Row.fetchAll(db, sql: """
                        SELECT "CookbookEntry"."name", bm25("_fts_CookbookEntry", \(titleWeight), 1) FROM "_fts_CookbookEntry"
                        JOIN "CookbookEntry" ON "CookbookEntry"."_pk" = "_fts_CookbookEntry".rowid WHERE "_fts_CookbookEntry" MATCH ?
                        """, arguments: [match]).map { ($0[0] as String, $0[1] as Double) }, uniquingKeysWith: { first, _ in first })
                }
                for hit in results.hits {
                    guard let expectedScore = bm25[hit.model.name] else { continue }
                    if abs(hit.score - expectedScore) > abs(expectedScore) * 1e-9 {
                        try fail("\(described) (title weight \(titleWeight)): \(hit.model.name) scored \(hit.score), SQLite's bm25 \(expectedScore)")
                    }
                }
                let scores = results.hits.map(\.score)
                if scores != scores.sorted() { try fail("\(described) came out of order: \(scores)") }

                var paged: [String] = []
                while paged.count < expected.count + 2 {
                    let page = try context.search(CookbookEntry.self, for: query.text, where: predicate, limit: 2, offset: paged.count)
                    if page.hits.isEmpty { break }
                    paged += page.hits.map(\.model.name)
                }
                if paged.sorted() != found { try fail("\(described) paged two at a time gave \(paged)") }

                let quickOnly = #Predicate<CookbookEntry> { $0.minutes <= quick }
                let counts = try context.counts(of: \CookbookEntry.cuisine, where: quickOnly, matching: query.text)
                let expectedCounts = Dictionary(grouping: stored.filter { query.matches($0) && $0.minutes <= quick }, by: \.cuisine)
                    .mapValues(\.count)
                if counts != expectedCounts { try fail("\(described), counts of \(quick) minutes or less: \(counts), the rows say \(expectedCounts)") }
            }
        }

        for step in 0..<steps {
            let moment = "step \(step)"
            let live = held.filter { $0.modelContext != nil && !$0.isDeleted }
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<25:
                let recipe = newRecipe(step)
                writer.insert(recipe)
                held.append(recipe)
                log.append("insert \(recipe.name): \(recipe.title) / \(recipe.method) (\(recipe.cuisine), \(recipe.minutes))")
            case 25..<40:
                guard let recipe = live.randomElement(using: &random) else { continue }
                switch Int.random(in: 0..<4, using: &random) {
                case 0: recipe.title = Self.randomText(using: &random, count: 1...3)
                case 1: recipe.method = Self.randomText(using: &random, count: 0...6)
                case 2: recipe.cuisine = random.pick(Self.cuisines)!
                default: recipe.minutes = Int.random(in: 5...60, using: &random)
                }
                log.append("edit \(recipe.name): \(recipe.title) / \(recipe.method) (\(recipe.cuisine), \(recipe.minutes))")
            case 40..<48:
                guard let recipe = live.randomElement(using: &random) else { continue }
                writer.delete(recipe)
                log.append("delete \(recipe.name)")
            case 48..<51:
                let cuisine = random.pick(Self.cuisines)!
                try writer.delete(model: CookbookEntry.self, where: #Predicate { $0.cuisine == cuisine })
                log.append("delete every \(cuisine) recipe")
            case 51..<63:
                // Another process: its own container, saving at once.
                let other = ModelContext(otherProcess)
                if random.chance(60) {
                    let recipe = newRecipe(step)
                    other.insert(recipe)
                    log.append("other process inserts \(recipe.name): \(recipe.title) / \(recipe.method) (\(recipe.cuisine), \(recipe.minutes))")
                } else if let recipe = try other.fetch(FetchDescriptor<CookbookEntry>()).randomElement(using: &random) {
                    if random.chance(50) {
                        recipe.method = Self.randomText(using: &random, count: 0...6)
                        log.append("other process edits \(recipe.name): \(recipe.method)")
                    } else {
                        other.delete(recipe)
                        log.append("other process deletes \(recipe.name)")
                    }
                }
                do {
                    try other.save()
                } catch {
                    try fail("\(moment), the other process's save threw \(error)")
                }
                try check(moment)
            case 63..<70:
                try check(moment)
            case 70..<90:
                do {
                    try writer.save()
                    log.append("save")
                } catch let error as SwiftDataError where error.code == .saveConflict {
                    // The other process changed or deleted a row this context changed: its edits are dropped.
                    writer.rollback()
                    log.append("save: conflict, rolled back")
                } catch {
                    try fail("\(moment), the save threw \(error)")
                }
                try check(moment)
            default:
                writer.rollback()
                log.append("rollback")
                try check(moment)
            }
        }
    }

    func testSearchesAndCountsFollowEverySaveOfEitherProcess() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_SEARCH", seeds: [20_261_128, 3, 11], steps: 400) { try run(seed: $0, steps: $1) }
    }
}
