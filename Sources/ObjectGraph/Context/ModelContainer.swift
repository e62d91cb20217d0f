import Foundation

/// Opens a store for a schema and hands out contexts on it, as SwiftData's `ModelContainer` does.
///
/// ```swift
/// let container = try ModelContainer(for: Snippet.self, configurations: ModelConfiguration(url: storeURL))
/// let context = ModelContext(container)
/// ```
///
/// A container is `Sendable`: share it between tasks, and give each task its own ``ModelContext``.
public final class ModelContainer: @unchecked Sendable {
    public let schema: Schema
    public let configurations: [ModelConfiguration]
    public let migrationPlan: (any SchemaMigrationPlan.Type)?
    let store: SQLiteStore
    private let mainContextStorage = LockedValue<ModelContext?>(nil)

    public init(
        for givenSchema: Schema,
        migrationPlan: (any SchemaMigrationPlan.Type)?,
        configurations: [ModelConfiguration]
    ) throws {
        if let error = givenSchema.buildErrors.first { throw error }
        let givenSchema = Self.versioned(givenSchema, by: migrationPlan)
        let configurations = configurations.isEmpty ? [ModelConfiguration()] : configurations
        if Set(configurations).count != configurations.count {
            throw SwiftDataError(.duplicateConfiguration, "the same ModelConfiguration was given twice")
        }
        guard configurations.count == 1, let configuration = configurations.first else {
            throw SwiftDataError(
                .loadIssueModelContainer,
                "ObjectGraph opens one store per container; give one ModelConfiguration (got \(configurations.count))")
        }
        if let error = configuration.storeFileNameError { throw error }
        if let configured = configuration.schema {
            let known = Set(givenSchema.entities.map(\.name))
            if let missing = configured.entities.first(where: { !known.contains($0.name) }) {
                throw SwiftDataError(
                    .configurationSchemaNotFoundInContainerSchema,
                    "the configuration's schema has entity \(missing.name), which the container's schema lacks",
                    entity: missing.name)
            }
        }
        self.schema = givenSchema
        self.configurations = configurations
        self.migrationPlan = migrationPlan
        self.store = try SQLiteStore(configuration: configuration, schema: givenSchema, migrationPlan: migrationPlan)
    }

    /// iOS 18's form without a migration plan, the one Xcode's new-project template writes:
    /// `ModelContainer(for: schema, configurations: [modelConfiguration])`.
    public convenience init(for givenSchema: Schema, configurations: [ModelConfiguration]) throws {
        try self.init(for: givenSchema, migrationPlan: nil, configurations: configurations)
    }

    /// The schema with the version of the plan it is one of. SwiftData's usual form names the current
    /// version's model types, `ModelContainer(for: V2.Trip.self, migrationPlan: Plan.self)`, and a
    /// schema made of types carries version 1.0.0 unless told otherwise: taken as it is, the store was
    /// planned from V1 to "1.0.0", its stages skipped. The version given stands when the plan lists it
    /// with these very types, or when no version of the plan has them (the last of several that do).
    static func versioned(_ schema: Schema, by plan: (any SchemaMigrationPlan.Type)?) -> Schema {
        guard let plan else { return schema }
        func typeSet(_ schema: Schema) -> Set<ObjectIdentifier> { Set(schema.modelTypes.values.map { ObjectIdentifier($0) }) }
        let types = typeSet(schema)
        let versionsWithTheseTypes = plan.schemas.filter { typeSet(Schema(versionedSchema: $0)) == types }
        guard let latest = versionsWithTheseTypes.last,
              !versionsWithTheseTypes.contains(where: { $0.versionIdentifier == schema.version }) else { return schema }
        return Schema(schema.entities.compactMap { schema.modelTypes[$0.name] }, version: latest.versionIdentifier)
    }

    /// A container on a migration's working copy, at one version of the schema, that migrates nothing.
    init(migrationStageFor schema: Schema, configuration: ModelConfiguration, externalStorage: ExternalStorage?) throws {
        if let error = schema.buildErrors.first { throw error }
        self.schema = schema
        self.configurations = [configuration]
        self.migrationPlan = nil
        self.store = try SQLiteStore(configuration: configuration, schema: schema, migrates: false)
    }

    public convenience init(
        for givenSchema: Schema,
        migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: ModelConfiguration...
    ) throws {
        try self.init(for: givenSchema, migrationPlan: migrationPlan, configurations: configurations)
    }

    public convenience init(
        for forTypes: any PersistentModel.Type...,
        migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: ModelConfiguration...
    ) throws {
        try self.init(for: Schema(forTypes), migrationPlan: migrationPlan, configurations: configurations)
    }

    /// The configuration of the container's store.
    public var configuration: ModelConfiguration { store.configuration }

    /// The identifier of the store opened for the configuration named `name` (the `storeIdentifier`
    /// of its models' identifiers and history transactions), or nil when no configuration has that
    /// name. As in SwiftData (2026); a container here has one configuration.
    public func storeIdentifier(forConfigurationNamed name: String) -> String? {
        store.configuration.name == name ? store.identifier : nil
    }

    /// The context of the main actor, with autosave on: changes made in it are saved shortly after,
    /// and at the latest when the container is released.
    @MainActor
    public var mainContext: ModelContext {
        mainContextStorage.withLock { storage in
            if let context = storage { return context }
            let context = ModelContext(mainContextOf: self)
            storage = context
            return context
        }
    }

    /// Deletes every model of every entity from the store (its external files too).
    public func deleteAllData() {
        do {
            try store.deleteAllData()
        } catch {
            store.logger.error("deleteAllData failed: \(error)")
        }
    }

    /// Deletes every model of every entity from the store, throwing if it cannot.
    public func erase() throws {
        try store.deleteAllData()
    }

    deinit {
        let context = mainContextStorage.withLock { $0 }
        context?.saveOnClose()
    }
}
