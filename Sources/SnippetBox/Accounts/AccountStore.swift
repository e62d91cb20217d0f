import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import ObjectGraph
import Vapor

/// What the app needs to know about an account on every request, without a model (models stay in
/// their context).
public struct AccountInfo: Sendable, Equatable {
    public let id: UUID
    public let username: String
    public let passwordHash: String
    public let isAdmin: Bool
    public let createdAt: Date
    public let passwordChangedAt: Date
    public let libraryFileName: String

    init(_ account: Account) {
        id = account.uuid
        username = account.username
        passwordHash = account.passwordHash
        isAdmin = account.isAdmin
        createdAt = account.createdAt
        passwordChangedAt = account.passwordChangedAt
        libraryFileName = account.libraryFileName
    }
}

/// A reason an account cannot be created or changed, shown beside the form field it is about.
public struct AccountError: Error, Equatable, CustomStringConvertible {
    public let field: String
    public let message: String
    public var description: String { message }
}

/// The accounts, in `accounts.store` in the data directory, with a copy of all of them in memory:
/// there are few, and every request looks its account up.
public final class AccountStore: Sendable {
    public let container: ModelContainer
    private let threadPool: NIOThreadPool
    private let cache: NIOLockedValueBox<[UUID: AccountInfo]>

    static let usernameLimit = 40
    /// bcrypt reads at most 72 bytes of a password.
    static let passwordBytes = 8...72

    /// The accounts store's file in the data directory.
    static let fileName = "accounts.store"

    /// Whether `name` is a library file name `create` gives: the first library's, or one in
    /// `libraries/` named by an id (so nothing outside the data directory, and no other store in it).
    static func isLibraryFileName(_ name: String) -> Bool {
        if name == AppSettings.firstLibraryFileName { return true }
        let folder = "libraries/", suffix = ".store"
        guard name.hasPrefix(folder), name.hasSuffix(suffix) else { return false }
        return UUID(uuidString: String(name.dropFirst(folder.count).dropLast(suffix.count))) != nil
    }

    private static let schema = Schema(versionedSchema: AccountSchemaV1.self)

    /// Whether opening the accounts store would change the file first (see `Maintenance.refuseUpdatesBesideAServer`).
    static func needsUpdate(dataDirectory: URL) throws -> Bool {
        try ModelContainer.storeNeedsUpdate(
            at: dataDirectory.appendingPathComponent(fileName), for: schema, migrationPlan: AccountMigrationPlan.self)
    }

    public init(dataDirectory: URL, threadPool: NIOThreadPool) throws {
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        container = try ModelContainer(
            for: Self.schema, migrationPlan: AccountMigrationPlan.self,
            configurations: ModelConfiguration(url: dataDirectory.appendingPathComponent(Self.fileName)))
        self.threadPool = threadPool
        let accounts = try ModelContext(container).fetch(FetchDescriptor<Account>()).map(AccountInfo.init)
        // The library file names come from this store, which a restored backup may have brought from
        // elsewhere: `../other.store` made the server read and write a store outside DATA_DIR (and a
        // removal move it into removed/). Only the names SnippetBox gives are accepted.
        if let stray = accounts.first(where: { !Self.isLibraryFileName($0.libraryFileName) }) {
            throw AccountError(field: "", message: "\(Self.fileName) names “\(stray.libraryFileName)” as the library of \(stray.username), "
                + "which is not a library file name SnippetBox gives (\(AppSettings.firstLibraryFileName), or libraries/<id>.store)")
        }
        cache = NIOLockedValueBox(Dictionary(uniqueKeysWithValues: accounts.map { ($0.id, $0) }))
    }

    public var isEmpty: Bool { cache.withLockedValue { $0.isEmpty } }

    public func account(id: UUID) -> AccountInfo? {
        cache.withLockedValue { $0[id] }
    }

    public func account(username: String) -> AccountInfo? {
        let key = Self.normalize(username)
        return cache.withLockedValue { accounts in accounts.values.first { $0.username == key } }
    }

    /// Every account, by name.
    public var all: [AccountInfo] {
        cache.withLockedValue { Array($0.values) }.sorted { $0.username < $1.username }
    }

    /// The lower-case, trimmed form names are compared and stored in.
    static func normalize(_ username: String) -> String {
        username.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }

