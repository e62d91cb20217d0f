import Foundation
import Logging
import NIOCore
import NIOPosix
import ObjectGraph
import SnippetBox
import Vapor

// `snippetbox` starts the app with the settings from the environment (see the README) and prints
// its URL once it listens; maintenance commands work on the stores in DATA_DIR (see `help`).
let arguments = Array(CommandLine.arguments.dropFirst())
/// The maintenance command asked for, which names itself in its errors; nil to serve.
let maintenanceCommand = arguments.first.flatMap { ["seed", "check", "backup", "restore"].contains($0) ? $0 : nil }

/// Stops with the command's usage: what it was given beyond that would otherwise be ignored unseen.
func exitWithUsage(_ usage: String) -> Never {
    FileHandle.standardError.write(Data("usage: snippetbox \(usage)\n".utf8))
    exit(2)
}

/// Prints a maintenance command's warnings on standard error: what it did is done, but not whole.
func warnWith(_ warnings: [String]) {
    for warning in warnings {
        FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
    }
}

/// What `--help` prints. Vapor's own listed its `routes` command, which snippetbox refuses, and
/// none of these; and it ran only after the app was set up, which made DATA_DIR.
let help = """
    usage: snippetbox [serve [--hostname HOST] [--port PORT] [--env development]]
                                   serve the app; settings come from the environment (HOST, PORT,
                                   DATA_DIR, BASE_PATH, ...: see the README's Configuration)
           snippetbox seed N       fill the first library with N demo snippets
           snippetbox check [--repair]
                                   check every store in DATA_DIR and its image files; exits 1 if
                                   anything is wrong. --repair removes from their snippets the
                                   images whose files are gone
           snippetbox backup       write a backup archive of DATA_DIR into DATA_DIR/backups (safe
                                   while the server runs)
           snippetbox restore ARCHIVE
                                   replace DATA_DIR with a backup archive (stop the server first)

    """

/// Logs the app's address once the server listens, from the address it bound: the port may be
/// `serve --port`'s rather than PORT's, and logged before binding, the address was shown even when
/// the port turned out to be taken.
func announceWhenListening(_ app: Application, settings: AppSettings) -> Task<Void, Never> {
    Task {
        while !Task.isCancelled {
            if let address = app.http.server.shared.localAddress {
                let place: String
                if let port = address.port, let ip = address.ipAddress {
                    let host = ["0.0.0.0", "::"].contains(ip) ? "localhost" : ip.contains(":") ? "[\(ip)]" : ip
                    place = "http://\(host):\(port)\(settings.basePath)/"
                } else {
                    place = "the socket \(address.pathname ?? "\(address)")"
                }
                app.logger.notice("SnippetBox is running at \(place) (data in \(settings.dataDirectory.path))")
                return
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
}

if arguments.first == "help" || arguments.contains(where: { $0 == "--help" || $0 == "-h" }) {
    print(help, terminator: "")
    exit(0)
}

do {
    let settings = try AppSettings.fromEnvironment()
    switch arguments.first {
    case "seed":
        guard arguments.count == 2, let count = Int(arguments[1]), count > 0 else { exitWithUsage("seed <number of snippets>") }
        try Maintenance.refuseUpdatesBesideAServer(settings, command: "seed")
        let start = Date()
        try DemoData.seed(storeAt: settings.storeURL, count: count) { made in
            print("\(made) / \(count) snippets")
        }
        print("Filled \(settings.storeURL.path) with \(count) snippets in \(String(format: "%.1f", Date().timeIntervalSince(start))) s.")
        exit(0)
    case "check":
        guard arguments.count == 1 || arguments.dropFirst() == ["--repair"] else { exitWithUsage("check [--repair]") }
        let healthy = try Maintenance.check(settings, repair: arguments.count == 2) { line in print(line) }
        exit(healthy ? 0 : 1)
    case "backup":
        guard arguments.count == 1 else { exitWithUsage("backup") }
        let (archive, warnings) = try Maintenance.backup(settings)
        print("Wrote \(archive.path)")
        warnWith(warnings)
        exit(0)
    case "restore":
        guard arguments.count == 2 else { exitWithUsage("restore <backup archive>") }
        let (previous, warnings) = try Maintenance.restore(URL(fileURLWithPath: arguments[1]), settings: settings)
        print("Restored \(settings.dataDirectory.path) from \(arguments[1])."
            + (previous.map { " The data it replaced is in \($0.path)." } ?? ""))
        warnWith(warnings)
        exit(0)
    case .some(let command) where !command.hasPrefix("-") && command != "serve":
        FileHandle.standardError.write(Data("snippetbox: unknown command \(command); use seed N, check, backup, restore ARCHIVE, or no command to serve\n".utf8))
        exit(2)
    default:
        break
    }

    // A self-hosted server runs in production unless told otherwise (`--env development`): Vapor's
    // default, development, also makes Leaf reread and reparse every template on every page.
    let choosesEnvironment = arguments.contains { $0 == "--env" || $0 == "-e" || $0.hasPrefix("--env=") }
    var environment = try Environment.detect(
        arguments: [CommandLine.arguments.first ?? "snippetbox"] + arguments + (choosesEnvironment ? [] : ["--env", "production"]))
    try LoggingSystem.bootstrap(from: &environment)
    // Async code (Vapor's route handlers, the continuations of store work) then runs on the event
    // loops instead of Swift's own pool: a page took four thread switches, the event loop to that
    // pool, to the store's thread pool, back, and back to the event loop to write the answer; now it
    // takes two (wrk, list page: 1,000 -> 1,280 req/s). Nothing blocking may run on them: store
    // work, file archives and password hashes already go to the thread pool. Called once, from the
    // main thread, before anything uses Swift concurrency's executor, as NIO requires.
    NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    // One server a data directory, and no restore under it (see DataDirectoryLock), claimed before
    // anything is opened; held until the process ends.
    let claim = try DataDirectoryLock.claim(settings.dataDirectory)
    let app = try await Application.make(environment)
    do {
        try configure(app, settings: settings)
        try await createAdminFromSettings(app)
        let announcement = announceWhenListening(app, settings: settings)
        defer { announcement.cancel() }
        try await app.execute()
    } catch {
        app.logger.report(error: error)
        try? await app.asyncShutdown()
        throw error
    }
    try await app.asyncShutdown()
    withExtendedLifetime(claim) {}
} catch {
    let failure = maintenanceCommand.map { "snippetbox \($0) failed" } ?? "snippetbox could not start"
    FileHandle.standardError.write(Data("\(failure): \(error)\n".utf8))
    exit(1)
}
