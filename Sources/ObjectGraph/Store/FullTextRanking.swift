import Foundation
import GRDB
import GRDBSQLite

/// Ranks full-text hits with FTS5's bm25 formula, giving the scores of SQLite's own `bm25()`, but
/// able to take each document's length from memory (`DocumentLengths`) instead of the index.
///
/// bm25 weighs a hit by its document's length in tokens, which FTS5 reads from the index's
/// `_docsize` table: a B-tree lookup per hit. Ranking a word in 74,000 of 100,000 snippets took
/// 63 ms with `bm25()`, about two thirds of it those lookups; with the lengths in an array it took
/// 19–23 ms (measured with a C prototype of this function against SQLite 3.40). Without lengths
/// the function reads them from the index as `bm25()` does, so the scores are the same either way.
///
/// Called as `objectgraph_bm25(<index>, <inputs>, <statistics>, <weight of column 0>, …)`, where
/// `<inputs>` is a pointer bound by `fetchAll` (the lengths, and where to collect the keys of the
/// hits it scores), or NULL, and `<statistics>` what `objectgraph_bm25_statistics(<index>)`
/// returned for the same match, or NULL to compute them.
///
/// The statistics are the collection's average length and each phrase's document count, which
/// FTS5 counts by walking the phrase's entries once per query: a query that probes a few hits by
/// rowid (`rowid IN (…)`) is a query per hit to FTS5, and counting a common word again for each of
/// 370 hits took 1.0–1.8 s, where probing them with the statistics given takes under 10 ms.
enum FullTextRanking {
    static let functionName = "objectgraph_bm25"
    static let statisticsFunctionName = "objectgraph_bm25_statistics"
    /// `objectgraph_bm25_collection(<index>)`: the index's average document length and its number of
    /// documents, as a blob of two doubles; the same on every row, and on a scan without a match.
    static let collectionFunctionName = "objectgraph_bm25_collection"
    /// The type of the pointer argument, checked by SQLite when the function reads it.
    private static let pointerType: StaticString = "objectgraph_ranking_inputs"

    // bm25's constants, as FTS5 fixes them.
    private static let k1 = 1.2
    private static let b = 0.75

    /// Adds the function to a connection's FTS5. A connection without FTS5 (a SQLite built without
    /// it) gets no function: its searches fail with SQLite's "no such function", as they would
    /// fail on the full-text table itself.
    static func register(in db: Database) {
        _ = sqlite3_create_function_v2(db.sqliteConnection, hitFilterName, 2, SQLITE_UTF8, nil, hitFilterFunction, nil, nil, nil)
        guard let api = fts5API(db.sqliteConnection) else { return }
        _ = api.pointee.xCreateFunction?(UnsafeMutablePointer(mutating: api), functionName, nil, rank, nil)
        _ = api.pointee.xCreateFunction?(UnsafeMutablePointer(mutating: api), statisticsFunctionName, nil, statistics, nil)
        _ = api.pointee.xCreateFunction?(UnsafeMutablePointer(mutating: api), collectionFunctionName, nil, collection, nil)
        FullTextExcerpt.register(api)
    }

