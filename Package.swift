// swift-tools-version: 6.2
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "SnippetBox",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "ObjectGraph", targets: ["ObjectGraph"]),
        .library(name: "SnippetBox", targets: ["SnippetBox"]),
        .executable(name: "snippetbox", targets: ["snippetbox"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/swiftlang/swift-syntax", exact: "603.0.1"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/vapor/vapor", exact: "4.122.3"),
        .package(url: "https://github.com/vapor/leaf", exact: "4.5.2"),
        // Leaf's engine, for `LeafDataRepresentable` (Leaf re-exports only part of it).
        .package(url: "https://github.com/vapor/leaf-kit", exact: "1.14.3"),
        .package(url: "https://github.com/JohnSundell/Ink", exact: "0.6.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", exact: "0.9.20"),
    ],
    targets: [
        .macro(
            name: "ObjectGraphMacros",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        .target(
            name: "ObjectGraph",
            dependencies: [
                "ObjectGraphMacros",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the full-text ranking function (FTS5's extension API).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "SnippetBox",
            dependencies: [
                "ObjectGraph",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Leaf", package: "leaf"),
                .product(name: "LeafKit", package: "leaf-kit"),
                .product(name: "Ink", package: "Ink"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ]
        ),
        .executableTarget(
            name: "snippetbox",
            dependencies: ["SnippetBox", .product(name: "Vapor", package: "vapor")]
        ),
        .testTarget(
            name: "SnippetBoxTests",
            dependencies: [
                "SnippetBox", "ObjectGraph", .product(name: "XCTVapor", package: "vapor"),
                .product(name: "LeafKit", package: "leaf-kit"),
                // To write a store as an earlier version left it, which the app's own code no longer does.
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ]
        ),
        .testTarget(
            name: "ObjectGraphMacrosTests",
            dependencies: [
                "ObjectGraphMacros",
                .product(name: "SwiftSyntaxMacrosTestSupport", package: "swift-syntax"),
            ]
        ),
        // Models written as for SwiftData in a module set up as Xcode 26 sets up a new app: declarations
        // on the main actor unless they say otherwise (SE-0466), and the two features of its
        // "approachable concurrency". `.defaultIsolation` is why this manifest needs tools 6.2.
        .testTarget(
            name: "ObjectGraphMainActorTests",
            dependencies: ["ObjectGraph"],
            swiftSettings: [
                .defaultIsolation(MainActor.self),
                .enableUpcomingFeature("InferIsolatedConformances"),
                .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
            ]
        ),
        .testTarget(
            name: "ObjectGraphTests",
            dependencies: ["ObjectGraph", .product(name: "GRDB", package: "GRDB.swift")]
        ),
    ]
)
