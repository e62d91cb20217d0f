import Foundation
import NIOCore
import ObjectGraph
import Vapor

/// Work on a timer: every hour, snippets that have been in the trash for 30 days are purged, the
/// stores' history older than a week is deleted, and when `BACKUP_EVERY_HOURS` is set, a backup is
/// written once the newest one is that old (so a restart neither skips nor doubles one), keeping the
/// last `BACKUP_KEEP`.
struct Housekeeping: LifecycleHandler {
    static let interval = TimeAmount.hours(1)

    private final class TaskBox: @unchecked Sendable {
        var task: RepeatedTask?
    }

    private let box = TaskBox()

    func didBoot(_ application: Application) throws {
        let loop = application.eventLoopGroup.next()
        box.task = loop.scheduleRepeatedAsyncTask(initialDelay: .minutes(1), delay: Self.interval) { _ in
            let done = loop.makePromise(of: Void.self)
            done.completeWithTask {
                do {
                    try await Self.runOnce(application)
                } catch {
                    application.logger.error("Housekeeping failed: \(error)")
                }
            }
            return done.futureResult
        }
    }

    func shutdown(_ application: Application) {
        box.task?.cancel()
    }

    /// How long a store's history is kept. ObjectGraph records every save there, and reads it to drop
    /// only what another process's save wrote from what it keeps (a command such as `seed` run beside
    /// the server); a process that has not looked for a week finds the gap and drops all it
    /// kept instead, which is safe. Nothing in SnippetBox reads older history, which would otherwise
    /// grow by a row with every save.
    static let historyKept: TimeInterval = 7 * 86_400

    /// One round: purge every library's trash, delete old history, and back up when one is due.
    static func runOnce(_ app: Application, now: Date = .now) async throws {
        for account in app.accounts.all {
            let store = try app.libraries.store(for: account)
            // Through the store's writes, one at a time with the requests' (see `SnippetStore.write`).
            try await store.write { context in try TrashController.purgeExpired(in: context, now: now) }
            let container = store.container
            try await app.threadPool.runIfActive { try deleteOldHistory(in: ModelContext(container), now: now) }
        }
        let accounts = app.accounts.container
        try await app.threadPool.runIfActive { try deleteOldHistory(in: ModelContext(accounts), now: now) }
        let settings = app.appSettings
        guard settings.backupEveryHours > 0 else { return }
        let newest = BackupArchive.list(in: settings.backupDirectory).first
        let newestDate = newest.flatMap { try? FileManager.default.attributesOfItem(atPath: $0.path)[.modificationDate] as? Date }
        if let newestDate, now.timeIntervalSince(newestDate) < Double(settings.backupEveryHours) * 3_600 - 60 { return }
        let written = try await backUp(app, now: now, isScheduled: true)
        BackupArchive.prune(in: settings.backupDirectory, keeping: settings.backupsKept)
        app.logger.notice("Wrote the scheduled backup \(written.archive.lastPathComponent).")
    }

    /// Deletes the transactions of a store's history saved more than `historyKept` before `now`; the
    /// predicate reads only their time, so none of their changes is decoded.
    static func deleteOldHistory(in context: ModelContext, now: Date) throws {
        let cutoff = now.addingTimeInterval(-historyKept)
        try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.timestamp < cutoff }))
    }

    /// Writes a backup archive of the whole data directory into `DATA_DIR/backups`.
    /// Each warning (a library with image files missing) is logged.
    static func backUp(_ app: Application, now: Date = .now, isScheduled: Bool = false) async throws -> BackupArchive.Written {
        let accounts = app.accounts
        let libraries = app.libraries
        let settings = app.appSettings
        let directory = settings.backupDirectory
        let written = try await app.threadPool.runIfActive {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return try BackupArchive.create(accounts: accounts, libraryContainer: { try libraries.store(for: $0).container },
                                            dataDirectory: settings.dataDirectory, into: directory, now: now, isScheduled: isScheduled)
        }
        for warning in written.warnings {
            app.logger.warning("Backup \(written.archive.lastPathComponent): \(warning)")
        }
        return written
    }
}