    /// The connection's `fts5_api`, found the way FTS5 documents: `SELECT fts5(?)` with a pointer bound.
    private static func fts5API(_ connection: OpaquePointer?) -> UnsafePointer<fts5_api>? {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, "SELECT fts5(?1)", -1, &statement, nil) == SQLITE_OK else { return nil }
        defer { sqlite3_finalize(statement) }
        var api: UnsafePointer<fts5_api>?
        let type: StaticString = "fts5_api_ptr"
        withUnsafeMutablePointer(to: &api) { slot in
            _ = sqlite3_bind_pointer(statement, 1, slot, UnsafeRawPointer(type.utf8Start).assumingMemoryBound(to: CChar.self), nil)
            _ = sqlite3_step(statement)
        }
        return api
    }

    /// Runs a ranking statement whose first parameter is the function's `<inputs>` argument, with
    /// `arguments` for the others, and returns its rows. `lengths` should be those of the statement's
    /// snapshot (a document whose length there differs is scored by the one given); nil reads each
    /// from the index.
    static func fetchAll(
        _ db: Database, sql: String, arguments: [DatabaseValue], lengths: DocumentLengths?
    ) throws -> [Row] {
        try fetchAll(db, sql: sql, arguments: arguments, inputs: lengths.map { RankingInputs(lengths: $0) })
    }

    /// The `count` best-ranked hits of a full-text query, best first (lowest score, then lowest key,
    /// as `ORDER BY score, key` sorts them), found by the ranking function itself as it scores each
    /// hit, where the statement hands it every hit: `sql` is made by `bestSelect`. Hits whose key
    /// `scoringOnly` does not hold (all are ranked for nil) are left out. With `collectingHits` it
    /// also returns the keys of every hit of the match.
    ///
    /// Returning each hit as a row for SQLite's sorter to keep the best of (`ORDER BY 2, 1 LIMIT n`)
    /// made a record of every hit and sorted it in: for `production`, in 33,000 of 100,000 snippets,
    /// that was about a quarter of the ranking's time. A heap of the best `count` takes a comparison
    /// for most hits, and the statement returns one row.
    ///
    /// With `filteredInWhere` the statement's `WHERE` holds `hitFilter`, which leaves the other hits
    /// out, and collects every hit, before the ranking function sees them. Without it the ranking
    /// function collects the hits and skips the others itself. The filter is a function call per hit,
    /// 2 ms for 74,000; skipping a hit in the ranking function costs the function's call, which
    /// reads the hit's position list first: for `parsing` with 3% of the rows to rank, 7.6 ms with
    /// the filter against 11.1 without; with 94%, about 2 ms more with it (C prototype and app).
    ///
    /// A match of one phrase (one word, one quoted phrase or one prefix, as `FullTextQuery` writes
    /// them) whose hits are collected is scored without its inverse document frequency, which takes
    /// FTS5 a walk of the phrase's entries of its own (3–4 ms of the 19 for `parsing`): it is the
    /// same factor in every score, so it changes no order, and the number of hits it needs is the
    /// number collected. The scores returned are multiplied back: the very numbers `bm25()` computes,
    /// as its sum has the one term.
    ///
    /// With `collectingFeatures` (and the hits not filtered in the WHERE) it also returns every hit's
    /// `HitFeatures`, when the match is of one phrase; nil otherwise.
    ///
    /// `walkingSQL`, made by `walkSelect` from the same ranking and a FROM and WHERE that hold the
    /// match alone, lets a match of one phrase be ranked in one call of the function, which walks
    /// the phrase's hits itself (see `walkSelect`); a match of several phrases then runs `sql`.
    /// The walk leaves out the hits `scoringOnly` does not hold itself, with `filteredInWhere` or
    /// not: FTS5 reads each hit's entry either way, and the walk's test of its key is a set look-up
    /// where `sql`'s is a row of SQLite's virtual machine and a function call. For `caching` (in
    /// 74,000 of 100,000 snippets) with a tag and favourites only, the server's CPU time for a first
    /// visit went from 13.2 to 11.1 ms; for `parsing` in Swift, from 12.1 to 10.2.
    static func best(
        _ count: Int, _ db: Database, sql: String, walkingSQL: String? = nil, arguments: [DatabaseValue], lengths: DocumentLengths?,
        scoringOnly: KeySet?, collectingHits: Bool, filteredInWhere: Bool, collectingFeatures: Bool = false
    ) throws -> (best: [(key: Int64, score: Double)], hits: KeySet, features: HitFeatures?) {
        func makeInputs(walking: Bool) -> RankingInputs {
            // The walk's statement has no filter in its WHERE: the function collects and leaves out hits.
            RankingInputs(
                lengths: lengths, scoringOnly: scoringOnly, collectsHits: collectingHits, filteredInWhere: filteredInWhere && !walking,
                keepingBest: max(0, count), collectsFeatures: collectingFeatures && !filteredInWhere, walksEveryHit: walking)
        }
        var inputs = makeInputs(walking: walkingSQL != nil)
        if inputs.walksEveryHit, let walkingSQL {
            let rows = try fetchAll(db, sql: walkingSQL, arguments: arguments, inputs: inputs)
            // No row: the match has no hit. A row the function did not walk from: several phrases.
            if !rows.isEmpty && !inputs.walked {
                inputs = makeInputs(walking: false)
                _ = try fetchAll(db, sql: sql, arguments: arguments, inputs: inputs)
            }
        } else {
            _ = try fetchAll(db, sql: sql, arguments: arguments, inputs: inputs)
        }
        let hitCount = inputs.walked ? inputs.walkedHitCount : inputs.hits.count
        let factor = inputs.rowsWhenFrequencyLeftOut.map { inverseFrequency(rows: $0, hits: Int64(hitCount)) } ?? 1
        let best = inputs.best?.sorted(scaledBy: factor).map { (key: $0.key, score: $0.score) } ?? []
        return (best, inputs.hits, inputs.features)
    }

    /// The `HitFeatures` of the hits a statement made by `bestSelect` hands the ranking function; nil
    /// for a match of several phrases.
    static func features(_ db: Database, sql: String, arguments: [DatabaseValue]) throws -> HitFeatures? {
        let inputs = RankingInputs(lengths: nil, keepingBest: 0, collectsFeatures: true)
        _ = try fetchAll(db, sql: sql, arguments: arguments, inputs: inputs)
        return inputs.features
    }

    /// The average document length and the number of documents of the index a statement's
    /// `collectionFunctionName` reads, nil when it returns no row (an empty index).
    static func collection(_ db: Database, index: FullTextIndex) throws -> (averageLength: Double, rows: Int64)? {
        let fts = index.tableName.quotedIdentifier
        guard let blob = try Data.fetchOne(db.cachedStatement(sql: "SELECT \(collectionFunctionName)(\(fts)) FROM \(fts) LIMIT 1")),
              blob.count == 2 * MemoryLayout<Double>.size else { return nil }
        let values = blob.withUnsafeBytes { Array($0.bindMemory(to: Double.self)) }
        return (values[0], Int64(values[1]))
    }

    /// The statement `best` runs for a query whose FROM and WHERE are `fromAndWhere`: every hit that
    /// passes its conditions passes through `rank` (the ranking function's call), last, and one row
    /// comes back. (FTS5 refuses its functions inside an aggregate's arguments.) The ranking's inputs
    /// are still the first parameter, `?1`: `fromAndWhere` numbers its own from `?2`.
    static func bestSelect(rank: String, fromAndWhere: String) -> String {
        "SELECT count(*) \(fromAndWhere) AND \(inputsFirst(rank)) IS NOT NULL"
    }

    /// The statement `best` runs, as `walkingSQL`, for a match of one phrase whose FROM and WHERE are
    /// `fromAndWhere`, the match alone: the function is called for the first hit only, and walks
    /// every hit of the phrase from there with FTS5's `xQueryPhrase`, scoring each as it would be
    /// scored row by row. A statement that hands the function each hit runs SQLite's virtual machine
    /// and a function call for every hit: in a C prototype of both, a word in 33,000 of 100,000
    /// snippets took 2.25 ms that way against 1.39 ms walked, and one in 74,000 9.2 against 7.1 ms.
    /// For a match of several phrases (a phrase's hits are then not the match's) the function walks
    /// nothing and `best` runs the statement that hands it each hit.
    static func walkSelect(rank: String, fromAndWhere: String) -> String {
        "SELECT \(inputsFirst(rank)) \(fromAndWhere) LIMIT 1"
    }

    /// `rank` with its first parameter numbered `?1`: the ranking's inputs.
    private static func inputsFirst(_ rank: String) -> String {
        rank.range(of: "?").map { rank.replacingCharacters(in: $0, with: "?1") } ?? rank
    }

    /// The condition a statement run by `best(_:_:sql:arguments:lengths:scoringOnly:collectingHits:filteredInWhere:)`
    /// puts in its `WHERE`, next to the match, to filter there: the ranking's inputs are its first parameter.
    static let hitFilter = "\(hitFilterName)(rowid, ?1)"
    private static let hitFilterName = "objectgraph_ranked_hit"

    /// `objectgraph_ranked_hit(<key>, <inputs>)`: collects the key if asked, and is 1 for a key to
    /// rank, 0 for one to leave out. Not deterministic, so that SQLite calls it for every row.
    private static let hitFilterFunction: @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<OpaquePointer?>?) -> Void = {
        context, argumentCount, arguments in
        guard argumentCount == 2, let arguments,
              let pointer = sqlite3_value_pointer(arguments[1], UnsafeRawPointer(pointerType.utf8Start).assumingMemoryBound(to: CChar.self))
        else {
            sqlite3_result_int(context, 1)
            return
        }
        let key = sqlite3_value_int64(arguments[0])
        // The inputs outlive the statement (see `fetchAll`): read without retaining them, once per hit.
        Unmanaged<RankingInputs>.fromOpaque(pointer)._withUnsafeGuaranteedRef { inputs in
            if inputs.collectsHits { inputs.collect(key) }
            sqlite3_result_int(context, inputs.leavesOut(key) ? 0 : 1)
        }
    }

    /// bm25's inverse document frequency of a phrase in `hits` of `rows` rows. A phrase in more than
    /// half the rows would count against a hit: bm25 gives it a tiny weight instead.
    private static func inverseFrequency(rows: Int64, hits: Int64) -> Double {
        let inverse = log((Double(rows) - Double(hits) + 0.5) / (Double(hits) + 0.5))
        return inverse <= 0 ? 1e-6 : inverse
    }

    /// Runs the statement with `inputs` bound as its first parameter; with none, that parameter is NULL.
    private static func fetchAll(_ db: Database, sql: String, arguments: [DatabaseValue], inputs: RankingInputs?) throws -> [Row] {
        let statement = try db.cachedStatement(sql: sql)
        try statement.setArguments(StatementArguments(columnValues: [.null] + arguments))
        guard let inputs else { return try Row.fetchAll(statement) }
        return try withExtendedLifetime(inputs) {
            let bound = sqlite3_bind_pointer(
                statement.sqliteStatement, 1, Unmanaged.passUnretained(inputs).toOpaque(),
                UnsafeRawPointer(pointerType.utf8Start).assumingMemoryBound(to: CChar.self), nil)
            guard bound == SQLITE_OK else { throw DatabaseError(resultCode: ResultCode(rawValue: bound), message: "cannot bind the ranking's inputs") }
            // The statement is cached: it must not keep a pointer to inputs that may be freed.
            defer {
                sqlite3_reset(statement.sqliteStatement)
                sqlite3_clear_bindings(statement.sqliteStatement)
            }
            return try Row.fetchAll(statement)
        }
    }

    /// What a ranking statement hands its functions: the lengths to score by, the keys of the hits
    /// to rank (nil for all), and the keys of the hits seen so far when they are collected. One
    /// statement's, on one thread.
    private final class RankingInputs {
        let lengths: DocumentLengths?
        let scoringOnly: KeySet?
        let collectsHits: Bool
        /// Whether the statement's `hitFilter` collects and leaves out hits, not the ranking function.
        let filteredInWhere: Bool
        /// Set by the function when it leaves the inverse document frequency out of its scores (a
        /// match of one phrase whose hits are collected): the number of rows in the index.
        private(set) var rowsWhenFrequencyLeftOut: Int64?

        /// What the functions change as they see hits. Kept out of line: they run once per hit (74,000
        /// times for a common word), and every change of a class's stored property is checked at run
        /// time for an overlapping access, which took a sixth of the ranking function's time.
        private let progress: UnsafeMutablePointer<Progress>

        struct Progress {
            var hits = KeySet()
            var features = HitFeatures()
            var severalPhrases = false
            /// Whether the function walked the phrase's hits itself (see `walksEveryHit`), and how many.
            var walked = false
            var walkedHitCount = 0
            /// The best hits so far, when the function keeps them itself (see `best`) and returns
            /// NULL instead of each score.
            var best: BestRanks?
        }

        /// Whether the ranking function keeps every hit's `HitFeatures` (one phrase only).
        let collectsFeatures: Bool
        /// Whether the statement is `walkSelect`'s: the function walks the hits of a match of one
        /// phrase itself, at its first call.
        let walksEveryHit: Bool

        init(
            lengths: DocumentLengths?, scoringOnly: KeySet? = nil, collectsHits: Bool = false, filteredInWhere: Bool = false,
            keepingBest: Int? = nil, collectsFeatures: Bool = false, walksEveryHit: Bool = false
        ) {
            self.lengths = lengths
            self.scoringOnly = scoringOnly
            self.collectsHits = collectsHits
            self.filteredInWhere = filteredInWhere
            self.collectsFeatures = collectsFeatures
            self.walksEveryHit = walksEveryHit
            keepsBest = keepingBest != nil
            progress = .allocate(capacity: 1)
            progress.initialize(to: Progress(best: keepingBest.map { BestRanks(capacity: $0) }))
        }

        /// The hits' features, when collected for a match of one phrase.
        var features: HitFeatures? {
            collectsFeatures && !progress.pointee.severalPhrases ? progress.pointee.features : nil
        }

        func record(key: Int64, frequency: Double, length: Int32) {
            progress.pointee.features.append(key: key, frequency: frequency, length: length)
        }

        /// Set by the ranking function for a match of several phrases, whose hits have no features.
        func noteSeveralPhrases() {
            progress.pointee.severalPhrases = true
        }

        deinit {
            progress.deinitialize(count: 1)
            progress.deallocate()
        }

        var walked: Bool { progress.pointee.walked }
        var walkedHitCount: Int { progress.pointee.walkedHitCount }

        func reserveFeatures(_ count: Int) {
            progress.pointee.features.reserveCapacity(count)
        }

        func noteWalked() {
            progress.pointee.walked = true
        }

        func countWalkedHits(_ count: Int) {
            progress.pointee.walkedHitCount += count
        }

        /// Where the walk (`WalkedHits`) records what it sees, without going through this object.
        var progressForWalk: UnsafeMutablePointer<Progress> { progress }

        /// Runs `body` with the lengths given, by key, or nil.
        func withLengths<R>(_ body: (UnsafeBufferPointer<Int32>?) -> R) -> R {
            guard let lengths else { return body(nil) }
            return lengths.withUnsafeLengths { body($0) }
        }

        var hits: KeySet { progress.pointee.hits }
        var best: BestRanks? { progress.pointee.best }
        /// Stored, not read from `progress`: testing the optional there copied the heap's arrays,
        /// a retain and a release for every hit.
        let keepsBest: Bool

        /// Whether the hit is one not to rank (`scoringOnly` does not hold it).
        func leavesOut(_ key: Int64) -> Bool {
            scoringOnly?.contains(key) == false
        }

        /// The document's length from the lengths given, or -1 (none given, or none known there).
        func length(of key: Int64) -> Int32 {
            lengths?.length(of: key) ?? -1
        }

        func collect(_ key: Int64) {
            progress.pointee.hits.insert(key)
        }

        /// The function leaves the inverse document frequency out of the scores it offers, to be applied
        /// once the hits are counted: the best kept must allow for the ties that scaling makes.
        func leaveFrequencyOut(rows: Int64) {
            rowsWhenFrequencyLeftOut = rows
            progress.pointee.best?.keepNearMisses()
        }

        func offer(score: Double, key: Int64) {
            progress.pointee.best?.offer(score: score, key: key)
        }
    }

    /// What one query's ranking computes once: the collection's statistics, each phrase's inverse
    /// document frequency, the weights and the lengths it was given. Kept as the query's FTS5
    /// auxiliary data, freed with the query.
    private final class QueryStatistics {
        let averageLength: Double
        let inverseFrequencies: [Double]
        let weights: [Double]
        let inputs: RankingInputs?

        init(averageLength: Double, inverseFrequencies: [Double], weights: [Double], inputs: RankingInputs?) {
            self.averageLength = averageLength
            self.inverseFrequencies = inverseFrequencies
            self.weights = weights
            self.inputs = inputs
        }
    }

    /// The query's statistics, as a blob that the ranking function takes back.
    private static let statistics: fts5_extension_function = { api, fts, context, argumentCount, arguments in
        guard let api, let arguments else { return }
        switch queryStatistics(api.pointee, fts, argumentCount: Int(argumentCount), arguments: arguments) {
        case .success(let made):
            let values = [made.averageLength] + made.inverseFrequencies
            values.withUnsafeBytes { bytes in
                sqlite3_result_blob(context, bytes.baseAddress, Int32(bytes.count), sqliteTransient)
            }
        case .failure(let failure): sqlite3_result_error_code(context, failure.code)
        }
    }

    /// The index's average document length and number of documents (see `collectionFunctionName`).
    private static let collection: fts5_extension_function = { api, fts, context, _, _ in
        guard let api else { return }
        switch collectionSize(api.pointee, fts) {
        case .success(let size):
            [size.averageLength, Double(size.rows)].withUnsafeBytes { bytes in
                sqlite3_result_blob(context, bytes.baseAddress, Int32(bytes.count), sqliteTransient)
            }
        case .failure(let failure): sqlite3_result_error_code(context, failure.code)
        }
    }

    /// The index's average document length (1 when it is empty) and its number of documents, as
    /// bm25 weighs lengths by them.
    private static func collectionSize(_ api: Fts5ExtensionApi, _ fts: OpaquePointer?) -> Result<(averageLength: Double, rows: Int64), RankingFailure> {
        guard let rowCount = api.xRowCount, let totalSize = api.xColumnTotalSize else { return .failure(RankingFailure(SQLITE_ERROR)) }
        var rows: Int64 = 0, tokens: Int64 = 0
        var code = rowCount(fts, &rows)
        if code == SQLITE_OK { code = totalSize(fts, -1, &tokens) }
        guard code == SQLITE_OK else { return .failure(RankingFailure(code)) }
        return .success((rows > 0 ? Double(tokens) / Double(rows) : 1.0, rows))
    }

    /// bm25's length factor of a row `length` tokens long.
    @inline(__always)
    private static func lengthFactor(_ length: Int32, averageLength: Double) -> Double {
        k1 * (1 - b + b * Double(length) / averageLength)
    }

    /// bm25's term for a phrase of weighted `frequency` in a row, before its inverse document frequency.
    @inline(__always)
    private static func saturated(_ frequency: Double, lengthFactor: Double) -> Double {
        (frequency * (k1 + 1)) / (frequency + lengthFactor)
    }

    private static let rank: fts5_extension_function = { api, fts, context, argumentCount, arguments in
        guard let api, let arguments else { return }
        let result = score(api, fts, argumentCount: Int(argumentCount), arguments: arguments)
        switch result {
        case .success(let score?): sqlite3_result_double(context, score)
        case .success(nil): sqlite3_result_null(context)
        case .failure(let failure): sqlite3_result_error_code(context, failure.code)
        }
    }

    /// The hit's score; nil when the function keeps the best hits itself (see `best`).
    private static func score(
        _ api: UnsafePointer<Fts5ExtensionApi>, _ fts: OpaquePointer?, argumentCount: Int, arguments: UnsafeMutablePointer<OpaquePointer?>
    ) -> Result<Double?, RankingFailure> {
        guard let getAuxdata = api.pointee.xGetAuxdata else { return .failure(RankingFailure(SQLITE_ERROR)) }
        // The kept statistics are the query's until it ends: read without retaining them, once per hit.
        if let kept = getAuxdata(fts, 0) {
            return Unmanaged<QueryStatistics>.fromOpaque(kept)._withUnsafeGuaranteedRef { score(api, fts, statistics: $0) }
        }
        switch queryStatistics(api.pointee, fts, argumentCount: argumentCount, arguments: arguments) {
        case .success(let made):
            if let inputs = made.inputs, inputs.walksEveryHit { return walk(api, fts, statistics: made, inputs: inputs) }
            return score(api, fts, statistics: made)
        case .failure(let failure): return .failure(failure)
        }
    }

    /// Scores every hit of the match's one phrase, from the function's first call (see `walkSelect`);
    /// for a match of several phrases, nothing, and the caller ranks row by row instead.
    private static func walk(
        _ api: UnsafePointer<Fts5ExtensionApi>, _ fts: OpaquePointer?, statistics: QueryStatistics, inputs: RankingInputs
    ) -> Result<Double?, RankingFailure> {
        guard let phraseCount = api.pointee.xPhraseCount, let queryPhrase = api.pointee.xQueryPhrase
        else { return .failure(RankingFailure(SQLITE_ERROR)) }
        guard phraseCount(fts) == 1 else { return .success(nil) }
        inputs.noteWalked()
        // Room for every hit's features at once: the phrase is in at most every row of the index.
        // Grown one hit at a time, the features were reallocated and copied as they doubled, and
        // their fresh pages faulted in: with the appends, a third of the walk for a word in 33,000 of
        // 100,000 snippets. The room past the last hit is never written.
        if inputs.collectsFeatures, let rows = inputs.rowsWhenFrequencyLeftOut { inputs.reserveFeatures(Int(rows)) }
        let code = statistics.weights.withUnsafeBufferPointer { weights in
            inputs.withLengths { lengths in
                guard var walk = WalkedHits(api.pointee, statistics: statistics, weights: weights, lengths: lengths, inputs: inputs)
                else { return SQLITE_ERROR }
                let code = withUnsafeMutablePointer(to: &walk) { walk in
                    queryPhrase(fts, 0, UnsafeMutableRawPointer(walk)) { _, hit, pointer in
                        guard let pointer else { return SQLITE_ERROR }
                        return pointer.assumingMemoryBound(to: WalkedHits.self).pointee.score(hit)
                    }
                }
                inputs.countWalkedHits(walk.count)
                return code
            }
        }
        return code == SQLITE_OK ? .success(nil) : .failure(RankingFailure(code))
    }

    /// What scoring one walked hit reads, taken out of the query's statistics and inputs before the
    /// walk: a word in 33,000 of 100,000 snippets is 33,000 calls, and reading the inputs object
    /// through the statistics retained and released it three times a call (9% of the ranking's
    /// samples in a profile of such a word's first search), besides checking FTS5's function
    /// pointers and the class's properties again at every call. Used only while the walk runs, which
    /// the buffers and `inputs` outlive.
    private struct WalkedHits {
        let rowid: RowidFunction
        let columnSize: ColumnSizeFunction
        let phraseFirst: PhraseFirstFunction
        let phraseNext: PhraseNextFunction
        let averageLength: Double
        let inverseFrequency: Double
        let weights: UnsafeBufferPointer<Double>
        /// By key, as `DocumentLengths` keeps them; nil when none were given.
        let lengths: UnsafeBufferPointer<Int32>?
        let progress: UnsafeMutablePointer<RankingInputs.Progress>
        let scoringOnly: KeySet?
        let collectsHits: Bool
        let collectsFeatures: Bool
        let keepsBest: Bool
        /// The hits walked so far.
        var count = 0

        /// nil when FTS5 lacks one of the functions, or the statistics have no phrase.
        init?(
            _ api: Fts5ExtensionApi, statistics: QueryStatistics, weights: UnsafeBufferPointer<Double>,
            lengths: UnsafeBufferPointer<Int32>?, inputs: RankingInputs
        ) {
            guard let rowid = api.xRowid, let columnSize = api.xColumnSize,
                  let phraseFirst = api.xPhraseFirst, let phraseNext = api.xPhraseNext,
                  let inverseFrequency = statistics.inverseFrequencies.first else { return nil }
            self.rowid = rowid
            self.columnSize = columnSize
            self.phraseFirst = phraseFirst
            self.phraseNext = phraseNext
            averageLength = statistics.averageLength
            self.inverseFrequency = inverseFrequency
            self.weights = weights
            self.lengths = lengths
            progress = inputs.progressForWalk
            scoringOnly = inputs.filteredInWhere ? nil : inputs.scoringOnly
            collectsHits = inputs.collectsHits && !inputs.filteredInWhere
            collectsFeatures = inputs.collectsFeatures
            keepsBest = inputs.keepsBest
        }

        /// Scores the hit `hit` as `FullTextRanking.score(_:_:statistics:)` scores a row of a match of
        /// one phrase, to the same bits, and records it as that does.
        mutating func score(_ hit: OpaquePointer?) -> Int32 {
            count += 1
            let key = rowid(hit)
            if collectsHits { progress.pointee.hits.insert(key) }
            let leftOut = scoringOnly.map { !$0.contains(key) } ?? false
            // A hit left out still has its features read: they serve any later condition.
            if leftOut && !collectsFeatures { return SQLITE_OK }
            var length: Int32 = -1
            if let lengths, key >= 0, key < lengths.count { length = lengths[Int(key)] }
            if length < 0 {
                let code = columnSize(hit, -1, &length)
                guard code == SQLITE_OK else { return code }
            }
            let lengthFactor = FullTextRanking.lengthFactor(length, averageLength: averageLength)
            let frequency: Double
            switch FullTextRanking.weightedFrequency(of: 0, in: hit, weights: weights, first: phraseFirst, next: phraseNext) {
            case .success(let weighted): frequency = weighted
            case .failure(let failure): return failure.code
            }
            var score = 0.0
            score += inverseFrequency * FullTextRanking.saturated(frequency, lengthFactor: lengthFactor)
            if collectsFeatures { progress.pointee.features.append(key: key, frequency: frequency, length: length) }
            if !leftOut && keepsBest { progress.pointee.best?.offer(score: -score, key: key) }
            return SQLITE_OK
        }
    }

    // The FTS5 functions scoring calls, as `Fts5ExtensionApi` declares them.
    private typealias RowidFunction = @convention(c) (OpaquePointer?) -> sqlite3_int64
    private typealias ColumnSizeFunction = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<Int32>?) -> Int32
    private typealias PhraseFirstFunction = @convention(c) (
        OpaquePointer?, Int32, UnsafeMutablePointer<Fts5PhraseIter>?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?
    ) -> Int32
    private typealias PhraseNextFunction = @convention(c) (
        OpaquePointer?, UnsafeMutablePointer<Fts5PhraseIter>?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?
    ) -> Void

    /// bm25's term frequency: the instances of `phrase` in the current row, each weighted by its
    /// column (1 for a column past the weights given). The walk and the row-by-row score share it.
    @inline(__always)
    private static func weightedFrequency(
        of phrase: Int32, in fts: OpaquePointer?, weights: UnsafeBufferPointer<Double>,
        first: PhraseFirstFunction, next: PhraseNextFunction
    ) -> Result<Double, RankingFailure> {
        var frequency = 0.0
        var iterator = Fts5PhraseIter()
        var column: Int32 = 0, offset: Int32 = 0
        let code = first(fts, phrase, &iterator, &column, &offset)
        guard code == SQLITE_OK else { return .failure(RankingFailure(code)) }
        while column >= 0 {
            frequency += Int(column) < weights.count ? weights[Int(column)] : 1
            next(fts, &iterator, &column, &offset)
        }
        return .success(frequency)
    }

    private static func score(
        _ api: UnsafePointer<Fts5ExtensionApi>, _ fts: OpaquePointer?, statistics: QueryStatistics
    ) -> Result<Double?, RankingFailure> {
        guard let phraseFirst = api.pointee.xPhraseFirst, let phraseNext = api.pointee.xPhraseNext,
              let rowid = api.pointee.xRowid, let columnSize = api.pointee.xColumnSize else { return .failure(RankingFailure(SQLITE_ERROR)) }
        var length: Int32 = -1
        var key: Int64 = 0
        var leftOut = false
        let inputs = statistics.inputs
        if let inputs {
            key = rowid(fts)
            if !inputs.filteredInWhere {
                if inputs.collectsHits { inputs.collect(key) }
                leftOut = inputs.leavesOut(key)
                // A hit left out still has its features read: they serve any later condition.
                if leftOut && !inputs.collectsFeatures { return .success(inputs.keepsBest ? nil : .infinity) }
            }
            length = inputs.length(of: key)
        }
        if length < 0 {
            let code = columnSize(fts, -1, &length)
            guard code == SQLITE_OK else { return .failure(RankingFailure(code)) }
        }
        let lengthFactor = Self.lengthFactor(length, averageLength: statistics.averageLength)
        var score = 0.0
        var firstFrequency = 0.0
        for phrase in statistics.inverseFrequencies.indices {
            let found = statistics.weights.withUnsafeBufferPointer { weights in
                weightedFrequency(of: Int32(phrase), in: fts, weights: weights, first: phraseFirst, next: phraseNext)
            }
            let frequency: Double
            switch found {
            case .success(let weighted): frequency = weighted
            case .failure(let failure): return .failure(failure)
            }
            if phrase == 0 { firstFrequency = frequency }
            score += statistics.inverseFrequencies[phrase] * saturated(frequency, lengthFactor: lengthFactor)
        }
        if let inputs, inputs.collectsFeatures {
            if statistics.inverseFrequencies.count == 1 {
                inputs.record(key: key, frequency: firstFrequency, length: length)
            } else {
                inputs.noteSeveralPhrases()
            }
        }
        if leftOut, let inputs { return .success(inputs.keepsBest ? nil : .infinity) }
        if let inputs, inputs.keepsBest {
            inputs.offer(score: -score, key: key)
            return .success(nil)
        }
        return .success(-score)
    }

    /// The statistics of the query, computed at its first row and kept with it.
    private static func queryStatistics(
        _ api: Fts5ExtensionApi, _ fts: OpaquePointer?, argumentCount: Int, arguments: UnsafeMutablePointer<OpaquePointer?>
    ) -> Result<QueryStatistics, RankingFailure> {
        guard let setAuxdata = api.xSetAuxdata, let phraseCount = api.xPhraseCount, let queryPhrase = api.xQueryPhrase
        else { return .failure(RankingFailure(SQLITE_ERROR)) }
        let phrases = Int(phraseCount(fts))
        let pointer = argumentCount > 0 ? sqlite3_value_pointer(arguments[0], UnsafeRawPointer(pointerType.utf8Start).assumingMemoryBound(to: CChar.self)) : nil
        let inputs = pointer.map { Unmanaged<RankingInputs>.fromOpaque($0).takeUnretainedValue() }
        var averageLength = 1.0
        var inverseFrequencies: [Double] = []
        var code = SQLITE_OK
        if let given = argumentCount > 1 ? givenStatistics(arguments[1], phrases: phrases) : nil {
            (averageLength, inverseFrequencies) = given
        } else {
            let rows: Int64
            switch collectionSize(api, fts) {
            case .success(let size): (averageLength, rows) = size
            case .failure(let failure): return .failure(failure)
            }
            if phrases == 1, let inputs, inputs.collectsHits || inputs.collectsFeatures || inputs.walksEveryHit {
                // Left out, and applied by `best` once the hits are counted.
                inputs.leaveFrequencyOut(rows: rows)
                inverseFrequencies = [1]
            } else {
                // How many rows hold each phrase: a walk of its entries in the index, as bm25 makes.
                for phrase in 0..<phrases {
                    var hits: Int64 = 0
                    code = queryPhrase(fts, Int32(phrase), &hits) { _, _, counter in
                        counter?.assumingMemoryBound(to: Int64.self).pointee += 1
                        return SQLITE_OK
                    }
                    guard code == SQLITE_OK else { return .failure(RankingFailure(code)) }
                    inverseFrequencies.append(inverseFrequency(rows: rows, hits: hits))
                }
            }
        }
        let weights = (2..<max(2, argumentCount)).map { sqlite3_value_double(arguments[$0]) }
        let statistics = QueryStatistics(
            averageLength: averageLength, inverseFrequencies: inverseFrequencies, weights: weights, inputs: inputs)
        code = setAuxdata(fts, Unmanaged.passRetained(statistics).toOpaque()) { kept in
            if let kept { Unmanaged<QueryStatistics>.fromOpaque(kept).release() }
        }
        guard code == SQLITE_OK else { return .failure(RankingFailure(code)) }
        return .success(statistics)
    }

    /// The statistics of a blob from `objectgraph_bm25_statistics`; nil for NULL or a blob that does
    /// not fit the query's phrases, and the function computes them itself.
    private static func givenStatistics(_ value: OpaquePointer?, phrases: Int) -> (Double, [Double])? {
        guard sqlite3_value_type(value) == SQLITE_BLOB, let blob = sqlite3_value_blob(value) else { return nil }
        let count = Int(sqlite3_value_bytes(value)) / MemoryLayout<Double>.size
        guard count == phrases + 1 else { return nil }
        var values = [Double](repeating: 0, count: count)
        values.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: blob, count: $0.count)) }
        return (values[0], Array(values.dropFirst()))
    }

    /// The `capacity` best of the (score, key) pairs offered, in the order of `ORDER BY score, key`:
    /// a heap whose root is the worst kept, which a new pair must beat to enter.
    ///
    /// Scores offered before their scaling by a positive factor (the inverse document frequency,
    /// known once every hit is counted) can tie only once scaled: two terms one bit apart become one
    /// double, and bm25 then ranks them by key. So that the best after scaling are still among those
    /// kept, pairs left out within a rounding of the worst kept are kept aside too (`keepNearMisses`).
    struct BestRanks {
        let capacity: Int
        private var heap: [(score: Double, key: Int64)] = []
        /// Pairs left out whose score is within `nearness` of the worst kept when they were; nil when
        /// the scores are final.
        private var nearMisses: [(score: Double, key: Int64)]?
        /// Far more than the rounding a product can merge (an ulp is 2^-52 of a value): a pair whose
        /// score is further from the worst kept stays apart from it once both are scaled.
        private static let nearness = 0x1p-44
        /// How many near misses make `noteLeftOut` drop those no longer near.
        private var nearMissesToPrune = 1_024

        init(capacity: Int) {
            self.capacity = capacity
            heap.reserveCapacity(min(capacity, 4_096))
        }

        private static func ranksAfter(_ a: (score: Double, key: Int64), _ b: (score: Double, key: Int64)) -> Bool {
            (a.score, a.key) > (b.score, b.key)
        }

        /// Whether `score`, no better than `worst`, may equal it once both are scaled. The worst kept
        /// only gets better, so a pair near the last worst was near the worst when it was left out.
        private static func isNear(_ score: Double, worst: Double) -> Bool {
            score - worst <= abs(worst) * nearness
        }

        /// Keeps the pairs left out near the worst kept from now on: see the type's description.
        mutating func keepNearMisses() {
            if nearMisses == nil { nearMisses = [] }
        }

        private mutating func noteLeftOut(_ entry: (score: Double, key: Int64)) {
            guard nearMisses != nil, let worst = heap.first, Self.isNear(entry.score, worst: worst.score) else { return }
            nearMisses?.append(entry)
            // Those no longer near the worst never will be again. Many hits can tie with it exactly
            // (texts alike), and stay: the next look waits until there are twice as many.
            if let count = nearMisses?.count, count >= nearMissesToPrune {
                nearMisses?.removeAll { !Self.isNear($0.score, worst: worst.score) }
                nearMissesToPrune = max(nearMissesToPrune, 2 * (nearMisses?.count ?? 0))
            }
        }

        mutating func offer(score: Double, key: Int64) {
            // Most hits of a common word rank below a full heap's worst and are not near it: one
            // comparison turns them away, where the general path compared pairs and looked at the
            // near misses for each. It returns only where that path keeps nothing.
            if heap.count == capacity, let worst = heap.first?.score, score > worst,
               nearMisses == nil || !Self.isNear(score, worst: worst) {
                return
            }
            let entry = (score: score, key: key)
            if heap.count < capacity {
                heap.append(entry)
                var child = heap.count - 1
                while child > 0 {
                    let parent = (child - 1) / 2
                    guard Self.ranksAfter(heap[child], heap[parent]) else { break }
                    heap.swapAt(child, parent)
                    child = parent
                }
            } else if let worst = heap.first, Self.ranksAfter(worst, entry) {
                heap[0] = entry
                defer { noteLeftOut(worst) }
                var parent = 0
                while true {
                    let left = 2 * parent + 1, right = left + 1
                    var largest = parent
                    if left < heap.count, Self.ranksAfter(heap[left], heap[largest]) { largest = left }
                    if right < heap.count, Self.ranksAfter(heap[right], heap[largest]) { largest = right }
                    guard largest != parent else { break }
                    heap.swapAt(parent, largest)
                    parent = largest
                }
            } else {
                noteLeftOut(entry)
            }
        }

        /// The pairs kept, best first.
        func sorted() -> [(score: Double, key: Int64)] {
            heap.sorted { ($0.score, $0.key) < ($1.score, $1.key) }
        }

        /// The best pairs once every score is multiplied by `factor` (positive), best first: those kept,
        /// and those left out near the worst kept, which may now tie with it and rank before it by key.
        func sorted(scaledBy factor: Double) -> [(score: Double, key: Int64)] {
            var candidates = heap
            if let nearMisses, let worst = heap.first {
                candidates += nearMisses.filter { Self.isNear($0.score, worst: worst.score) }
            }
            let scaled = candidates.map { (score: $0.score * factor, key: $0.key) }
            return Array(scaled.sorted { ($0.score, $0.key) < ($1.score, $1.key) }.prefix(capacity))
        }
    }

    private struct RankingFailure: Error {
        let code: Int32
        init(_ code: Int32) { self.code = code }
    }
}

