import Foundation
import NIOCore
import ObjectGraph
import SnippetBox
import Vapor

/// The store the app benchmarks use: the app's own demo data (`DemoData.fill`), in `directory`.
enum DemoStore {
    /// Fills a store with `snippetbox seed`, in a process of its own, as a user would before starting
    /// the server. (Seeding in this process left its page benchmark two to three times slower than the
    /// same store opened afresh, which is not what a server meets; the cause is noted in the README.)
    static func seed(directory: URL, count: Int, binary: URL, results: Results) throws -> (folders: [String], tags: [String]) {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        print("Seeding \(count) demo snippets with `snippetbox seed`…")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["seed", String(count)]
        var environment = ProcessInfo.processInfo.environment
        environment["DATA_DIR"] = directory.path
        environment["LOG_LEVEL"] = "warning"
        process.environment = environment
        let start = now()
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("snippetbox seed \(count) exited with status \(process.terminationStatus)")
        }
        results.add("6 app", "seed \(count / 1000)k demo snippets (snippetbox seed: DemoData.fill, batches of 5,000)", "ObjectGraph", .once, [now() - start])
        return try choices(in: directory)
    }

    /// The folders and tags of a seeded store, whose ids the benchmark's URLs filter by.
    static func choices(in directory: URL) throws -> (folders: [String], tags: [String]) {
        let container = try SnippetStore.openContainer(at: directory.appendingPathComponent("snippetbox.store"))
        let context = ModelContext(container)
        let folders = try context.fetch(FetchDescriptor<Folder>(sortBy: [SortDescriptor(\.name)])).map(\.uuid.uuidString)
        let tags = try context.fetch(FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.normalizedName)])).map(\.uuid.uuidString)
        return (folders, tags)
    }
}

/// Issue 6: the app's list page, in-process (no network): requests go straight to the responder.
struct ListPageBenchmark {
    let repoRoot: URL
    let dataDirectory: URL
    let folders: [String]
    let tags: [String]
    let repetitions: Int
    let results: Results

    enum Kind: String { case browse = "browse", rare = "search, rare word", common = "search, common word" }

    var urls: [(String, Kind)] {
        let folder = folders[0], tag = tags[0], tag2 = tags[1 % tags.count]
        return [
            ("/snippets", .browse),
            ("/snippets?folder=\(folder)", .browse),
            ("/snippets?folder=unfiled", .browse),
            ("/snippets?tag=\(tag)", .browse),
            ("/snippets?tag=\(tag)&tag=\(tag2)&tagMode=all", .browse),
            ("/snippets?tag=\(tag)&tagMode=none", .browse),
            ("/snippets?language=swift", .browse),
            ("/snippets?favorites=1", .browse),
            ("/snippets?image=1", .browse),
            ("/snippets?createdFrom=2021-01-01&createdTo=2021-12-31", .browse),
            ("/snippets?sort=title&order=asc&size=100", .browse),
            ("/snippets?folder=\(folder)&language=swift&sort=created", .browse),
            ("/snippets?folder=\(folder)&tag=\(tag)&language=python&favorites=1", .browse),
            ("/snippets?page=2000", .browse),
            ("/snippets?q=4242", .rare),
            ("/snippets?q=77777", .rare),
            ("/snippets?q=4242&folder=\(folder)&favorites=1", .rare),
            ("/snippets?q=parsing", .common),
            ("/snippets?q=production", .common),
            ("/snippets?q=fetch", .common),
            ("/snippets?q=parsing&language=swift", .common),
            ("/snippets?q=caching&tag=\(tag)&favorites=1", .common),
        ]
    }

