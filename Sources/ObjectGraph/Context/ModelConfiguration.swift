import Foundation

/// Where and how a ``ModelContainer`` keeps its store, with SwiftData's initializers.
///
/// ```swift
/// let onDisk = ModelConfiguration(url: URL(filePath: "data/snippets.store"))
/// let forTests = ModelConfiguration(isStoredInMemoryOnly: true)
/// ```
///
/// Without a URL the store is `data/default.store` under the current working directory.
public struct ModelConfiguration: Hashable, Identifiable, Sendable {
    public var name: String
    public var schema: Schema?
    public var url: URL
    public var isStoredInMemoryOnly: Bool
    public var allowsSave: Bool
    public var groupContainer: GroupContainer
    public var cloudKitDatabase: CloudKitDatabase
    /// ObjectGraph's own: how much memory, in bytes, the rows of recent fetches may hold while the
    /// store keeps them to answer the same fetch again, until a save writes a table or column they
    /// read (a write by another process drops them all). A result heavier than a sixteenth of it is
    /// not kept. 0 turns keeping rows off, so that every fetch reads the store (the store benchmark
    /// does, to compare queries with raw SQLite's). Counts and search ranks are kept regardless.
    public var fetchedRowCacheBytes = 16 * 1024 * 1024
    /// Distinguishes in-memory configurations, which all share the `/dev/null` URL.
    let memoryStoreKey: UUID?
    /// The store file a name gave, and the URL made from it: a container checks that name (a `/`
    /// in it would put the store in another folder) as long as `url` is still that URL.
    let storeFileNamed: (fileName: String, url: URL)?

    public var id: URL { url }

    /// The store used when a configuration names no URL: `data/default.store` in the working directory.
    public static var defaultStoreURL: URL {
        URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
            .appendingPathComponent("data", isDirectory: true)
            .appendingPathComponent("default.store")
    }

    public init(
        _ name: String? = nil,
        schema: Schema? = nil,
        isStoredInMemoryOnly: Bool = false,
        allowsSave: Bool = true,
        groupContainer: GroupContainer = .automatic,
        cloudKitDatabase: CloudKitDatabase = .automatic
    ) {
        self.name = name ?? "default"
        self.schema = schema
        self.isStoredInMemoryOnly = isStoredInMemoryOnly
        self.allowsSave = allowsSave
        self.groupContainer = groupContainer
        self.cloudKitDatabase = cloudKitDatabase
        if isStoredInMemoryOnly {
            self.url = URL(fileURLWithPath: "/dev/null")
            self.memoryStoreKey = UUID()
            self.storeFileNamed = nil
        } else {
            let fileName = (name.map { $0 + ".store" }) ?? "default.store"
            self.url = Self.defaultStoreURL.deletingLastPathComponent().appendingPathComponent(fileName)
            self.memoryStoreKey = nil
            self.storeFileNamed = (fileName, url)
        }
    }

    public init(
        _ name: String? = nil,
        schema: Schema? = nil,
        url: URL,
        allowsSave: Bool = true,
        cloudKitDatabase: CloudKitDatabase = .automatic
    ) {
        self.name = name ?? url.deletingPathExtension().lastPathComponent
        self.schema = schema
        self.url = url
        self.isStoredInMemoryOnly = false
        self.allowsSave = allowsSave
        self.groupContainer = .automatic
        self.cloudKitDatabase = cloudKitDatabase
        self.memoryStoreKey = nil
        self.storeFileNamed = nil
    }

    @_disfavoredOverload
    public init(for forTypes: any PersistentModel.Type..., isStoredInMemoryOnly: Bool = false) {
        self.init(schema: Schema(forTypes), isStoredInMemoryOnly: isStoredInMemoryOnly)
    }

    /// The spelling of SwiftData's first beta, still found in tutorials.
    public init(inMemory: Bool) {
        self.init(isStoredInMemoryOnly: inMemory)
    }

    /// Kept for source compatibility; ObjectGraph has no app-group containers.
    public enum GroupContainer: Hashable, Sendable {
        case automatic, none
        case identifier(String)
    }

    /// Kept for source compatibility; ObjectGraph does not sync with CloudKit.
    public enum CloudKitDatabase: Hashable, Sendable {
        case automatic, none
        case `private`(String)
    }

    /// The bytes a store's file name leaves for what ObjectGraph adds to it for the files beside it:
    /// SQLite's `-wal`, `-shm` and `-journal`, `.external` (the folder of external files), a
    /// migration's `.migrating-journal` and `.1.0.0-20261201T060000Z.backup` (30 bytes).
    static let storeFileNameSuffixBytes = 40

    /// Why the store file this configuration's name gives cannot be made, as SwiftData tells it: a name
    /// with a `/` (which would put the store in another folder, `..` included) or a NUL character, or
    /// one that leaves the files kept beside the store longer than a file name may be (255 bytes).
    var storeFileNameError: SwiftDataError? {
        guard let storeFileNamed, storeFileNamed.url == url else { return nil }
        let fileName = storeFileNamed.fileName
        if fileName.contains("/") || fileName.utf8.contains(0) {
            return SwiftDataError(
                .configurationFileNameContainsInvalidCharacters,
                "the ModelConfiguration named \"\(name)\" would store to the file \"\(fileName)\", and a file name cannot hold "
                    + "a \"/\" or a NUL character: give a plain name, or a url")
        }
        let longest = 255 - Self.storeFileNameSuffixBytes
        if fileName.utf8.count > longest {
            return SwiftDataError(
                .configurationFileNameTooLong,
                "the ModelConfiguration named \"\(name.prefix(40))…\" would store to a file name of \(fileName.utf8.count) bytes; "
                    + "\(longest) is the most that leaves room for the files beside the store (a file name has at most 255): "
                    + "give a shorter name, or a url")
        }
        return nil
    }

    public static func == (lhs: ModelConfiguration, rhs: ModelConfiguration) -> Bool {
        lhs.name == rhs.name && lhs.url == rhs.url && lhs.memoryStoreKey == rhs.memoryStoreKey
            && lhs.allowsSave == rhs.allowsSave
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(url)
        hasher.combine(memoryStoreKey)
    }
}