/// Every hit of a match of one phrase, with what bm25 scores it by: the phrase's instances in it,
/// weighted by their column, and its length. With the index's average length and number of
/// documents, they give every hit's score without FTS5: a search ranks its word again after a save
/// that changed the index (which moves every score) from these, brought up to date by the save's own
/// rows, instead of walking the word's entries again (12 ms for a word in 74,000 of 100,000 snippets).
struct HitFeatures: Sendable {
    /// One hit: its key, the phrase's instances in it weighted by column, and its length.
    struct Hit: Sendable {
        let key: Int64
        let frequency: Double
        let length: Int32
    }

    /// In one array, not an array per field: a ranking appends 74,000 of them for a common word, and
    /// each append to an array checks that its buffer is unique and has room.
    private(set) var hits: [Hit] = []

    var count: Int { hits.count }
    var keys: [Int64] { hits.map(\.key) }

    mutating func reserveCapacity(_ count: Int) {
        hits.reserveCapacity(count)
    }

    mutating func append(key: Int64, frequency: Double, length: Int32) {
        hits.append(Hit(key: key, frequency: frequency, length: length))
    }

    /// These features after a save: those of the rows in `removed` (the hits among the save's rows
    /// before it) taken out, and `added` (the hits among them after it) put in.
    func replacing(_ removed: [Int64], with added: HitFeatures) -> HitFeatures {
        let leaving = Set(removed).union(added.hits.lazy.map(\.key))
        var result = HitFeatures()
        result.hits.reserveCapacity(count + added.count)
        result.hits += hits.lazy.filter { !leaving.contains($0.key) }
        result.hits += added.hits
        return result
    }

