import Foundation

/// Workloads 1–5: every contender, the same data, alternating contenders from round to round, a
/// fresh store file per contender per round.
struct StoreWorkloads {
    let count: Int
    let rounds: Int
    /// Untimed rounds of every contender but Fluent before the timed ones. Without them, a contender's
    /// first round ran in memory the process had never touched: raw SQLite's first fetch of all
    /// 100,000 took 14,600 page faults and 102 ms, its later ones none and 63–65 ms, while
    /// ObjectGraph's fetch, after an insert that had already grown the heap, never faulted. The
    /// median of three rounds then compared a cold contender with a warm one.
    var warmUpRounds = 1
    let fluentRounds: Int
    let queryRepetitions: Int
    let searchRepetitions: Int
    let contenders: [any Contender.Type]
    let scratch: URL
    let results: Results

    private var thousands: String { count >= 1000 ? "\(count / 1000)k" : "\(count)" }

    func run() async throws {
        print("Generating \(count) snippets…")
        let data = Dataset(count: count)
        // Fluent is left out: one round of it takes a minute and more, and in the default order
        // (raw, GRDB, Fluent, ObjectGraph) it never runs first, so the heap is warm when it starts.
        let warmed = contenders.filter { $0 != FluentContender.self }
        for round in 0..<warmUpRounds {
            for type in warmed {
                print("warm-up round \(round + 1)/\(warmUpRounds), not timed: \(type.name)")
                // Its figures go to a `Results` that nothing reads.
                try await runRound(type, data: data, round: round, recordingIn: Results())
            }
        }
        for round in 0..<rounds {
            let order = (0..<contenders.count).map { contenders[($0 + round) % contenders.count] }
            for type in order {
                if type == FluentContender.self && round >= fluentRounds { continue }
                print("round \(round + 1)/\(rounds): \(type.name)")
                try await runRound(type, data: data, round: round, recordingIn: results)
            }
        }
    }

    private func freshPath(_ name: String) throws -> String {
        let directory = scratch.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }

    private func runRound(_ type: any Contender.Type, data: Dataset, round: Int, recordingIn results: Results) async throws {
        let name = type.name
        let note = type == FluentContender.self && fluentRounds < rounds ? "\(fluentRounds) rounds" : ""
        do {
            let path = try freshPath("store.sqlite")
            let contender = try await type.init(path: path, fullText: false)
            if round == 0, let fluent = contender as? FluentContender {
                print("  Fluent's SQLite (SQLiteNIO, bundled): \(try await fluent.sqliteVersion())")
            }
            let insert = try await timed { try await contender.insert(data) }
            results.add("1 insert", "1 insert \(thousands) snippets + folder + 2 tags, one transaction", name, .once, [insert.seconds], note: note)

            let all = try await timed { try await contender.fetchAll() }
            results.check("fetch all", name, all.value)
            results.add("2 fetch", "2a fetch all \(thousands), read every attribute", name, .once, [all.seconds], note: note)

            var pageTimes: [Double] = []
            for _ in 0..<queryRepetitions {
                let page = try await timed { try await contender.fetchPageWithTags() }
                results.check("page", name, page.value)
                pageTimes.append(page.seconds)
            }
            results.add("2 fetch", "2b page of 50 newest + tags (per query)", name, .perQuery, pageTimes)

            var filterTimes: [Double] = []
            for index in 0..<queryRepetitions {
                let filter = Dataset.filterCases[index % Dataset.filterCases.count]
                let query = try await timed { try await contender.filtered(folder: filter.folder, tag: filter.tag, language: filter.language) }
                results.check("filter \(index % Dataset.filterCases.count)", name, query.value)
                filterTimes.append(query.seconds)
            }
            results.add("3 filter", "3 folder+tag+language+favourite, sorted, limit 50 (per query)", name, .perQuery, filterTimes)

            let update = try await timed { try await contender.update10k() }
            results.check("update", name, update.value)
            results.add("4 write", "4a update 10k snippets, one save", name, .once, [update.seconds], note: note)
            let delete = try await timed { try await contender.deleteFolderCascade() }
            results.check("delete", name, delete.value)
            results.add("4 write", "4b delete a folder + its \(count / 100) snippets (cascade)", name, .once, [delete.seconds], note: note)
            try await contender.close()
            try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
        }

        // Full-text search: a store with the index, filled by each contender's own way.
        let path = try freshPath("search.sqlite")
        let contender = try await type.init(path: path, fullText: true)
        let searches = [Dataset.rareWord, Dataset.commonWord].map { word in
            (word, "5 search \(word == Dataset.rareWord ? "rare" : "common") word (\(data.hits(word)) hits): count + best 20 + excerpts")
        }
        if try await contender.search(Dataset.rareWord) == nil {
            for (_, label) in searches {
                results.add("5 search", label, name, .perQuery, [], note: "no full-text search API")
            }
        } else {
            let insert = try await timed { try await contender.insert(data) }
            results.add("5 search", "5 insert \(thousands) + fill the full-text index", name, .once, [insert.seconds])
            for (word, label) in searches {
                var times: [Double] = []
                for _ in 0..<searchRepetitions {
                    let search = try await timed { try await contender.search(word) }
                    results.check("search \(word)", name, search.value)
                    times.append(search.seconds)
                }
                results.add("5 search", label, name, .perQuery, times)
            }
        }
        try await contender.close()
        try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent)
    }
}
