import Foundation
import ObjectGraph

/// The people who may log in. Accounts live in a store of their own (`accounts.store`); each
/// account's snippets, folders and tags live in a library store of their own, so that no query of
/// one person's library can ever reach another's.
public enum AccountSchemaV1: VersionedSchema {
    public static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    public static var models: [any PersistentModel.Type] { [Account.self] }

    @Model public final class Account {
        @Attribute(.unique) public var uuid: UUID = UUID()
        /// What the person types to log in, in lower case: "Ada" and "ada" are one account.
        @Attribute(.unique) public var username: String
        /// A bcrypt hash; the password itself is never stored.
        public var passwordHash: String
        public var isAdmin: Bool = false
        public var createdAt: Date = Date.now
        /// When the password last changed: sessions opened before then are no longer valid.
        public var passwordChangedAt: Date = Date.now
        /// The library's store file, relative to the data directory.
        public var libraryFileName: String

        public init(username: String, passwordHash: String, isAdmin: Bool, libraryFileName: String) {
            self.username = username
            self.passwordHash = passwordHash
            self.isAdmin = isAdmin
            self.libraryFileName = libraryFileName
        }
    }
}

public enum AccountMigrationPlan: SchemaMigrationPlan {
    public static var schemas: [any VersionedSchema.Type] { [AccountSchemaV1.self] }
    public static var stages: [MigrationStage] { [] }
}

public typealias Account = AccountSchemaV1.Account
