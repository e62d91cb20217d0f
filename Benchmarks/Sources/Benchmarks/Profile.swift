import Foundation

/// `--profile-objectgraph N`: ObjectGraph's store workloads run synchronously (no `await`), for
/// `valgrind --tool=callgrind`, which (3.19) crashes at the first suspension of an async main.
/// Prints each step's time. Used by Benchmarks/profile.sh.
func profileObjectGraph(count: Int, scratch: URL) throws {
    let data = Dataset(count: count)
    func step<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        let start = now()
        let value = try body()
        print("\(name): \(Results.format(now() - start, .once))")
        return value
    }
    let directory = scratch.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    do {
        let contender = try ObjectGraphContender(syncPath: directory.appendingPathComponent("a.sqlite").path, fullText: false)
        try step("insert \(count)") { try contender.insertNow(data) }
        _ = try step("fetch all") { try contender.fetchAllNow() }
        _ = try step("page of 50 + tags ×20") { for _ in 0..<20 { _ = try contender.fetchPageWithTagsNow() } }
        _ = try step("filtered ×20") {
            for index in 0..<20 {
                let filter = Dataset.filterCases[index % Dataset.filterCases.count]
                _ = try contender.filteredNow(folder: filter.folder, tag: filter.tag, language: filter.language)
            }
        }
        _ = try step("update 10k") { try contender.update10kNow() }
        _ = try step("delete folder (cascade)") { try contender.deleteFolderCascadeNow() }
    }
    do {
        let contender = try ObjectGraphContender(syncPath: directory.appendingPathComponent("b.sqlite").path, fullText: true)
        try step("insert \(count) + full-text index") { try contender.insertNow(data) }
        _ = try step("search rare ×5") { for _ in 0..<5 { _ = try contender.searchNow(Dataset.rareWord) } }
        _ = try step("search common ×5") { for _ in 0..<5 { _ = try contender.searchNow(Dataset.commonWord) } }
    }
    try? FileManager.default.removeItem(at: directory)
}

/// `--profile-raw N`: raw SQLite's insert and fetch-all workloads, in the same order and on the same
/// data as `profileObjectGraph`'s, so that callgrind counts both contenders' instructions per row with
/// the same `--toggle-collect` on `insertNow` and `fetchAllNow`: the budget a ratio to raw SQLite allows.
func profileRawSQLite(count: Int, scratch: URL) throws {
    let data = Dataset(count: count)
    let directory = scratch.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let plain = try RawSQLiteContender(syncPath: directory.appendingPathComponent("a.sqlite").path, fullText: false)
    try plain.insertNow(data)
    print("fetch all checksum: \(try plain.fetchAllNow())")
    let indexed = try RawSQLiteContender(syncPath: directory.appendingPathComponent("b.sqlite").path, fullText: true)
    try indexed.insertNow(data)
}

/// `--profile-typed-sketch N`: ObjectGraph's plain insert of the same data, then `TypedFetchSketch`'s
/// fetches of every snippet from that store, one for each shape of model, so that callgrind counts
/// the sketch's instructions per row (`--toggle-collect` on `fetchAllNow`, `fetchAllInlineNow` or
/// `fetchAllUnobservedNow`) beside raw SQLite's and ObjectGraph's.
func profileTypedSketch(count: Int, scratch: URL) throws {
    let data = Dataset(count: count)
    let directory = scratch.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let path = directory.appendingPathComponent("a.sqlite").path
    try ObjectGraphContender(syncPath: path, fullText: false).insertNow(data)
    let sketch = try TypedFetchSketch(path: path)
    print("fetch all checksum: \(try sketch.fetchAllNow())")
    // The other shapes after it, each its own symbol to count under.
    print("fetch all checksum, values in the model: \(try sketch.fetchAllInlineNow())")
    print("fetch all checksum, unobserved: \(try sketch.fetchAllUnobservedNow())")
}

/// `--time-typed-sketch N`: the fetch of every snippet timed for raw SQLite, ObjectGraph and
/// `TypedFetchSketch`'s three shapes of model on stores of the same N snippets, in alternating rounds (one warm-up, then
/// five), printing each one's median and its ratio to raw SQLite's. The time beside the
/// instructions `instructions.sh` counts: a design that allocates more misses the cache more.
func timeTypedSketch(count: Int, scratch: URL) throws {
    let data = Dataset(count: count)
    let directory = scratch.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let raw = try RawSQLiteContender(syncPath: directory.appendingPathComponent("raw.sqlite").path, fullText: false)
    try raw.insertNow(data)
    let objectGraphPath = directory.appendingPathComponent("objectgraph.sqlite").path
    let objectGraph = try ObjectGraphContender(syncPath: objectGraphPath, fullText: false)
    try objectGraph.insertNow(data)
    let sketch = try TypedFetchSketch(path: objectGraphPath)
    let fetches: [(name: String, fetch: () throws -> Int)] = [
        ("raw SQLite", raw.fetchAllNow), ("ObjectGraph", objectGraph.fetchAllNow), ("typed sketch", sketch.fetchAllNow),
        ("typed sketch, values in the model", sketch.fetchAllInlineNow),
        ("typed sketch, values in the model, unobserved", sketch.fetchAllUnobservedNow),
    ]
    var seconds = Array(repeating: [Double](), count: fetches.count)
    var checksums = Set<Int>()
    for round in 0..<6 {
        for (index, entry) in fetches.enumerated() {
            let start = now()
            checksums.insert(try entry.fetch())
            if round > 0 { seconds[index].append(now() - start) }
        }
    }
    guard checksums.count == 1 else { throw BenchmarkError("the fetches read different data (checksums \(checksums.sorted()))") }
    let rawMedian = percentile(seconds[0], 50)
    for (index, entry) in fetches.enumerated() {
        let median = percentile(seconds[index], 50)
        print("fetch all \(count), \(entry.name): median \(Results.format(median, .once)), \(String(format: "%.2f", median / rawMedian))× raw SQLite")
    }
}