    /// The `count` best-ranked hits among `meeting` (all for nil), best first, with the scores the
    /// ranking function gives (SQLite's bm25), for an index of `rows` documents of `averageLength`.
    func best(_ count: Int, among meeting: KeySet?, averageLength: Double, rows: Int64) -> [(key: Int64, score: Double)] {
        FullTextRanking.best(count, of: self, among: meeting, averageLength: averageLength, rows: rows)
    }
}

extension FullTextRanking {
    /// See `HitFeatures.best`: the terms of `score(_:_:statistics:)`, from the same functions, for the
    /// same numbers to the last bit.
    fileprivate static func best(
        _ count: Int, of features: HitFeatures, among meeting: KeySet?, averageLength: Double, rows: Int64
    ) -> [(key: Int64, score: Double)] {
        var best = BestRanks(capacity: max(0, count))
        // Applied before the pairs are compared, as `score` applies it: two terms one bit apart can
        // make one score, and then rank by key.
        let factor = inverseFrequency(rows: rows, hits: Int64(features.count))
        for hit in features.hits {
            if let meeting, !meeting.contains(hit.key) { continue }
            // As `score` computes a one-phrase score.
            let lengthFactor = lengthFactor(hit.length, averageLength: averageLength)
            best.offer(score: -(factor * saturated(hit.frequency, lengthFactor: lengthFactor)), key: hit.key)
        }
        return best.sorted().map { (key: $0.key, score: $0.score) }
    }
}

