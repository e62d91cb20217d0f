import Foundation
import GRDB

/// A piece of a search excerpt: text, and whether it is a match of the query.
public struct TextFragment: Hashable, Sendable {
    public let text: String
    public let isMatch: Bool
}

/// One model found by a full-text search, with its relevance and excerpts of its matching attributes.
public struct SearchHit<T: PersistentModel> {
    public let model: T
    /// Lower is more relevant (SQLite's bm25 formula, see `FullTextRanking`); hits come sorted by it.
    public let score: Double
    /// For each `.spotlight` attribute, by name, a short excerpt around the matches, split so that
    /// the matches can be marked (and the rest escaped) by whoever shows them.
    public let excerpts: [String: [TextFragment]]
}

/// A page of search hits and how many there are in all.
public struct SearchResults<T: PersistentModel> {
    public let hits: [SearchHit<T>]
    public let totalCount: Int
    /// False when the query holds nothing to look for: only punctuation, or only `-excluded` words,
    /// which a full-text index cannot search by themselves. There are no hits then, and a page can
    /// say why rather than report "0 results".
    public var hasTermsToFind = true
}

extension ModelContext {
    /// Searches the `@Attribute(.spotlight)` attributes of a model type with SQLite's full-text index,
    /// most relevant first. This goes beyond SwiftData, which has no full-text search on Linux.
    ///
    /// ```swift
    /// let results = try context.search(Snippet.self, for: "fetch -core \"sort descriptor\" pred*",
    ///                                   where: #Predicate { $0.isFavorite }, weights: [\.title: 10])
    /// ```
    ///
    /// The query understands words (all must match), quoted phrases, `prefix*` and `-excluded`; any
    /// other character is searched for as text, so a query never fails. `weights` raise the
    /// importance of matches in some attributes (1 by default). `relationshipKeyPathsForPrefetching`
    /// loads those relationships of every hit at once, as `FetchDescriptor`'s does, instead of one
    /// query per hit when each is first read. Saved data only: pending changes of this context are
    /// not searched, and a model it deleted is found until it saves.
    public func search<T: PersistentModel>(
        _ type: T.Type = T.self,
        for query: String,
        where predicate: Predicate<T>? = nil,
        weights: [PartialKeyPath<T>: Double] = [:],
        limit: Int = 50,
        offset: Int = 0,
        relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []
    ) throws -> SearchResults<T> {
        let layout = try store.layout(for: T.self)
        let index = try fullTextIndex(of: layout)
        let parsedQuery = FullTextQuery(query)
        guard let match = parsedQuery.matchExpression else {
            return SearchResults(hits: [], totalCount: 0, hasTermsToFind: false)
        }
        let onePhrase = parsedQuery.isOnePhrase
        let condition = try predicate.map { try PredicateTranslator.translate($0, layout: layout, store: store) }
        let weightList = layout.spotlightSlots.map { slot in
            weights.first { layout.slot(for: $0.key) === slot }?.value ?? 1
        }
        let fts = index.tableName.quotedIdentifier
        let alias = RowQuery.alias.quotedIdentifier
        let (from, arguments) = Self.fullTextHits(layout, index: index, match: match, condition: condition)

        // The rows that meet the predicate, from the key sets the page's counts keep (see
        // `matchingKeys`), and the hits among them; nil when none is kept. Each made once, when first
        // asked for: by the total or by a ranking.
        var keysFromKeptSets: KeySet??
        func keptMatchingKeys() throws -> KeySet? {
            if let made = keysFromKeptSets { return made }
            let keys = try matchingKeys(predicate, layout: layout, unlessAllNew: true)
            keysFromKeptSets = .some(keys)
            return keys
        }
        var hitsFromKeptSets: KeySet??
        func keptHits() throws -> KeySet? {
            if let made = hitsFromKeptSets { return made }
            let hits = try keptMatchingKeys().map { try $0.intersection(fullTextKeys(layout, index: index, match: match)) }
            hitsFromKeptSets = .some(hits)
            return hits
        }
        // The document lengths' parameter first (see `FullTextRanking.fetchAll`); NULL where few rows
        // are ranked. The query's statistics are computed by each query (NULL), but where it probes hits.
        let weightArguments = weightList.map { ", \($0)" }.joined()
        let rank = "\(FullTextRanking.functionName)(\(fts), ?, NULL\(weightArguments))"
        let keysSQL = "SELECT \(alias).\"_pk\", \(rank) \(from) ORDER BY 2, 1 LIMIT ? OFFSET ?"
        let (limit, offset) = (max(0, limit), max(0, offset))
        // A first search of a word, when the rows that meet the predicate are known from kept key
        // sets: one ranking of the word's hits in the index scores only those that meet it (see
        // `prefixRanked(among:)`) and reads every hit, as the word's set, for the total and the
        // counts. Walking the hits for the set and then again to rank them took 26–32 ms for a word
        // in 74,000 of 100,000 snippets.
        var prefixWithTheHits: (prefix: RankedPrefix, generation: UInt64)?
        if offset + limit <= Self.cachedSearchRanks, keptFullTextKeys(index, match: match) == nil,
           store.aggregateCache.keptValue(sql: keysSQL, arguments: arguments) as RankedPrefix? == nil,
           let meeting = try keptMatchingKeys() {
            let generation = store.aggregateCache.currentGeneration()
            var features: HitFeatures?
            _ = try fullTextKeys(layout, index: index, match: match) {
                let ranked = try self.prefixRanked(
                    among: meeting, layout: layout, index: index, match: match, onePhrase: onePhrase, rank: rank, collectingHits: true)
                prefixWithTheHits = (ranked.prefix, generation)
                features = ranked.features
                return ranked.hits
            }
            if let features { keepHitFeatures(features, index: index, layout: layout, match: match, rank: rank, madeAt: generation) }
        }
        // The joined count walked a common word's 74,000 hits (9 ms).
        let total = try fullTextCount(layout, index: index, match: match, condition: condition, keys: keptHits)
        let rankWithoutLengths = "\(FullTextRanking.functionName)(\(fts), NULL, NULL\(weightArguments))"
        let rankWithStatistics = "\(FullTextRanking.functionName)(\(fts), ?, ?\(weightArguments))"
        // The page's keys first (`keysSQL`), sorting ranks and keys only; then each row with its
        // excerpts, found by key. Sorting whole rows kept the code and notes of every match in SQLite's
        // sorter, and made an excerpt of each: a common word over long snippets cost seconds.
        //
        // Ranking a common word means scoring every document that holds it (bm25 over 74,000 of
        // 100,000 snippets takes about 0.3 s), and a search is often run again unchanged: the next
        // page, or the list beside a hit the user opened. So the ranked keys of the first pages are
        // kept, like counts, until the store changes.
        func rankedKeys(limit: Int, offset: Int) throws -> [RankedKey] {
            let window = arguments + [limit.databaseValue, offset.databaseValue]
            let lengths = documentLengths(of: index, ranking: total)
            return try store.read { db in
                try FullTextRanking.fetchAll(db, sql: keysSQL, arguments: window, lengths: lengths)
                    .map { RankedKey(key: $0[0], score: $0[1]) }
            }
        }
        let keys: [RankedKey]
        if offset + limit <= Self.cachedSearchRanks {
            /// The changed rows' hits with their scores, for a save that leaves the index alone; made
            /// only when the ranks are kept.
            func upkeep() -> CountUpkeep {
                let restrictedRanksSQL = "SELECT \(alias).\"_pk\", \(rankWithoutLengths) \(CountUpkeep.fromChangedRows(of: layout.name)) "
                    + "JOIN \(fts) ON \(fts).rowid = \(alias).\"_pk\" WHERE \(fts) MATCH ?"
                    + (condition.map { " AND \($0.sql)" } ?? "")
                return CountUpkeep(entity: layout.name, refusing: [index.tableName], count: { changedKeys, db in
                    try Row.fetchAll(
                        db.cachedStatement(sql: restrictedRanksSQL),
                        arguments: StatementArguments(columnValues: [CountUpkeep.keysArgument(changedKeys)] + arguments)
                    ).map { RankedKey(key: $0[0], score: $0[1]) }
                }, combine: { old, before, after in
                    guard let old = old as? RankedPrefix, let before = before as? [RankedKey], let after = after as? [RankedKey] else { return nil }
                    return old.following(before: before, after: after)
                })
            }
            // A search narrowed from one whose ranks are kept (a filter added to a search, or a facet
            // chosen): its hits in rank order are the kept ranks that meet it. Not kept itself, so
            // that its pages past those come from its own ranking, once.
            func narrowedFromAKeptSearch() throws -> RankedPrefix? {
                guard store.aggregateCache.keptValue(sql: keysSQL, arguments: arguments) as RankedPrefix? == nil,
                      keptFullTextKeys(index, match: match) != nil, let hits = try keptHits() else { return nil }
                let rankedAlike = "SELECT \(alias).\"_pk\", \(rank) FROM \(fts) JOIN "
                let broader: [RankedPrefix] = store.aggregateCache.keptValues { key in
                    key.arguments.first == match.databaseValue && key.sql.hasPrefix(rankedAlike)
                }
                return broader.lazy.compactMap { $0.narrowed(to: hits, covering: offset + limit) }.first
            }
            // Ranking the first few hundred costs no more than ranking the first page.
            let prefix = try narrowedFromAKeptSearch() ?? store.aggregateCache.value(sql: keysSQL, arguments: arguments, upkeep: upkeep()) {
                // Made with the word's hits above, if no save came since (which could change any score).
                if let made = prefixWithTheHits, made.generation == store.aggregateCache.currentGeneration() {
                    return made.prefix
                }
                // The word ranked before, and a save since changed the index (or the condition is new):
                // every hit's score again from the kept features.
                let meetingFromKeptSets = predicate == nil ? nil : try keptMatchingKeys()
                if predicate == nil || meetingFromKeptSets != nil,
                   let ranked = try prefixRankedByFeatures(index: index, match: match, rank: rank, meeting: meetingFromKeptSets) {
                    return ranked
                }
                if predicate != nil, let hits = try keptHits(), let meeting = try keptMatchingKeys() {
                    var ranked = try prefixRankedByProbes(hits, index: index, match: match, rank: rankWithStatistics)
                        ?? prefixRanked(among: meeting, layout: layout, index: index, match: match, onePhrase: onePhrase, rank: rank, collectingHits: false).prefix
                    ranked.meetingHits = hits
                    return ranked
                }
                if let ranked = try prefixRankedByIndexAlone(
                    layout, index: index, match: match, onePhrase: onePhrase, condition: condition, rank: rank, matchingCount: total) {
                    return ranked
                }
                let ranked = try rankedKeys(limit: Self.cachedSearchRanks, offset: 0)
                return RankedPrefix(keys: ranked, bound: ranked.count < Self.cachedSearchRanks ? nil : ranked.last)
            }
            if prefix.bound == nil || offset + limit <= prefix.keys.count {
                keys = Array(prefix.keys.dropFirst(offset).prefix(limit))
            } else {
                // Saves took hits out of the kept ranks: this window reaches past what is known.
                keys = try rankedKeys(limit: limit, offset: offset)
            }
        } else {
            keys = try rankedKeys(limit: limit, offset: offset)
        }
        let excerpts = try self.excerpts(of: keys.map(\.key), matching: match, in: index, layout: layout)
        // The page's rows in one statement, then in rank order.
        var rowsByKey: [Int64: SQLiteStore.FetchedRow] = [:]
        if !keys.isEmpty {
            for row in try store.fetchRows(layout, query: .rows(keys.map(\.key))) {
                rowsByKey[row.primaryKey] = row
            }
        }
        var hits: [SearchHit<T>] = []
        for ranked in keys {
            // A hit deleted since it was ranked has no row. One this context deleted and has not saved
            // is listed: a search reads saved data, as its total and the counts matching it do (left out
            // here alone, a page came up short of what the total promised).
            guard let row = rowsByKey[ranked.key],
                  let model = try model(T.self, from: row, layout: layout, includeDeleted: true) else { continue }
            var fragments: [String: [TextFragment]] = [:]
            for (position, slot) in layout.spotlightSlots.enumerated() {
                guard let text = excerpts[ranked.key]?[position], text.unicodeScalars.contains("\u{E000}") else { continue }
                fragments[slot.name] = Self.fragments(of: text)
            }
            hits.append(SearchHit(model: model, score: ranked.score, excerpts: fragments))
        }
        try prefetch(relationshipKeyPathsForPrefetching, for: hits.map { $0.model }, layout: layout)
        return SearchResults(hits: hits, totalCount: total)
    }

