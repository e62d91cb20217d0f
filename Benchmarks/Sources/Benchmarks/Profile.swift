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
