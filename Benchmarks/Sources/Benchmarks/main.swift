import CSQLite
import Foundation
import Logging

// SnippetBox benchmarks. `bash Benchmarks/run.sh` builds this in release and runs it from the
// repository root; `--help` lists the options.

struct Options {
    var count = 100_000
    var rounds = 5
    var warmUpRounds = 1
    var fluentRounds = 3
    var queryRepetitions = 200
    var searchRepetitions = 50
    var pageRepetitions = 50
    var startupRounds = 5
    var only: Set<String> = ["store", "page", "startup"]
    var contenders = ["raw", "grdb", "fluent", "objectgraph"]
    /// Out of the committed records unless asked for: a partial run (one workload, one contender)
    /// written over `results/latest.json` replaced the last full run's record.
    var json = "Benchmarks/.build/last-run.json"
    var repoRoot = FileManager.default.currentDirectoryPath
    var snippetbox = "Benchmarks/.build/release/snippetbox"
    /// A data directory already seeded (by `snippetbox seed N`) to measure the app on, instead of seeding one.
    var appData: String?

    init(_ arguments: [String]) throws {
        var iterator = arguments.makeIterator()
        func value(_ name: String) throws -> String {
            guard let value = iterator.next() else { throw BenchmarkError("\(name) needs a value") }
            return value
        }
        func numberOrZero(_ name: String) throws -> Int {
            guard let count = Int(try value(name)), count >= 0 else { throw BenchmarkError("\(name) needs a number, 0 or more") }
            return count
        }
        func number(_ name: String) throws -> Int {
            guard let number = Int(try value(name).replacingOccurrences(of: "_", with: "")), number > 0 else {
                throw BenchmarkError("\(name) needs a positive number")
            }
            return number
        }
        while let argument = iterator.next() {
            switch argument {
            case "--count": count = try number(argument)
            case "--rounds": rounds = try number(argument)
            case "--warm-up-rounds": warmUpRounds = try numberOrZero(argument)
            case "--fluent-rounds": fluentRounds = try number(argument)
            case "--reps": queryRepetitions = try number(argument)
            case "--search-reps": searchRepetitions = try number(argument)
            case "--page-reps": pageRepetitions = try number(argument)
            case "--startup-rounds": startupRounds = try number(argument)
            case "--only": only = Set(try value(argument).split(separator: ",").map(String.init))
            case "--contenders": contenders = try value(argument).split(separator: ",").map { $0.lowercased() }
            case "--json": json = try value(argument)
            case "--repo": repoRoot = try value(argument)
            case "--snippetbox": snippetbox = try value(argument)
            case "--app-data": appData = try value(argument)
            case "--help", "-h":
                print("""
                    usage: Benchmarks [--count 100000] [--rounds 5] [--warm-up-rounds 1] [--fluent-rounds 3] [--reps 200] [--search-reps 50]
                                      [--page-reps 50] [--startup-rounds 5] [--only store,page,startup]
                                      [--contenders raw,grdb,fluent,objectgraph] [--json Benchmarks/.build/last-run.json]
                                      [--repo .] [--snippetbox Benchmarks/.build/release/snippetbox]
                                      [--app-data DIR (a store seeded by `snippetbox seed N`, instead of seeding one)]
                           Benchmarks --profile-objectgraph N | --profile-raw N | --profile-typed-sketch N   (for callgrind; see instructions.sh)
                           Benchmarks --time-typed-sketch N   (fetch all timed: raw SQLite, ObjectGraph, TypedFetchSketch.swift)
                    Run from the repository root (the app's Views/ are found there).
                    """)
                exit(0)
            default: throw BenchmarkError("unknown option \(argument) (--help lists them)")
            }
        }
    }
}

func shell(_ command: String) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try? process.run()
    process.waitUntilExit()
    return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        .trimmingCharacters(in: .whitespacesAndNewlines)
}

setvbuf(stdout, nil, _IOLBF, 0)

// Synchronous profiling entries, before anything awaits (see Profile.swift).
for (option, profile) in [
    ("--profile-objectgraph", profileObjectGraph), ("--profile-raw", profileRawSQLite), ("--profile-typed-sketch", profileTypedSketch),
    ("--time-typed-sketch", timeTypedSketch),
] {
    guard let index = CommandLine.arguments.firstIndex(of: option) else { continue }
    let count = CommandLine.arguments.count > index + 1 ? Int(CommandLine.arguments[index + 1]) ?? 2_000 : 2_000
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("snippetbox-profile-\(getpid())")
    do {
        try profile(count, scratch)
    } catch {
        print("profile failed: \(error)")
        exit(1)
    }
    try? FileManager.default.removeItem(at: scratch)
    exit(0)
}

LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    let repoRoot = URL(fileURLWithPath: options.repoRoot).standardizedFileURL
    guard FileManager.default.fileExists(atPath: repoRoot.appendingPathComponent("Views").path) else {
        throw BenchmarkError("run from the repository root (no Views/ in \(repoRoot.path)), or pass --repo")
    }
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("snippetbox-bench-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let results = Results()
    let started = Date()
    #if DEBUG
    print("WARNING: a debug build; figures are meaningless (build with -c release)")
    #endif

    if options.only.contains("store") {
        let available: [String: any Contender.Type] = [
            "raw": RawSQLiteContender.self, "grdb": GRDBContender.self,
            "fluent": FluentContender.self, "objectgraph": ObjectGraphContender.self,
        ]
        let contenders = try options.contenders.map { name -> any Contender.Type in
            guard let type = available[name] else { throw BenchmarkError("unknown contender \(name)") }
            return type
        }
        try await StoreWorkloads(
            count: options.count, rounds: options.rounds, warmUpRounds: options.warmUpRounds,
            fluentRounds: min(options.fluentRounds, options.rounds),
            queryRepetitions: options.queryRepetitions, searchRepetitions: options.searchRepetitions,
            contenders: contenders, scratch: scratch, results: results
        ).run()
    }

    if options.only.contains("page") || options.only.contains("startup") {
        let dataDirectory = options.appData.map { URL(fileURLWithPath: $0) } ?? scratch.appendingPathComponent("app-data")
        let binary = URL(fileURLWithPath: options.snippetbox, relativeTo: repoRoot).standardizedFileURL
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw BenchmarkError("no snippetbox binary at \(binary.path): build it with run.sh or pass --snippetbox")
        }
        let (folders, tags) = options.appData == nil
            ? try DemoStore.seed(directory: dataDirectory, count: options.count, binary: binary, results: results)
            : try DemoStore.choices(in: dataDirectory)
        if options.only.contains("page") {
            try await ListPageBenchmark(
                repoRoot: repoRoot, dataDirectory: dataDirectory, folders: folders, tags: tags,
                repetitions: options.pageRepetitions, results: results
            ).run()
        }
        if options.only.contains("startup") {
            try await StartupBenchmark(
                binary: binary, dataDirectory: dataDirectory, rounds: options.startupRounds,
                requestsAfterStart: 50, results: results
            ).run()
        }
    }

    print("")
    results.printTable()
    let metadata: [String: Any] = [
        "date": ISO8601DateFormatter().string(from: started),
        "command": CommandLine.arguments.joined(separator: " "),
        "count": options.count, "rounds": options.rounds, "warmUpRounds": options.warmUpRounds,
        "fluentRounds": min(options.fluentRounds, options.rounds),
        "queryRepetitions": options.queryRepetitions, "searchRepetitions": options.searchRepetitions,
        "pageRepetitions": options.pageRepetitions,
        "machine": [
            "cores": ProcessInfo.processInfo.activeProcessorCount,
            "memoryBytes": ProcessInfo.processInfo.physicalMemory,
            "cpu": shell("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"),
            "kernel": shell("uname -sr"),
            "os": shell(". /etc/os-release && echo $PRETTY_NAME"),
        ],
        "swift": shell("swift --version 2>&1 | head -1"),
        "systemSQLite": String(cString: sqlite3_libversion()),
        "gitCommit": shell("git -C '\(repoRoot.path)' rev-parse --short HEAD"),
        "build": "release",
    ]
    let jsonURL = URL(fileURLWithPath: options.json, relativeTo: repoRoot)
    try FileManager.default.createDirectory(at: jsonURL.deletingLastPathComponent(), withIntermediateDirectories: true)
    try results.json(metadata: metadata).write(to: jsonURL)
    print("\nWrote \(jsonURL.path)")
} catch {
    FileHandle.standardError.write(Data("Benchmarks failed: \(error)\n".utf8))
    exit(1)
}