    /// The best-ranked hits that meet `condition`, found by ranking the full-text index on its own and
    /// then testing the best of its hits against the condition; nil when the condition leaves fewer
    /// than half of the index's hits, for which ranking only the rows that meet it is cheaper.
    ///
    /// Ranking the hits joined to their rows looks up the row of every hit to test the condition before
    /// it is scored: for a word in 74,000 of 100,000 snippets, 148 ms, against 61 ms for ranking the
    /// index alone (both warm, in the sqlite3 shell). The index's hits in rank order, less those that
    /// fail the condition, are the condition's hits in rank order, complete up to the last one read.
    /// So enough of them are read to hold `cachedSearchRanks` that meet it (at the rate the hits meet
    /// it overall, and a quarter more), and the last one read bounds the prefix: a window past what
    /// met it ranks again with the rows joined, as any window past the kept ranks does.
    private func prefixRankedByIndexAlone(
        _ layout: EntityLayout, index: FullTextIndex, match: String, onePhrase: Bool, condition: SQLFragment?, rank: String,
        matchingCount: Int
    ) throws -> RankedPrefix? {
        guard matchingCount > 0 else { return nil }
        let fts = index.tableName.quotedIdentifier
        let alias = RowQuery.alias.quotedIdentifier
        // Kept until a save rewrites a full-text entry, as the index is the only table it reads. The
        // word's hits are often kept as a set already (a search's total reads them): counting them
        // again walked the word's entries in the index (3 ms for 74,000 hits).
        let indexCountSQL = "SELECT COUNT(*) FROM \(fts) WHERE \(fts) MATCH ?"
        let indexHits = try store.aggregateCache.value(sql: indexCountSQL, arguments: [match.databaseValue]) {
            if let keys = keptFullTextKeys(index, match: match), !keys.unrepresentable { return keys.count }
            return try store.read { db in try Int.fetchOne(db.cachedStatement(sql: indexCountSQL), arguments: [match]) ?? 0 }
        }
        guard matchingCount * 2 >= indexHits else { return nil }
        let wanted = Self.cachedSearchRanks * indexHits / matchingCount * 5 / 4 + 1
        let matchAlone = Self.matchAlone(index)
        let candidatesSQL = FullTextRanking.bestSelect(rank: rank, fromAndWhere: matchAlone)
        let lengths = documentLengths(of: index, ranking: indexHits)
        let meetingSQL = "SELECT \(alias).\"_pk\" FROM \(layout.name.quotedIdentifier) AS \(alias) "
            + "WHERE \(alias).\"_pk\" IN (SELECT value FROM json_each(?))" + (condition.map { " AND \($0.sql)" } ?? "")
        return try store.read { db in
            let candidates = try FullTextRanking.best(
                wanted, db, sql: candidatesSQL, walkingSQL: onePhrase ? FullTextRanking.walkSelect(rank: rank, fromAndWhere: matchAlone) : nil,
                arguments: [match.databaseValue], lengths: lengths,
                scoringOnly: nil, collectingHits: false, filteredInWhere: false
            ).best.map { RankedKey(key: $0.key, score: $0.score) }
            let meeting = try Set(Int64.fetchAll(
                db.cachedStatement(sql: meetingSQL),
                arguments: StatementArguments(columnValues: [SQLiteStore.jsonArray(candidates.map(\.key)).databaseValue] + (condition?.arguments ?? []))))
            // Fewer than asked for: every hit of the index was read, and the list is complete.
            return RankedPrefix(keys: candidates.filter { meeting.contains($0.key) }, bound: candidates.count < wanted ? nil : candidates.last)
        }
    }