    /// Filters combined per folder, tag, language and year, none of them among `urls`' (which use the
    /// first folder and the first two tags): a folder with an image, a folder with a tag, two tags
    /// that must both match, a tag left out with favourites only, half a year, a language with an
    /// image, favourites with an image a page deeper each time.
    var combinationURLs: [String] {
        let languages = CodingLanguage.allCases.map(\.rawValue)
        return (1..<max(2, min(12, folders.count))).flatMap { index -> [String] in
            let folder = folders[index % folders.count]
            let tag = tags[(index + 1) % tags.count], otherTag = tags[(index + 13) % tags.count]
            return [
                "/snippets?folder=\(folder)&image=1",
                "/snippets?folder=\(folder)&tag=\(tag)",
                "/snippets?tag=\(tag)&tag=\(otherTag)&tagMode=all",
                "/snippets?tag=\(otherTag)&tagMode=none&favorites=1",
                "/snippets?createdFrom=\(2010 + index)-01-01&createdTo=\(2010 + index)-06-30",
                "/snippets?language=\(languages[(index + 2) % languages.count])&image=1",
                "/snippets?favorites=1&image=1&page=\(index)",
            ]
        }
    }

    /// The app as `snippetbox serve` sets it up, on the benchmark's data, booted.
    private func makeApp() async throws -> Application {
        setenv("DATA_DIR", dataDirectory.path, 1)
        if getenv("ADMIN_PASSWORD") == nil { setenv("ADMIN_PASSWORD", benchmarkAdminPassword, 1) }
        let settings = try AppSettings.fromEnvironment()
        let app = try await Application.make(.production)
        app.directory = DirectoryConfiguration(workingDirectory: repoRoot.path + "/")
        do {
            try configure(app, settings: settings)
            // As `snippetbox` does at start: the admin account from ADMIN_PASSWORD, when there is none.
            try await createAdminFromSettings(app)
            try await app.asyncBoot()
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        return app
    }

    /// Runs `body` with a client of a fresh app (`makeApp`) and its session cookie, and shuts the app
    /// down after, whether `body` threw or not.
    private func withApp(_ body: (InProcessClient, String?) async throws -> Void) async throws {
        let app = try await makeApp()
        do {
            let client = InProcessClient(app: app)
            try await body(client, try await client.sessionCookie())
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }

    func run() async throws {
        // The code the pages run, the templates they render and the store's files read once, so that
        // they are in the OS's file cache when the library opens, as they are for a server that has
        // been running (and for a run of the page benchmark alone, whose store was just copied). The
        // machine the figures come from pages out file pages left untouched for about a minute (see
        // `ProgramFiles`), and in a full run the store workloads run for minutes in this process
        // before it: 327 of the store's 445 MB were found cached after them once, the first page and
        // the year-2021 page read 2 and 4 MB of mapped code back from the disk (4,192 and 8,424
        // blocks, with major faults), and first pages after the library opened took 18–52 ms, once
        // 1.65 s, against 10–16 ms in a run of the page benchmark alone. The store read from the disk
        // is measured on its own at the end (`measureFirstVisitsFromTheDisk`). The store is read last,
        // so that its pages are the newest.
        try ProgramFiles.readIntoCache(templates: repoRoot.appendingPathComponent("Views"))
        try StoreFiles.readIntoCache(in: dataDirectory)
        try await withApp { client, cookie in
            let app = client.app
            print("List page, in-process: \(urls.count) URLs × \(repetitions)\(cookie == nil ? "" : " (logged in)")")
            // The first visit of each URL, timed, then two more to warm: a first visit counts and ranks
            // what no page has asked for yet (right after the store opened, every count it shows). The
            // library is opened first, and timed on its own: opening an older store builds its new
            // indexes, and opening any reads the groups the first page counts and the text lengths a
            // search ranks by (`SnippetStore.prepareFirstPages`).
            try openLibrary(in: app, reportedAs: "open the library (once per process: migration if any, counts prepared)")
            // What the process and the machine spent during each is kept for the slowest (see
            // `ResourceUsage`): a first visit far slower than its kind has happened in full runs only.
            var firstVisits: [(url: String, kind: Kind, seconds: Double, usage: String)] = []
            for (url, kind) in urls {
                let usageBefore = ResourceUsage.current()
                let start = now()
                _ = try await client.get(url, cookie: cookie)
                let seconds = now() - start
                firstVisits.append((url, kind, seconds, ResourceUsage.current().described(since: usageBefore)))
                for _ in 0..<2 { _ = try await client.get(url, cookie: cookie) }
            }
            // By kind too, as the searches are reported, so that a common word's first ranking does not
            // hide how the browse URLs fare; and the slowest, by name, which the percentiles do not say.
            reportFirstVisits(firstVisits.map { ($0.kind, $0.seconds) }, inAll: "in turn, after the store opened", byKind: "")
            if let first = firstVisits.first {
                results.add("6 list page", "first page after the library opened: GET \(Self.shortened(first.url))", "app, in-process", .once, [first.seconds],
                            note: first.usage)
            }
            let slowest = firstVisits.sorted(by: { $0.seconds > $1.seconds }).prefix(5)
            for visit in slowest {
                results.add("6 list page", "first visit of GET \(Self.shortened(visit.url))", "app, in-process", .once, [visit.seconds],
                            note: "one of the 5 slowest first visits; \(visit.usage)")
            }
            // Each common word's first search on its own too: their median is the one most often missed.
            for visit in firstVisits where visit.kind == .common && !slowest.contains(where: { $0.url == visit.url }) {
                results.add("6 list page", "first visit of GET \(Self.shortened(visit.url))", "app, in-process", .once, [visit.seconds],
                            note: Kind.common.rawValue)
            }
            var samples: [String: [Double]] = [:]
            for _ in 0..<repetitions {
                for (url, _) in urls {
                    samples[url, default: []].append(try await client.timedPage(url, cookie: cookie))
                }
            }
            var byKind: [Kind: [Double]] = [:]
            for (url, kind) in urls {
                results.add("6 list page", "GET \(Self.shortened(url))", "app, in-process", .perQuery, samples[url]!, note: kind.rawValue)
                byKind[kind, default: []] += samples[url]!
            }
            for kind in [Kind.browse, .rare, .common] {
                results.add("6 list page", "list page: all \(kind.rawValue) URLs", "app, in-process", .perQuery, byKind[kind] ?? [])
            }
            results.add("6 list page", "list page: every URL", "app, in-process", .perQuery, urls.flatMap { samples[$0.0]! })

            // ObjectGraph keeps counts until the store changes what they read, so the loop above mostly
            // reads them from memory. Here every request follows a write. First the writes a user makes
            // in the app, through its own container, in turn: a favourite toggled; a snippet's title and
            // code edited (which rewrites its full-text entry); a tag added or taken off (which changes
            // the counts per tag and the snippet's search keywords); the snippet moved to the trash or
            // back (which changes every count).
            guard let admin = app.accounts.account(username: "admin") else { throw BenchmarkError("no admin account") }
            let library = try app.libraries.store(for: admin)
            var writes = 0
            // The newest snippet, found once: sorting every snippet by date for each write (no index
            // serves it with the trash included) took 20 ms, which the saves' timing would have counted.
            let edited = try await library.read { context in
                var firstPage = FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.updatedAt, order: .reverse)])
                firstPage.fetchLimit = 1
                guard let snippet = try context.fetch(firstPage).first else { throw BenchmarkError("the store has no snippet") }
                return snippet.persistentModelID
            }
            try await measureAfterWrites("after a save in the app", client: client, cookie: cookie) {
                writes += 1
                let kind = writes % 4
                try await library.write { context in
                    guard let snippet = try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.persistentModelID == edited })).first else {
                        throw BenchmarkError("the edited snippet is gone")
                    }
                    switch kind {
                    case 0:
                        snippet.isFavorite.toggle()
                    case 1:
                        snippet.retitle(snippet.title + "!")
                        snippet.code += "\n// edited"
                        snippet.updatedAt = .now
                    case 2:
                        var byName = FetchDescriptor<Tag>(sortBy: [SortDescriptor(\.normalizedName)])
                        byName.fetchLimit = 1
                        guard let tag = try context.fetch(byName).first else { throw BenchmarkError("the store has no tag") }
                        if let position = snippet.tags.firstIndex(where: { $0 === tag }) {
                            snippet.tags.remove(at: position)
                        } else {
                            snippet.tags.append(tag)
                        }
                        snippet.refreshSearchKeywords()
                    default:
                        snippet.deletedAt = snippet.deletedAt == nil ? .now : nil
                    }
                }
            }

            // Then only the writes that leave the full-text index alone (a favourite toggled, the snippet
            // moved to the trash or back), as when a user sorts through a list: counts and search ranks
            // follow them, so no URL should count or rank again.
            // Each URL once first, unmeasured: the pass before left searches to rank again after its
            // text edits, which this pass is not about.
            for (url, _) in urls { _ = try await client.get(url, cookie: cookie) }
            var triage = 0
            try await measureAfterWrites("after a favourite or the trash in the app", client: client, cookie: cookie) {
                triage += 1
                let favourite = triage % 2 == 0
                try await library.write { context in
                    guard let snippet = try context.fetch(FetchDescriptor<Snippet>(predicate: #Predicate { $0.persistentModelID == edited })).first else {
                        throw BenchmarkError("the edited snippet is gone")
                    }
                    if favourite {
                        snippet.isFavorite.toggle()
                    } else {
                        snippet.deletedAt = snippet.deletedAt == nil ? .now : nil
                    }
                }
            }

            // Then a write by another process (here another container on the same file, which another
            // process would have): it cannot say what it wrote, so each page computes all its counts afresh.
            let writer = ModelContext(try SnippetStore.openContainer(at: dataDirectory.appendingPathComponent("snippetbox.store")))
            var firstPage = FetchDescriptor<Snippet>()
            firstPage.fetchLimit = 1
            guard let toggled = try writer.fetch(firstPage).first else { throw BenchmarkError("the store has no snippet") }
            try await measureAfterWrites("after another process's write", client: client, cookie: cookie) {
                toggled.isFavorite.toggle()
                try writer.save()
            }

            // Last, first visits of filters combined in ways the URLs above do not: every folder, tag
            // and year, with an image, a second tag, favourites. Each is a first visit (its window
            // and counts read for the first time), after every measurement above so that the key sets
            // they keep change none of those.
            var combinationVisits: [Double] = []
            var slowestCombination = (url: "", seconds: 0.0)
            for url in combinationURLs {
                let seconds = try await client.timedPage(url, cookie: cookie)
                combinationVisits.append(seconds)
                if seconds > slowestCombination.seconds { slowestCombination = (url, seconds) }
            }
            results.add("6 list page", "list page: first visit of \(combinationURLs.count) other filter combinations, after the writes",
                        "app, in-process", .perQuery, combinationVisits)
            results.add("6 list page", "first visit of GET \(Self.shortened(slowestCombination.url))", "app, in-process", .once,
                        [slowestCombination.seconds], note: "the slowest of the other filter combinations")
        }
        try await measureFirstVisitsFromTheDisk()
    }

    /// The library opened, and each URL visited once, with the store's files out of the OS's file
    /// cache, as after a reboot: every page SQLite reads first comes from the disk. In a fresh app (so
    /// a library opened afresh, with nothing kept), in this process, whose types and templates the
    /// pages above have already met: what this adds to the first visits above is the disk's.
    private func measureFirstVisitsFromTheDisk() async throws {
        try StoreFiles.evictFromCache(in: dataDirectory)
        try await withApp { client, cookie in
            let label = "the store read from the disk (out of the OS's file cache, as after a reboot)"
            try openLibrary(in: client.app, reportedAs: "open the library, \(label)")
            var visits: [(Kind, Double)] = []
            for (url, kind) in urls {
                visits.append((kind, try await client.timedPage(url, cookie: cookie)))
            }
            reportFirstVisits(visits, inAll: label, byKind: ", \(label)")
        }
    }

    /// Opens the library of `admin`, timed, and reports the time as `workload`.
    private func openLibrary(in app: Application, reportedAs workload: String) throws {
        guard let owner = app.accounts.account(username: "admin") else { throw BenchmarkError("no admin account") }
        let opening = now()
        _ = try app.libraries.store(for: owner)
        results.add("6 list page", workload, "app, in-process", .once, [now() - opening])
    }

    /// Reports first visits, in the order of `urls`: all of them ("…of each URL, `inAll`"), then by
    /// kind ("…of each browse URL`byKind`").
    private func reportFirstVisits(_ visits: [(kind: Kind, seconds: Double)], inAll: String, byKind: String) {
        results.add("6 list page", "list page: first visit of each URL, \(inAll)", "app, in-process", .perQuery, visits.map(\.seconds))
        for kind in [Kind.browse, .rare, .common] {
            results.add("6 list page", "list page: first visit of each \(kind.rawValue) URL\(byKind)", "app, in-process", .perQuery,
                        visits.filter { $0.kind == kind }.map(\.seconds))
        }
    }

    /// Every URL, each right after a call of `write`, a fifth as many rounds as the warm pass.
    private func measureAfterWrites(
        _ label: String, client: InProcessClient, cookie: String?, write: () async throws -> Void
    ) async throws {
        var byKind: [Kind: [Double]] = [:]
        // The saves are timed too: a save that brings cached counts up to date does that work itself.
        var saves: [Double] = []
        for _ in 0..<max(1, repetitions / 5) {
            for (url, kind) in urls {
                let saveStart = now()
                try await write()
                saves.append(now() - saveStart)
                byKind[kind, default: []].append(try await client.timedPage(url, cookie: cookie))
            }
        }
        for kind in [Kind.browse, .rare, .common] {
            results.add("6 list page", "list page \(label): all \(kind.rawValue) URLs", "app, in-process", .perQuery, byKind[kind] ?? [])
        }
        results.add("6 list page", "list page \(label): every URL", "app, in-process", .perQuery, byKind.values.flatMap { $0 })
        results.add("6 list page", "the save before each request, \(label)", "app, in-process", .perQuery, saves)
    }

    /// UUIDs are long: the first 8 characters name them well enough in a table.
    static func shortened(_ url: String) -> String {
        url.replacingOccurrences(of: "([0-9A-F]{8})-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}", with: "$1…", options: .regularExpression)
    }
}