/// The length in tokens of every document of a full-text index (all its columns together), by row
/// key: what bm25 weighs a hit by, read once from the index's `_docsize` table and kept by the
/// aggregate cache, which brings it up to date through saves (see `FullTextIndex.lengthsUpkeep`).
/// Immutable: ranking queries on several connections read it at once.
final class DocumentLengths: @unchecked Sendable {
    /// By row key; -1 for a key with no document.
    private let lengths: [Int32]
    /// How many keys have a document: the index's rows, one per row of its entity's table. A search
    /// compares its hits with it (see `prefixRanked`), where counting the table took 1–2 ms at the
    /// first search of a process and after every save that wrote the table.
    let documentCount: Int

    private init(lengths: [Int32], documentCount: Int) {
        self.lengths = lengths
        self.documentCount = documentCount
    }

    /// The document's length, or -1 when it is not known here.
    func length(of key: Int64) -> Int32 {
        key >= 0 && key < lengths.count ? lengths[Int(key)] : -1
    }

    /// Runs `body` with the lengths by key (-1 for a key with no document), as `length(of:)` reads them.
    func withUnsafeLengths<R>(_ body: (UnsafeBufferPointer<Int32>) -> R) -> R {
        lengths.withUnsafeBufferPointer(body)
    }

    /// An array by key holds at most this many slots per document (plus some): keys far sparser
    /// than that are not kept, and the lengths are read from the index instead.
    private static let slotsPerDocument = 4
    private static let spareSlots = 1_024