    /// The best-ranked hits among `meeting`, the keys of the rows that meet a search's condition
    /// (known from kept key sets, see `matchingKeys`), found by ranking the full-text index on its
    /// own, with the hits `meeting` does not hold left out (before they are scored, when they are
    /// most). With `collectingHits`, also every hit's key: the word's hits.
    ///
    /// Each hit is read once, from the index, and only those that meet the condition are scored:
    /// for `parsing` (74,000 of 100,000 snippets) with a language that 2,300 of them have, where
    /// ranking the hits joined to their rows looked up each hit's row to test it.
    ///
    /// With `collectingHits`, the ranking also reads every hit's features (`HitFeatures`, for a
    /// match of one phrase, when most rows meet the condition and every hit reaches the ranking
    /// function), and keeps them for the rankings of the word after it.
    private func prefixRanked(
        among meeting: KeySet, layout: EntityLayout, index: FullTextIndex, match: String, onePhrase: Bool, rank: String,
        collectingHits: Bool
    ) throws -> (prefix: RankedPrefix, hits: KeySet, features: HitFeatures?) {
        let limit = Self.cachedSearchRanks
        let lengths = documentLengths(of: index, ranking: meeting.count)
        // Left out in the WHERE when most rows are, unless the match is of one phrase, whose walk
        // leaves them out itself (see `FullTextRanking.best`). The rows are the kept lengths'
        // documents when there are some: only the statement's shape depends on it.
        let rows = try lengths?.documentCount ?? store.count(layout, condition: nil)
        let filteredInWhere = meeting.count * 2 < rows
        let matchAlone = Self.matchAlone(index)
        let sql = FullTextRanking.bestSelect(
            rank: rank, fromAndWhere: matchAlone + (filteredInWhere ? " AND \(FullTextRanking.hitFilter)" : ""))
        let (best, hits, features) = try store.read { db in
            try FullTextRanking.best(
                limit, db, sql: sql, walkingSQL: onePhrase ? FullTextRanking.walkSelect(rank: rank, fromAndWhere: matchAlone) : nil,
                arguments: [match.databaseValue], lengths: lengths,
                scoringOnly: meeting, collectingHits: collectingHits, filteredInWhere: filteredInWhere,
                collectingFeatures: collectingHits)
        }
        let ranked = best.map { RankedKey(key: $0.key, score: $0.score) }
        let meetingHits = collectingHits ? meeting.intersection(hits) : nil
        return (RankedPrefix(keys: ranked, bound: ranked.count < limit ? nil : ranked.last, meetingHits: meetingHits), hits, features)
    }