let benchmarkAdminPassword = "benchmark-admin-password"

/// The app's store files (`*.store`, with their `-wal` logs) and the OS's file cache.
enum StoreFiles {
    private static func files(in directory: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.lastPathComponent.hasSuffix(".store") || $0.lastPathComponent.hasSuffix(".store-wal") }
    }

    /// Reads a file to its end, a megabyte at a time, so that its pages are in the file cache.
    static func readThrough(_ handle: FileHandle) throws {
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {}
    }

    /// Reads every store file through once, so that its pages are in the file cache.
    static func readIntoCache(in directory: URL) throws {
        for url in try files(in: directory) {
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            try readThrough(handle)
        }
    }

    /// Writes out and then drops every store file's pages from the file cache (`POSIX_FADV_DONTNEED`
    /// drops only pages that are not dirty, hence the `fsync` first).
    static func evictFromCache(in directory: URL) throws {
        for url in try files(in: directory) {
            let descriptor = open(url.path, O_RDONLY)
            // A log listed a moment ago may be gone: SQLite deletes it as the last connection of the
            // app that came before closes.
            if descriptor < 0, errno == ENOENT { continue }
            guard descriptor >= 0 else { throw BenchmarkError("cannot open \(url.path)") }
            defer { close(descriptor) }
            guard fsync(descriptor) == 0, posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED) == 0 else {
                throw BenchmarkError("cannot drop \(url.lastPathComponent) from the file cache")
            }
        }
    }
}