    /// Checks a username and password as typed in a form; nil when both are acceptable.
    static func problem(username: String?, password: String, confirmation: String?) -> AccountError? {
        if let username {
            let name = normalize(username)
            if name.isEmpty { return AccountError(field: "username", message: "Choose a username.") }
            // Counted in Unicode scalars: one letter with 300 combining marks is one Character, and made
            // a name too long for a file name when the account's library was retired under it.
            if name.unicodeScalars.count > usernameLimit {
                return AccountError(field: "username", message: "A username has at most \(usernameLimit) characters.")
            }
            if !name.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || "-_.@".unicodeScalars.contains($0) }) {
                return AccountError(field: "username", message: "Use letters, digits and - _ . @ only.")
            }
            // A name that looks like another's: full-width or other compatibility forms ("ｂｏｂ" is
            // "bob" to a reader), and invisible marks such as variation selectors ("bob" + U+FE0E).
            if name != name.precomposedStringWithCompatibilityMapping.lowercased()
                || name.unicodeScalars.contains(where: \.properties.isDefaultIgnorableCodePoint) {
                return AccountError(field: "username", message: "Use plain letters: this name has look-alike or invisible characters.")
            }
        }
        if !passwordBytes.contains(password.utf8.count) {
            return AccountError(field: "password", message: "A password has 8 to 72 bytes (bcrypt reads no more).")
        }
        // bcrypt stops reading at a NUL byte: "pass\0word" would be "pass", and any "pass\0…" would do.
        if password.containsControlCharacters {
            return AccountError(field: "password", message: "A password cannot contain control characters such as NUL.")
        }
        if let confirmation, confirmation != password {
            return AccountError(field: "confirmation", message: "The two passwords differ.")
        }
        return nil
    }

    /// Adds an account with a password already hashed. The first account gets the library at
    /// `snippetbox.store`, which is where a store made before accounts existed lives, so that its
    /// snippets become the first account's; later accounts get a library file of their own.
    /// `asFirstAccount` (the set-up page) refuses when any account exists by then.
    public func create(username: String, passwordHash: String, isAdmin: Bool, asFirstAccount: Bool = false) async throws -> AccountInfo {
        let name = Self.normalize(username)
        return try await change { context in
            let existing = try context.fetch(FetchDescriptor<Account>())
            if asFirstAccount && !existing.isEmpty {
                throw AccountError(field: "username", message: "SnippetBox is already set up; log in instead.")
            }
            if existing.contains(where: { $0.username == name }) {
                throw AccountError(field: "username", message: "There is already an account named \(Formatting.quoted(name)).")
            }
            let id = UUID()
            let file = existing.isEmpty ? AppSettings.firstLibraryFileName : "libraries/\(id.idString).store"
            let account = Account(username: name, passwordHash: passwordHash, isAdmin: isAdmin, libraryFileName: file)
            account.uuid = id
            context.insert(account)
            try context.save()
            let info = AccountInfo(account)
            self.cache.withLockedValue { $0[info.id] = info }
            return info
        }
    }

    /// Held by each change of the accounts from its checks to its save and the update of the copy in
    /// memory, so that changes run one at a time, each seeing the one before. Side by side, two
    /// administrators removing each other each saw the other as a second administrator and both were
    /// removed: with no account left, the set-up page offered the server to whoever came next. Two
    /// first set-ups sent together likewise made two administrators.
    private let changing = NIOLock()

    private func change<Result: Sendable>(_ body: @escaping @Sendable (ModelContext) throws -> Result) async throws -> Result {
        let container = self.container, changing = self.changing
        return try await threadPool.runIfActive {
            try changing.withLock { try body(ModelContext(container)) }
        }
    }

    public func changePasswordHash(of id: UUID, to passwordHash: String) async throws {
        try await change { context in
            guard let account = try context.fetch(FetchDescriptor(predicate: #Predicate<Account> { $0.uuid == id })).first else {
                return
            }
            account.passwordHash = passwordHash
            // Exact, and at least a millisecond later than before: sessions keep the value they logged
            // in under and compare it with this one to within half a millisecond.
            account.passwordChangedAt = max(Date.now, account.passwordChangedAt.addingTimeInterval(0.001))
            try context.save()
            let info = AccountInfo(account)
            self.cache.withLockedValue { $0[id] = info }
        }
    }

    /// A library store file of a data directory, by its name there, and the account it belongs to.
    struct LibraryFile {
        let name: String
        let owner: AccountInfo?
    }

    /// Every library of the data directory: each account's, and the first library while no account
    /// owns it (a store from before accounts, or `snippetbox seed`), if that file exists.
    func libraryFiles(in dataDirectory: URL) -> [LibraryFile] {
        let accounts = all
        var files = accounts.map { LibraryFile(name: $0.libraryFileName, owner: $0) }
        let first = AppSettings.firstLibraryFileName
        if !accounts.contains(where: { $0.libraryFileName == first }),
           FileManager.default.fileExists(atPath: dataDirectory.appendingPathComponent(first).path) {
            files.append(LibraryFile(name: first, owner: nil))
        }
        return files
    }

    /// Removes the account `id` for the administrator `removerID`, after `beforeRemoving` (which moves
    /// its library aside) succeeds. Refused, with nothing changed, when the one removing it is no
    /// longer an administrator (removed meanwhile), when the account is gone already, or when it is
    /// the last administrator: checked in the same change as the removal (see `changing`).
    public func remove(_ id: UUID, by removerID: UUID, beforeRemoving: @escaping @Sendable () throws -> Void) async throws {
        try await change { context in
            let accounts = try context.fetch(FetchDescriptor<Account>())
            guard accounts.contains(where: { $0.uuid == removerID && $0.isAdmin }) else {
                throw AccountError(field: "", message: "Your account is no longer an administrator's (removed or changed meanwhile), so nothing was removed.")
            }
            guard let account = accounts.first(where: { $0.uuid == id }) else {
                throw AccountError(field: "", message: "That account was removed meanwhile.")
            }
            guard !account.isAdmin || accounts.filter(\.isAdmin).count > 1 else {
                throw AccountError(field: "", message: "\(account.username) is the last administrator, so it cannot be removed.")
            }
            try beforeRemoving()
            context.delete(account)
            try context.save()
            _ = self.cache.withLockedValue { $0.removeValue(forKey: id) }
        }
    }
}