    /// The cache key of a word's kept `HitFeatures` for a ranking `rank` (weights included): the
    /// statement that reads them, restricted to a save's rows by their keys in its third parameter.
    private func hitFeaturesSQL(_ index: FullTextIndex, rank: String) -> (key: String, restricted: String) {
        let fts = index.tableName.quotedIdentifier
        let matchAlone = Self.matchAlone(index)
        return (FullTextRanking.bestSelect(rank: rank, fromAndWhere: matchAlone),
                FullTextRanking.bestSelect(
                    rank: rank, fromAndWhere: matchAlone + " AND \(fts).rowid IN (SELECT value FROM json_each(?3))"))
    }

    /// The FROM and WHERE of a ranking of the index alone, its match the statement's second parameter
    /// (the ranking's inputs are the first).
    private static func matchAlone(_ index: FullTextIndex) -> String {
        let fts = index.tableName.quotedIdentifier
        return "FROM \(fts) WHERE \(fts) MATCH ?2"
    }

    /// Keeps the features a ranking read, brought up to date through saves (the hits among a save's
    /// rows read again, by key, in its transaction). Of common words only, and of the last few: the
    /// features of a word in 74,000 snippets take 1.5 MB.
    private func keepHitFeatures(_ features: HitFeatures, index: FullTextIndex, layout: EntityLayout, match: String, rank: String, madeAt generation: UInt64) {
        guard features.count >= Self.hitsWorthReadingLengths else { return }
        let sql = hitFeaturesSQL(index, rank: rank)
        let upkeep = CountUpkeep(entity: layout.name, count: { keys, db in
            try FullTextRanking.features(db, sql: sql.restricted, arguments: [match.databaseValue, CountUpkeep.keysArgument(keys)])
                ?? HitFeatures()
        }, combine: { old, before, after in
            guard let old = old as? HitFeatures, let before = before as? HitFeatures, let after = after as? HitFeatures else { return nil }
            return old.replacing(before.keys, with: after)
        })
        // Not kept when a save came since the ranking read them.
        let kept = try? store.aggregateCache.value(sql: sql.key, arguments: [match.databaseValue], upkeep: upkeep) { () throws -> HitFeatures in
            guard store.aggregateCache.currentGeneration() == generation else { throw StaleFeatures() }
            return features
        }
        if kept != nil { store.keptHitFeatures.note(AggregateCacheKey(sql: sql.key, arguments: [match.databaseValue]), in: store.aggregateCache) }
    }

