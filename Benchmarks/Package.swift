// swift-tools-version: 6.1
// SnippetBox benchmarks: ObjectGraph against the raw SQLite C API, GRDB and Fluent, plus the app's
// list page in-process. A package of its own so that the app's build never pulls Fluent in.
// Run with `bash Benchmarks/run.sh` from the repository root (release build).
import PackageDescription

let package = Package(
    name: "SnippetBoxBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "SnippetBox", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/vapor/vapor", exact: "4.122.3"),
        .package(url: "https://github.com/vapor/fluent", exact: "4.13.0"),
        .package(url: "https://github.com/vapor/fluent-kit", exact: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver", exact: "4.9.0"),
    ],
    targets: [
        // The system SQLite (libsqlite3-dev), for the raw C API contender.
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "Benchmarks",
            dependencies: [
                "CSQLite",
                .product(name: "ObjectGraph", package: "SnippetBox"),
                .product(name: "SnippetBox", package: "SnippetBox"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ]
)
