import Foundation

/// The data every contender writes: generated once per run, before any timing, so that every
/// contender stores exactly the same rows. Deterministic for a given count.
struct Dataset {
    struct Row {
        let uuid: UUID
        let title: String
        let code: String
        let notes: String
        let language: String
        let isFavorite: Bool
        let createdAt: Double
        let updatedAt: Double
        /// Index into `folders`.
        let folder: Int
        /// Two distinct indexes into `tags`.
        let tags: (Int, Int)
    }

    static let folderNames = ["Work", "Home lab", "Scripts", "Databases", "Frontend", "Interviews", "Snippets to share",
                              "Ops", "Mobile", "Data science", "Archive", "Learning"]
    static let tagNames = ["swift", "sql", "bash", "python", "regex", "git", "docker", "http", "json", "testing",
                           "performance", "security", "css", "async", "cli", "math", "dates", "strings", "files",
                           "network", "ci", "vim", "linux", "macos", "cloud"]
    static let languages = ["plaintext", "swift", "python", "javascript", "typescript", "java", "kotlin", "c", "cpp",
                            "csharp", "go", "rust", "ruby", "php", "html", "css", "sql", "shell", "json", "yaml",
                            "markdown", "xml", "objectivec", "scala", "dart", "lua", "perl", "r", "haskell", "dockerfile"]
    static let words = ["parsing", "caching", "retries", "pagination", "logging", "sorting", "hashing",
                        "streaming", "uploads", "migrations", "search", "auth", "metrics", "backups"]
    /// In the notes of one snippet in 10,000: the rare search word.
    static let rareWord = "zymurgy"
    /// In the code of roughly a third of the snippets: the common search word.
    static let commonWord = "parsing"

    let rows: [Row]

    /// How many snippets mention a word (as a whole word, any case) in title, code or notes.
    func hits(_ word: String) -> Int {
        rows.reduce(0) { count, row in
            let text = (row.title + " " + row.code + " " + row.notes).lowercased()
            let tokens = text.split { !$0.isLetter && !$0.isNumber }
            return count + (tokens.contains { $0 == word } ? 1 : 0)
        }
    }

    init(count: Int) {
        var random = Random(seed: 0xB3AC4)
        let verbs = ["Parse", "Sort", "Fetch", "Cache", "Retry", "Format", "Validate", "Stream", "Hash", "Merge"]
        let nouns = ["dates", "JSON", "rows", "files", "requests", "tokens", "paths", "records", "pages", "events"]
        let templates = [
            "let value = compute(\"%w\", 42) // %w",
            "for item in items where item.%w > 0 { total += item.%w }",
            "if response.status == 200 { return parse(%w) }",
            "# %w: handle the %w case",
            "SELECT id, %w FROM %w WHERE created_at > ? ORDER BY id;",
            "function %w(x) { return x * 2; }",
        ]
        var rows: [Row] = []
        rows.reserveCapacity(count)
        for index in 0..<count {
            let language = Self.languages[random.below(Self.languages.count)]
            var code = ""
            for line in 0..<(1 + random.below(4)) {
                var text = templates[random.below(templates.count)]
                while let range = text.range(of: "%w") {
                    text.replaceSubrange(range, with: Self.words[random.below(Self.words.count)])
                }
                code += (line > 0 ? "\n" : "") + text
            }
            var notes = random.below(3) == 0 ? "Used for \(Self.words[random.below(Self.words.count)]) in production." : ""
            if index % 10_000 == 5_000 { notes += " Brewing notes: \(Self.rareWord)." }
            let first = random.below(Self.tagNames.count)
            let second = (first + 1 + random.below(Self.tagNames.count - 1)) % Self.tagNames.count
            let created = 1_600_000_000 + Double(random.below(150_000_000))
            rows.append(Row(
                uuid: random.uuid(),
                title: "\(verbs[random.below(verbs.count)]) \(nouns[random.below(nouns.count)]) in \(language) #\(index + 1)",
                code: code, notes: notes, language: language, isFavorite: random.below(10) == 0,
                createdAt: created, updatedAt: created + Double(random.below(10_000_000)),
                folder: Self.folderIndex(of: index, random: random.below(Self.folderNames.count)), tags: (first, second)))
        }
        self.rows = rows
    }
}

/// SplitMix64: a small repeatable generator.
struct Random {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func uuid() -> UUID {
        let a = next(), b = next()
        var bytes = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 { bytes[i] = UInt8(truncatingIfNeeded: a >> (8 * UInt64(i))) }
        for i in 0..<8 { bytes[8 + i] = UInt8(truncatingIfNeeded: b >> (8 * UInt64(i))) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