    private struct StaleFeatures: Error {}

    /// The best-ranked hits among `meeting` (every hit for nil), from the word's kept features: no
    /// walk of its entries in the index, only its average length and size read. Nil when none are kept.
    private func prefixRankedByFeatures(
        index: FullTextIndex, match: String, rank: String, meeting: KeySet?
    ) throws -> RankedPrefix? {
        guard let features: HitFeatures = store.aggregateCache.keptValue(sql: hitFeaturesSQL(index, rank: rank).key, arguments: [match.databaseValue]),
              let collection = try store.read({ db in try FullTextRanking.collection(db, index: index) }) else { return nil }
        let limit = Self.cachedSearchRanks
        let ranked = features.best(limit, among: meeting, averageLength: collection.averageLength, rows: collection.rows)
            .map { RankedKey(key: $0.key, score: $0.score) }
        var hits = KeySet(features.hits.lazy.map(\.key))
        if let meeting { hits = hits.intersection(meeting) }
        return RankedPrefix(keys: ranked, bound: ranked.count < limit ? nil : ranked.last, meetingHits: hits)
    }

    /// Reads ahead what ranking a search of `type` needs, the length of every document in its
    /// full-text index, and keeps it through saves as counts are kept. A first search for a common
    /// word then ranks its hits without looking each one's length up in the index: for a word in
    /// 74,000 of 100,000 snippets, about a third of the time. Without it, a search that ranks many
    /// hits has them read in the background, for the searches after it; this reads them now, at a
    /// moment of the caller's choosing (a library opening). Not in SwiftData, which has no full-text
    /// search on Linux.
    public func prepareSearch<T: PersistentModel>(of type: T.Type) throws {
        let layout = try store.layout(for: T.self)
        _ = try store.documentLengths(of: fullTextIndex(of: layout))
    }

