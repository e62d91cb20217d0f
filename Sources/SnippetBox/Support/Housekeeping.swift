import Foundation
import NIOCore
import ObjectGraph
import Vapor

/// Work on a timer: every hour, snippets that have been in the trash for 30 days are purged, and
/// when `BACKUP_EVERY_HOURS` is set, a backup is written once the newest one is that old (so a
/// restart neither skips nor doubles one), keeping the last `BACKUP_KEEP`.
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

    /// One round: purge every library's trash, and back up when one is due.
    static func runOnce(_ app: Application, now: Date = .now) async throws {
        for account in app.accounts.all {
            let container = try app.libraries.store(for: account).container
            try await app.threadPool.runIfActive {
                let context = ModelContext(container)
                try TrashController.purgeExpired(in: context, now: now)
                try context.save()
            }
        }
        let settings = app.appSettings
        guard settings.backupEveryHours > 0 else { return }
        let newest = BackupArchive.list(in: settings.backupDirectory).first
        let newestDate = newest.flatMap { try? FileManager.default.attributesOfItem(atPath: $0.path)[.modificationDate] as? Date }
        if let newestDate, now.timeIntervalSince(newestDate) < Double(settings.backupEveryHours) * 3_600 - 60 { return }
        let url = try await backUp(app, now: now)
        BackupArchive.prune(in: settings.backupDirectory, keeping: settings.backupsKept)
        app.logger.notice("Wrote the scheduled backup \(url.lastPathComponent).")
    }

    /// Writes a backup archive of the whole data directory into `DATA_DIR/backups`.
    static func backUp(_ app: Application, now: Date = .now) async throws -> URL {
        let accounts = app.accounts
        let libraries = app.libraries
        let settings = app.appSettings
        let directory = settings.backupDirectory
        return try await app.threadPool.runIfActive {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return try BackupArchive.create(accounts: accounts, libraryContainer: { try libraries.store(for: $0).container },
                                            dataDirectory: settings.dataDirectory, into: directory, now: now)
        }
    }
}