    /// The lengths of every document of `index`; nil when its keys are too sparse to keep by key.
    static func read(_ index: FullTextIndex, in db: Database) throws -> DocumentLengths? {
        let documents = try index.documentLengths(in: db)
        let largest = documents.map(\.key).max() ?? -1
        guard largest < Int64(documents.count * slotsPerDocument + spareSlots) else { return nil }
        var lengths = [Int32](repeating: -1, count: Int(largest) + 1)
        var documentCount = 0
        for (key, length) in documents where key >= 0 {
            if lengths[Int(key)] < 0 { documentCount += 1 }
            lengths[Int(key)] = length
        }
        return DocumentLengths(lengths: lengths, documentCount: documentCount)
    }

    /// The lengths after a save that changed the documents of `keys`, whose lengths are now `new`
    /// (a key missing from it has no document any more); nil when the keys grow too sparse.
    func replacing(_ keys: [Int64], with new: [(key: Int64, length: Int32)]) -> DocumentLengths? {
        let largest = max(Int64(lengths.count) - 1, new.map(\.key).max() ?? -1)
        guard largest < Int64(lengths.count * Self.slotsPerDocument + Self.spareSlots) else { return nil }
        var updated = lengths
        var documentCount = documentCount
        if largest >= Int64(updated.count) { updated += [Int32](repeating: -1, count: Int(largest) + 1 - updated.count) }
        for key in keys where key >= 0 && key < Int64(updated.count) && updated[Int(key)] >= 0 {
            updated[Int(key)] = -1
            documentCount -= 1
        }
        for (key, length) in new where key >= 0 {
            if updated[Int(key)] < 0 { documentCount += 1 }
            updated[Int(key)] = length
        }
        return DocumentLengths(lengths: updated, documentCount: documentCount)
    }
}

extension SQLiteStore {
    /// The lengths of every document of a full-text index, kept (see `DocumentLengths`).
    func documentLengths(of index: FullTextIndex, inBackground: Bool = false) throws -> DocumentLengths? {
        try aggregateCache.value(sql: index.documentLengthsSQL, arguments: [], upkeep: index.lengthsUpkeep) {
            try read(inBackground: inBackground) { db in try DocumentLengths.read(index, in: db) }
        }
    }
}
