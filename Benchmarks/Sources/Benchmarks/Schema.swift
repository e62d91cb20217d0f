/// The tables of the raw SQLite, GRDB and Fluent contenders: the same columns ObjectGraph makes for
/// its models (UUID as 16 bytes, dates as seconds since 1970, the language as its name, an indexed
/// folder key, a join table keyed by both sides with an index on the tag side, unique uuid and tag
/// name). Fluent's join table needs an `id` of its own; its pair is unique instead of the key.
/// Every contender also has one index that fits the filtered query (workload 3): folder, language,
/// favourite, then the update date it sorts by — the index an app with that filter form would make
/// (SnippetBox's own covering indexes are wider). ObjectGraph's models declare it with `#Index`.
enum SQLSchema {
    static func statements(fluentPivot: Bool, fullText: Bool) -> [String] {
        var list = [
            "CREATE TABLE folders (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL)",
            "CREATE TABLE tags (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL)",
            "CREATE UNIQUE INDEX tags_name ON tags(name)",
            """
            CREATE TABLE snippets (id INTEGER PRIMARY KEY AUTOINCREMENT, uuid BLOB NOT NULL, title TEXT NOT NULL,
              code TEXT NOT NULL, notes TEXT NOT NULL, language TEXT NOT NULL, isFavorite INTEGER NOT NULL,
              createdAt REAL NOT NULL, updatedAt REAL NOT NULL, folder_id INTEGER)
            """,
            "CREATE UNIQUE INDEX snippets_uuid ON snippets(uuid)",
            "CREATE INDEX snippets_folder ON snippets(folder_id)",
            "CREATE INDEX snippets_filter ON snippets(folder_id, language, isFavorite, updatedAt)",
            fluentPivot
                ? "CREATE TABLE snippet_tags (id INTEGER PRIMARY KEY AUTOINCREMENT, snippet_id INTEGER NOT NULL, tag_id INTEGER NOT NULL, UNIQUE (snippet_id, tag_id))"
                : "CREATE TABLE snippet_tags (snippet_id INTEGER NOT NULL, tag_id INTEGER NOT NULL, PRIMARY KEY (snippet_id, tag_id))",
            "CREATE INDEX snippet_tags_tag ON snippet_tags(tag_id)",
        ]
        if fullText {
            list.append("""
                CREATE VIRTUAL TABLE snippets_fts USING fts5(title, code, notes, content='snippets', content_rowid='id',
                  tokenize='unicode61 remove_diacritics 2')
                """)
        }
        return list
    }

    static let snippetColumns = "s.id, s.uuid, s.title, s.code, s.notes, s.language, s.isFavorite, s.createdAt, s.updatedAt, s.folder_id"

    static let pageSQL = "SELECT \(snippetColumns) FROM snippets s ORDER BY s.updatedAt DESC LIMIT 50"

    static func pageTagsSQL(count: Int) -> String {
        "SELECT st.snippet_id, t.id, t.name FROM snippet_tags st JOIN tags t ON t.id = st.tag_id WHERE st.snippet_id IN ("
            + Array(repeating: "?", count: count).joined(separator: ", ") + ")"
    }

    static let filteredSQL = """
        SELECT \(snippetColumns) FROM snippets s
        WHERE s.folder_id IN (SELECT id FROM folders WHERE name = ?)
          AND EXISTS (SELECT 1 FROM snippet_tags st JOIN tags t ON t.id = st.tag_id WHERE st.snippet_id = s.id AND t.name = ?)
          AND s.language = ? AND s.isFavorite = 1
        ORDER BY s.updatedAt DESC LIMIT 50
        """

    static let oldestSQL = "SELECT s.id, s.title FROM snippets s ORDER BY s.createdAt LIMIT 10000"
    static let updateSQL = "UPDATE snippets SET title = ?, updatedAt = ? WHERE id = ?"
    static let cascadeSQL = [
        "DELETE FROM snippet_tags WHERE snippet_id IN (SELECT id FROM snippets WHERE folder_id = ?)",
        "DELETE FROM snippets WHERE folder_id = ?",
        "DELETE FROM folders WHERE id = ?",
    ]

    static let searchCountSQL = "SELECT COUNT(*) FROM snippets_fts JOIN snippets s ON s.id = snippets_fts.rowid WHERE snippets_fts MATCH ?"
    static let searchSQL = """
        SELECT bm25(snippets_fts, 10, 1, 2),
          snippet(snippets_fts, 0, char(57344), char(57345), '…', 24),
          snippet(snippets_fts, 1, char(57344), char(57345), '…', 24),
          snippet(snippets_fts, 2, char(57344), char(57345), '…', 24),
          \(snippetColumns)
        FROM snippets_fts JOIN snippets s ON s.id = snippets_fts.rowid WHERE snippets_fts MATCH ?
        ORDER BY 1, s.id LIMIT 20
        """
    static let rebuildFTS = "INSERT INTO snippets_fts(snippets_fts) VALUES('rebuild')"

    /// The FTS5 query for one word, quoted as ObjectGraph quotes what a person types.
    static func match(_ word: String) -> String { "\"" + word.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
}
