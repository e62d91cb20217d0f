import Foundation

/// The language a snippet is written in. It decides the highlighting, the raw view's content type
/// and the download's file extension. Stored as its raw value, so predicates can filter on it.
public enum CodingLanguage: String, Codable, CaseIterable, Sendable, Comparable {
    case plaintext, swift, python, javascript, typescript, java, kotlin, c, cpp, csharp, go, rust, ruby, php
    case html, css, sql, shell, json, yaml, markdown, xml, objectivec, scala, dart, lua, perl, r, haskell, dockerfile

    public var displayName: String {
        switch self {
        case .plaintext: "Plain text"
        case .swift: "Swift"
        case .python: "Python"
        case .javascript: "JavaScript"
        case .typescript: "TypeScript"
        case .java: "Java"
        case .kotlin: "Kotlin"
        case .c: "C"
        case .cpp: "C++"
        case .csharp: "C#"
        case .go: "Go"
        case .rust: "Rust"
        case .ruby: "Ruby"
        case .php: "PHP"
        case .html: "HTML"
        case .css: "CSS"
        case .sql: "SQL"
        case .shell: "Shell"
        case .json: "JSON"
        case .yaml: "YAML"
        case .markdown: "Markdown"
        case .xml: "XML"
        case .objectivec: "Objective-C"
        case .scala: "Scala"
        case .dart: "Dart"
        case .lua: "Lua"
        case .perl: "Perl"
        case .r: "R"
        case .haskell: "Haskell"
        case .dockerfile: "Dockerfile"
        }
    }

    /// The extension a downloaded snippet gets (without the dot).
    public var fileExtension: String {
        switch self {
        case .plaintext: "txt"
        case .swift: "swift"
        case .python: "py"
        case .javascript: "js"
        case .typescript: "ts"
        case .java: "java"
        case .kotlin: "kt"
        case .c: "c"
        case .cpp: "cpp"
        case .csharp: "cs"
        case .go: "go"
        case .rust: "rs"
        case .ruby: "rb"
        case .php: "php"
        case .html: "html"
        case .css: "css"
        case .sql: "sql"
        case .shell: "sh"
        case .json: "json"
        case .yaml: "yaml"
        case .markdown: "md"
        case .xml: "xml"
        case .objectivec: "m"
        case .scala: "scala"
        case .dart: "dart"
        case .lua: "lua"
        case .perl: "pl"
        case .r: "r"
        case .haskell: "hs"
        case .dockerfile: "Dockerfile"
        }
    }

    /// The MIME type of a download. The raw view serves every language as `text/plain` (so that a
    /// browser shows it rather than running it), except JSON, which browsers display safely.
    public var mimeType: String {
        switch self {
        case .plaintext, .c, .cpp, .csharp, .go, .rust, .kotlin, .scala, .dart, .lua, .perl, .r, .haskell,
             .objectivec, .swift, .dockerfile:
            "text/plain"
        case .python: "text/x-python"
        case .javascript: "text/javascript"
        case .typescript: "application/typescript"
        case .java: "text/x-java-source"
        case .ruby: "text/x-ruby"
        case .php: "application/x-httpd-php"
        case .html: "text/html"
        case .css: "text/css"
        case .sql: "application/sql"
        case .shell: "application/x-sh"
        case .json: "application/json"
        case .yaml: "application/yaml"
        case .markdown: "text/markdown"
        case .xml: "application/xml"
        }
    }

    /// The content type of the raw view: never one a browser would render or run.
    public var rawContentType: String {
        self == .json ? "application/json; charset=utf-8" : "text/plain; charset=utf-8"
    }

    public static func < (lhs: CodingLanguage, rhs: CodingLanguage) -> Bool {
        lhs.displayName.localizedCaseInsensitiveCompare(rhs.displayName) == .orderedAscending
    }

    /// Every language by display name, sorted once: a localized comparison creates a locale on each
    /// call, and sorting the languages for every list page cost a tenth of preparing it.
    public static let allCasesByName: [CodingLanguage] = allCases.sorted()
}