/// The files this process runs (its executable and the shared libraries it has mapped) and the app's
/// templates.
///
/// The machine the benchmarks were measured on reclaims file pages that have not been touched for
/// about a minute, whatever memory is free (a DAMON scheme, `pageout` of pages aged 12 × 5 s, under
/// /sys/kernel/mm/damon/admin): code that a phase of the benchmark does not run is read back from
/// the disk when the next phase first runs it, a fault at a time.
enum ProgramFiles {
    static func readIntoCache(templates: URL) throws {
        var paths: [String] = []
        if let maps = try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8) {
            // "address perms offset dev inode path": the path, where there is one, is the sixth field.
            for line in maps.split(separator: "\n") {
                let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
                guard fields.count == 6 else { continue }
                let path = fields[5].trimmingCharacters(in: .whitespaces)
                if path.hasPrefix("/"), !paths.contains(path) { paths.append(path) }
            }
        }
        if let templateFiles = FileManager.default.enumerator(at: templates, includingPropertiesForKeys: nil) {
            for case let url as URL in templateFiles where url.pathExtension == "leaf" { paths.append(url.path) }
        }
        for path in paths {
            // Only regular files: a mapping may name a device (/dev/zero reads forever) or a deleted file.
            guard (try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType) == .typeRegular,
                  let handle = FileHandle(forReadingAtPath: path) else { continue }
            defer { try? handle.close() }
            try StoreFiles.readThrough(handle)
        }
    }
}

