import Foundation

/// One library under test. Each round opens a fresh store file through `open`, then runs the
/// workloads in order on it; the runner times every call.
protocol Contender: AnyObject {
    static var name: String { get }
    /// Opens a new, empty store at `path` (WAL mode) and creates the schema; not timed.
    /// `fullText` asks for the variant with a full-text index over title, code and notes.
    init(path: String, fullText: Bool) async throws

    /// Workload 1: every row, its folder and two tags, in one transaction. With `fullText`, the
    /// full-text index is filled too (the contender's usual way).
    func insert(_ data: Dataset) async throws
    /// Workload 2a: every snippet, every attribute read. Returns a checksum so nothing is skipped.
    func fetchAll() async throws -> Int
    /// Workload 2b: the 50 most recently updated snippets with their tags. Returns tag count.
    func fetchPageWithTags() async throws -> Int
    /// Workload 3: folder, tag, language and favourite filter, by update date, 50 at most.
    func filtered(folder: String, tag: String, language: String) async throws -> Int
    /// Workload 4a: the 10,000 oldest snippets get a new title and update date, saved at once.
    func update10k() async throws -> Int
    /// Workload 4b: deletes the folder "Old" and, by cascade, its snippets and their tag links.
    func deleteFolderCascade() async throws -> Int
    /// Workload 5: a ranked full-text search: total count plus the best 20 with excerpts. nil when
    /// the contender has no full-text search.
    func search(_ word: String) async throws -> Int?
    func close() async throws
}

extension Dataset {
    /// The folder deleted by workload 4b holds every 100th snippet.
    static let cascadeFolder = "Old"
    static var allFolderNames: [String] { folderNames + [cascadeFolder] }
    static func folderIndex(of row: Int, random: Int) -> Int { row % 100 == 7 ? folderNames.count : random }

    /// Filter combinations for workload 3, used in rotation.
    static let filterCases: [(folder: String, tag: String, language: String)] = (0..<24).map { index in
        (folderNames[index % folderNames.count], tagNames[(index * 7) % tagNames.count], languages[(index * 11) % languages.count])
    }
}