    /// The full-text index of an entity; an error for one with nothing to search.
    private func fullTextIndex(of layout: EntityLayout) throws -> FullTextIndex {
        guard let index = store.fullTextIndexes[layout.name] else {
            throw SwiftDataError(
                .unsupportedPredicate, "\(layout.name) has no attribute marked @Attribute(.spotlight) to search",
                entity: layout.name)
        }
        return index
    }

    /// The lengths of the documents of `index` to rank `hits` hits with: the kept ones, or nil to
    /// let FTS5 look each up. When there are none and the hits are many, they are read in the
    /// background for the rankings after this one (as the pairs of a count's grouping are, see
    /// `SQLiteStore.keptGroupedKeys`): reading them on the request's path cost more than it saved a
    /// first search (27,612 hits: 47 ms against 36 in the store benchmark).
    ///
    /// Kept lengths are those of the newest snapshot this store knows, as kept counts are: a ranking
    /// that reads a snapshot a save of this process committed a moment before the cache learnt of it
    /// scores that save's few documents by their previous lengths.
    private func documentLengths(of index: FullTextIndex, ranking hits: Int) -> DocumentLengths? {
        let sql = index.documentLengthsSQL
        if let kept: DocumentLengths? = store.aggregateCache.keptValue(sql: sql, arguments: []) { return kept }
        if hits >= Self.hitsWorthReadingLengths {
            store.backgroundPreparation.run(key: sql) { [store] in
                // A failed read (the store closed meanwhile) leaves them missing: FTS5 looks lengths up.
                _ = try? store.documentLengths(of: index, inBackground: true)
            }
        }
        return nil
    }

    /// Below this many hits a ranking's lookups of their lengths cost under 3 ms, and the lengths
    /// are not read for it.
    static let hitsWorthReadingLengths = 4_096

    /// The best-ranked of `hits`, the hits that meet a search's condition (known from kept key sets,
    /// see `matchingKeys`), found by ranking each of them by key; nil unless they are few.
    ///
    /// Ranking the hits joined to their rows tests every hit of the word against the condition before
    /// it is scored: for `caching` (74,000 snippets) with a tag and favourites, 370 hits, a 42–44 ms
    /// first visit. The kept sets say which hits meet it; FTS5 finds each by its rowid (a query of its
    /// own per key, so the query's statistics are computed once, beforehand, and given to each), and
    /// they are sorted here as `ORDER BY score, key` sorts them.
    private func prefixRankedByProbes(_ hits: KeySet, index: FullTextIndex, match: String, rank: String) throws -> RankedPrefix? {
        guard !hits.unrepresentable, hits.count <= Self.probedHitsLimit else { return nil }
        guard hits.count > 0 else { return RankedPrefix(keys: [], bound: nil) }
        let fts = index.tableName.quotedIdentifier
        let statisticsSQL = "SELECT \(FullTextRanking.statisticsFunctionName)(\(fts)) FROM \(fts) WHERE \(fts) MATCH ? LIMIT 1"
        let probesSQL = "SELECT rowid, \(rank) FROM \(fts) WHERE \(fts) MATCH ? AND rowid IN (SELECT value FROM json_each(?))"
        let lengths = documentLengths(of: index, ranking: hits.count)
        let ranked = try store.read { db -> [RankedKey] in
            guard let statistics = try DatabaseValue.fetchOne(db.cachedStatement(sql: statisticsSQL), arguments: [match]) else { return [] }
            return try FullTextRanking.fetchAll(
                db, sql: probesSQL, arguments: [statistics, match.databaseValue, SQLiteStore.jsonArray(hits.sortedKeys).databaseValue],
                lengths: lengths
            ).map { RankedKey(key: $0[0], score: $0[1]) }
        }.sorted { $0.ranks(before: $1) }
        let kept = Array(ranked.prefix(Self.cachedSearchRanks))
        return RankedPrefix(keys: kept, bound: kept.count < ranked.count ? kept.last : nil)
    }

