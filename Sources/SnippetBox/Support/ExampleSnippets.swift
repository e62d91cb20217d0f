import Foundation
import ObjectGraph

/// A few snippets to try SnippetBox with, offered on an empty store.
enum ExampleSnippets {
    static func insert(into context: ModelContext) throws {
        let palette = ColorData.palette
        let tags = ["swift", "sql", "shell", "snippet-box"].enumerated().map { index, name in
            Tag(name: name, color: palette[index * 2 % palette.count])
        }
        let work = Folder(name: "Work")
        let home = Folder(name: "Home lab")

        let fetch = Snippet(title: "Fetch a page of models", code: """
            var descriptor = FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\\.updatedAt, order: .reverse)])
            descriptor.fetchLimit = 50
            let page = try context.fetch(descriptor)
            """, notes: "Sorted newest first. See the **FetchDescriptor** docs.", language: .swift)
        fetch.tags = [tags[0], tags[3]]
        fetch.folder = work
        fetch.isFavorite = true

        let query = Snippet(title: "Count rows per day", code: """
            SELECT date(created_at) AS day, COUNT(*) AS n
            FROM events
            GROUP BY day
            ORDER BY day DESC; -- newest first
            """, notes: "Works on SQLite and PostgreSQL.", language: .sql)
        query.tags = [tags[1]]
        query.folder = work

        let backup = Snippet(title: "Back up a folder with rsync", code: """
            #!/bin/sh
            # Mirror the snippets' data directory to the NAS
            rsync -av --delete ./data/ nas:/backups/snippetbox/
            """, notes: "Run it from cron:\n\n```\n0 3 * * * /usr/local/bin/backup.sh\n```", language: .shell)
        backup.tags = [tags[2]]
        backup.folder = home

        let hello = Snippet(title: "Hello, world in Python", code: "print(\"Hello, world!\")\n", language: .python)

        for snippet in [fetch, query, backup, hello] {
            snippet.refreshSearchKeywords()
            context.insert(snippet)
        }
    }
}