/// Requests through the application's responder, with the login step the app may require.
struct InProcessClient {
    let app: Application

    func request(_ method: HTTPMethod, _ url: String, headers: HTTPHeaders = [:], body: String? = nil) async throws -> Response {
        let request = Request(
            application: app, method: method, url: URI(string: url), headers: headers,
            collectedBody: body.map { ByteBuffer(string: $0) }, on: app.eventLoopGroup.any())
        return try await app.responder.respond(to: request).get()
    }

    /// The seconds a GET of `url` took; throws unless it answered a page (200, more than 1,000 bytes).
    func timedPage(_ url: String, cookie: String?) async throws -> Double {
        let start = now()
        let (status, bytes) = try await get(url, cookie: cookie)
        let seconds = now() - start
        guard status == 200, bytes > 1000 else { throw BenchmarkError("\(url) answered \(status) with \(bytes) bytes") }
        return seconds
    }

    func get(_ url: String, cookie: String?) async throws -> (UInt, Int) {
        var headers = HTTPHeaders()
        if let cookie { headers.add(name: .cookie, value: cookie) }
        let response = try await request(.GET, url, headers: headers)
        let bytes = response.body.buffer?.readableBytes ?? response.body.count
        return (response.status.code, bytes)
    }

    /// nil when the app has no login (GET /login is 404); otherwise logs in as admin and returns the
    /// session cookie.
    func sessionCookie() async throws -> String? {
        let page = try await request(.GET, "/login")
        if page.status == .notFound { return nil }
        let html = page.body.string ?? ""
        var cookies = Self.cookies(page.headers)
        let csrf = Self.hiddenInput("csrf", in: html) ?? ""
        let password = String(cString: getenv("ADMIN_PASSWORD"))
        var headers: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded"]
        if !cookies.isEmpty { headers.add(name: .cookie, value: cookies.joined(separator: "; ")) }
        let form = "username=admin&password=\(password.urlFormEscaped)&csrf=\(csrf.urlFormEscaped)"
        let response = try await request(.POST, "/login", headers: headers, body: form)
        if getenv("BENCH_DEBUG") != nil {
            print("GET /login: \(page.status) \(page.headers)\ncsrf \(csrf)\nPOST headers \(headers)\nPOST body \(form)\n-> \(response.status) \(response.body.string ?? "")")
        }
        let fresh = Self.cookies(response.headers)
        guard !fresh.isEmpty || !cookies.isEmpty, response.status.code < 400 else {
            throw BenchmarkError("login failed: \(response.status)")
        }
        let names = Set(fresh.map { $0.split(separator: "=")[0] })
        cookies = cookies.filter { !names.contains($0.split(separator: "=")[0]) } + fresh
        return cookies.joined(separator: "; ")
    }

    static func cookies(_ headers: HTTPHeaders) -> [String] {
        headers[.setCookie].compactMap { $0.split(separator: ";").first.map { String($0).trimmingCharacters(in: .whitespaces) } }
    }

    static func hiddenInput(_ name: String, in html: String) -> String? {
        for tag in html.components(separatedBy: "<input").dropFirst() where tag.contains("name=\"\(name)\"") {
            guard let range = tag.range(of: "value=\"") else { continue }
            return String(tag[range.upperBound...].prefix { $0 != "\"" })
        }
        return nil
    }
}

extension String {
    var urlFormEscaped: String {
        addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? self
    }
}