    /// Up to this many hits are ranked by key (about 20 µs each, against 17 ms for ranking every hit
    /// of a word in 74,000 snippets).
    static let probedHitsLimit = 1_024

    /// The marked excerpts of each attribute of the hits `keys`, by key.
    ///
    /// An excerpt is made from the hit's text, found again by FTS5 (`FullTextExcerpt`): for a common
    /// word, whose hits are often long code, that was most of a page of results. An excerpt
    /// depends only on the query and the indexed text, so a page's excerpts are kept like its ranking,
    /// and dropped when a save rewrites any full-text entry (the index's table is what their SQL names).
    private func excerpts(
        of keys: [Int64], matching match: String, in index: FullTextIndex, layout: EntityLayout
    ) throws -> [Int64: [String?]] {
        guard !keys.isEmpty else { return [:] }
        let fts = index.tableName.quotedIdentifier
        let columns = layout.spotlightSlots.indices.map { column in
            "\(FullTextExcerpt.functionName)(\(fts), \(column), 24)"
        }
        // One hit at a time: FTS5 finds a row of a MATCH by its rowid only when that is an equality.
        let sql = "SELECT \(columns.joined(separator: ", ")) FROM \(fts) WHERE \(fts) MATCH ? AND \(fts).rowid = ?"
        return try store.aggregateCache.value(sql: sql, arguments: [match.databaseValue] + keys.map(\.databaseValue)) {
            try store.read { db in
                let statement = try db.cachedStatement(sql: sql)
                var byKey: [Int64: [String?]] = [:]
                for key in keys {
                    if let row = try Row.fetchOne(statement, arguments: [match, key]) {
                        byKey[key] = (0..<columns.count).map { row[$0] as String? }
                    }
                }
                return byKey
            }
        }
    }

    /// A search hit's key and its bm25 score.
    struct RankedKey {
        let key: Int64
        let score: Double

        /// The order of `ORDER BY score, key`: best (lowest) score first, ties by key.
        func ranks(before other: RankedKey) -> Bool {
            (score, key) < (other.score, other.key)
        }
    }

    /// The first ranks of a search: exactly the hits that rank up to `bound`, in order; every hit
    /// when `bound` is nil.
    struct RankedPrefix {
        var keys: [RankedKey]
        /// The last of the ranks computed, or nil when they were all the hits there were.
        let bound: RankedKey?
        /// Every hit that met the search's condition (not only those ranked), when it was known; kept
        /// up to date through saves with the ranks.
        var meetingHits: KeySet?

        init(keys: [RankedKey], bound: RankedKey?, meetingHits: KeySet? = nil) {
            self.keys = keys
            self.bound = bound
            self.meetingHits = meetingHits
        }

        /// The prefix after a save that left the full-text index (so every other score) alone:
        /// `before` and `after` are the hits among the changed rows. Taking hits out of a top list
        /// leaves the top of what remains; a hit put back belongs to it only up to `bound`, past
        /// which other hits may rank that were never read.
        func following(before: [RankedKey], after: [RankedKey]) -> RankedPrefix {
            let left = Set(before.map(\.key))
            var keys = self.keys.filter { !left.contains($0.key) }
            for hit in after where bound.map({ !$0.ranks(before: hit) }) ?? true {
                let place = keys.firstIndex { hit.ranks(before: $0) } ?? keys.endIndex
                keys.insert(hit, at: place)
            }
            return RankedPrefix(
                keys: keys, bound: bound, meetingHits: meetingHits?.replacing(before.map(\.key), with: after.map(\.key)))
        }

