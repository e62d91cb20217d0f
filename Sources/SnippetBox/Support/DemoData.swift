import Foundation
import ObjectGraph

/// Fills a store with realistic snippets, for demos and benchmarks: `swift run snippetbox seed 100000`.
///
/// Languages, folders and tags vary; sizes run from one line to 2,000 (most are short, as real
/// snippets are); one snippet in twenty has a small image. The same count gives the same data.
public enum DemoData {
    /// Fills the store at `url` (made if missing) and closes it, as `snippetbox seed N` does.
    ///
    /// Closing is the point: SQLite folds the write-ahead log into the store file when its last
    /// connection closes, and a process that exits with the store open leaves the log behind (tens
    /// of megabytes at 100,000 snippets), which every read of the next process then goes through
    /// until enough writes check it in: the first list page after `seed 100000` took 44 ms, against
    /// 17 ms on the same store with its log checked in.
    ///
    /// The full-text index is merged into one segment once filled: saved in batches, it is left in
    /// many, which every search then looks its words up in (see `ModelContainer.optimizeSearchIndexes`).
    public static func seed(storeAt url: URL, count: Int, batchSize: Int = 5_000, progress: (Int) -> Void = { _ in }) throws {
        let container = try SnippetStore.openContainer(at: url)
        try fill(container, count: count, batchSize: batchSize, progress: progress)
        try container.optimizeSearchIndexes()
    }

    public static func fill(_ container: ModelContainer, count: Int, batchSize: Int = 5_000,
                            progress: (Int) -> Void = { _ in }) throws {
        var random = SplitMix(seed: 0x5EED)
        let setup = ModelContext(container)
        let folders = ["Work", "Home lab", "Scripts", "Databases", "Frontend", "Interviews", "Snippets to share",
                       "Ops", "Mobile", "Data science", "Archive", "Learning"].map { Folder(name: $0) }
        let tagNames = ["swift", "sql", "bash", "python", "regex", "git", "docker", "http", "json", "testing",
                        "performance", "security", "css", "async", "cli", "math", "dates", "strings", "files",
                        "network", "ci", "vim", "linux", "macos", "cloud"]
        let tags = tagNames.enumerated().map { Tag(name: $1, color: ColorData.palette[$0 % ColorData.palette.count]) }
        folders.forEach { setup.insert($0) }
        tags.forEach { setup.insert($0) }
        try setup.save()
        let folderIDs = folders.map(\.persistentModelID)
        let tagIDs = tags.map(\.persistentModelID)

        var made = 0
        while made < count {
            let context = ModelContext(container)
            let batchFolders = folderIDs.compactMap { context.model(for: $0) as? Folder }
            let batchTags = tagIDs.compactMap { context.model(for: $0) as? Tag }
            for _ in 0..<min(batchSize, count - made) {
                let language = CodingLanguage.allCases[Int(random.next() % UInt64(CodingLanguage.allCases.count))]
                let lines = lineCount(&random)
                let snippet = Snippet(
                    title: title(made, language: language, &random),
                    code: code(lines: lines, language: language, &random),
                    notes: random.next() % 3 == 0 ? "Used for \(Self.words[Int(random.next() % UInt64(Self.words.count))]) in production." : "",
                    language: language)
                snippet.isFavorite = random.next() % 10 == 0
                let created = Date(timeIntervalSince1970: 1_600_000_000 + Double(random.next() % 150_000_000))
                snippet.createdAt = created
                snippet.updatedAt = created.addingTimeInterval(Double(random.next() % 10_000_000))
                if random.next() % 8 != 0 { snippet.folder = batchFolders[Int(random.next() % UInt64(batchFolders.count))] }
                let tagCount = Int(random.next() % 4)
                snippet.tags = (0..<tagCount).map { _ in batchTags[Int(random.next() % UInt64(batchTags.count))] }
                    .reduce(into: [Tag]()) { list, tag in if !list.contains(where: { $0 === tag }) { list.append(tag) } }
                if random.next() % 20 == 0 {
                    snippet.imageData = sampleImage
                    snippet.imageContentType = "image/png"
                }
                snippet.refreshSearchKeywords()
                context.insert(snippet)
                made += 1
            }
            try context.save()
            progress(made)
        }
    }

    private static let words = ["parsing", "caching", "retries", "pagination", "logging", "sorting", "hashing",
                                "streaming", "uploads", "migrations", "search", "auth", "metrics", "backups"]

    private static func title(_ index: Int, language: CodingLanguage, _ random: inout SplitMix) -> String {
        let verb = ["Parse", "Sort", "Fetch", "Cache", "Retry", "Format", "Validate", "Stream", "Hash", "Merge"]
        let noun = ["dates", "JSON", "rows", "files", "requests", "tokens", "paths", "records", "pages", "events"]
        return "\(verb[Int(random.next() % 10)]) \(noun[Int(random.next() % 10)]) in \(language.displayName) #\(index + 1)"
    }

    /// Mostly short snippets, a long tail up to 2,000 lines.
    private static func lineCount(_ random: inout SplitMix) -> Int {
        switch random.next() % 100 {
        case 0..<60: return 1 + Int(random.next() % 15)
        case 60..<90: return 15 + Int(random.next() % 85)
        case 90..<99: return 100 + Int(random.next() % 400)
        default: return 500 + Int(random.next() % 1_501)
        }
    }

    private static func code(lines: Int, language _: CodingLanguage, _ random: inout SplitMix) -> String {
        let templates = [
            "let value = compute(\"%w\", 42) // %w",
            "for item in items where item.%w > 0 { total += item.%w }",
            "if response.status == 200 { return parse(%w) }",
            "# %w: handle the %w case",
            "SELECT id, %w FROM %w WHERE created_at > ? ORDER BY id;",
            "function %w(x) { return x * 2; }",
        ]
        var text = ""
        text.reserveCapacity(lines * 40)
        for line in 0..<lines {
            var template = templates[Int(random.next() % UInt64(templates.count))]
            while let range = template.range(of: "%w") {
                template.replaceSubrange(range, with: words[Int(random.next() % UInt64(words.count))])
            }
            text += (line > 0 ? "\n" : "") + template
        }
        return text
    }

    private static let sampleImage = Data([
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4,
        0x89, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0x60, 0x60, 0x60, 0xF8,
        0x0F, 0x00, 0x01, 0x04, 0x01, 0x00, 0x5F, 0x3C, 0xE5, 0x9B, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45,
        0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ])
}

/// A small, repeatable random generator, so that demo data is the same from run to run (and the
/// tests' random inputs too).
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