        /// The prefix of a narrower search of the same words, ranked alike, whose hits are `hits`: nil
        /// unless every one of them met this search's condition, and the first `window` are known.
        ///
        /// A score depends on the index alone, not on the condition: a narrower search's hits rank
        /// among themselves as they rank here, and each that ranks up to `bound` is one of the keys
        /// here. So those that it holds are exactly its hits up to `bound`, in order.
        func narrowed(to hits: KeySet, covering window: Int) -> RankedPrefix? {
            guard let meetingHits, !meetingHits.unrepresentable, !hits.unrepresentable,
                  hits.subtracting(meetingHits).count == 0 else { return nil }
            let narrowed = keys.filter { hits.contains($0.key) }
            guard bound == nil || window <= narrowed.count else { return nil }
            return RankedPrefix(keys: narrowed, bound: bound, meetingHits: hits)
        }
    }

    /// How many of a search's best-ranked keys are kept until the store changes. Enough for the first
    /// pages of a search narrowed from it by one choice of a facet: a language is 1 in 30 of the
    /// demo library's snippets, and 500 ranks of `parsing` held 21 in Swift, short of a page of 25
    /// (1,000 held 42). Keeping them costs little more: the ranking keeps its best in a heap.
    static let cachedSearchRanks = 1_000

    /// Splits FTS5's marked excerpt (matches between U+E000 and U+E001) into fragments.
    static func fragments(of marked: String) -> [TextFragment] {
        var fragments: [TextFragment] = []
        var current = ""
        var inMatch = false
        for scalar in marked.unicodeScalars {
            if scalar == "\u{E000}" || scalar == "\u{E001}" {
                if !current.isEmpty { fragments.append(TextFragment(text: current, isMatch: inMatch)) }
                current = ""
                inMatch = scalar == "\u{E000}"
            } else {
                current.unicodeScalars.append(scalar)
            }
        }
        if !current.isEmpty { fragments.append(TextFragment(text: current, isMatch: inMatch)) }
        return fragments
    }
}

extension ModelContext {
    /// The FROM and WHERE clauses of the rows that match a full-text query and a condition, the index
    /// joined to the rows by key, with their arguments: a search ranks and counts its hits over them.
    static func fullTextHits(
        _ layout: EntityLayout, index: FullTextIndex, match: String, condition: SQLFragment?
    ) -> (sql: String, arguments: [DatabaseValue]) {
        let fts = index.tableName.quotedIdentifier
        let alias = RowQuery.alias.quotedIdentifier
        let sql = """
            FROM \(fts) JOIN \(layout.name.quotedIdentifier) AS \(alias) ON \(alias)."_pk" = \(fts).rowid
            WHERE \(fts) MATCH ?\(condition.map { " AND \($0.sql)" } ?? "")
            """
        return (sql, [match.databaseValue] + (condition?.arguments ?? []))
    }

    /// How many rows match a full-text query and a condition: a search's total, and the matching
    /// count that counts by complement need (`countsByComplement`), which share it through the cache.
    /// Counting them with the match as a set (`_pk IN (SELECT rowid …)`) took 27 ms for a word in
    /// 74,000 of 100,000 snippets, joining the index to the rows 19 ms; a first search for a common
    /// word counted both ways.
    /// `keys`, when given, counts the hits another way than SQL when the count is not kept (nil: it
    /// cannot, SQL counts them).
    func fullTextCount(
        _ layout: EntityLayout, index: FullTextIndex, match: String, condition: SQLFragment?, keys: (() throws -> KeySet?)? = nil
    ) throws -> Int {
        let alias = RowQuery.alias.quotedIdentifier
        let (from, arguments) = Self.fullTextHits(layout, index: index, match: match, condition: condition)
        let countSQL = "SELECT COUNT(*) \(from)"
        // The same count over a save's rows, each matched by rowid (see `CountUpkeep`).
        return try store.aggregateCache.value(sql: countSQL, arguments: arguments, upkeep: CountUpkeep.total(
            entity: layout.name,
            restrictedSQL: "SELECT COUNT(*) \(CountUpkeep.fromChangedRows(of: layout.name)) WHERE \(index.rowMatchCondition(alias: alias))"
                + (condition.map { " AND \($0.sql)" } ?? ""),
            arguments: arguments)) {
            if let keys = try keys?() { return keys.count }
            return try store.read { db in
                try Int.fetchOne(db.cachedStatement(sql: countSQL), arguments: StatementArguments(columnValues: arguments)) ?? 0
            }
        }
    }
}
