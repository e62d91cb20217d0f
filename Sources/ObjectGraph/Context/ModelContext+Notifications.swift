import Foundation

extension ModelContext {
    /// Posted by `save()` when it has something to write, before it writes; the object is the context.
    public static let willSave = Notification.Name("ObjectGraph.ModelContext.willSave")

    /// Posted by `save()` after its transaction committed; the object is the context, and `userInfo`
    /// holds `[PersistentIdentifier]` arrays under the raw values of ``NotificationKey``.
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(forName: ModelContext.didSave, object: context, queue: nil) { note in
    ///     let inserted = note.userInfo?[ModelContext.NotificationKey.insertedIdentifiers.rawValue] as? [PersistentIdentifier]
    /// }
    /// ```
    public static let didSave = Notification.Name("ObjectGraph.ModelContext.didSave")

    /// The keys of a ``didSave`` notification's `userInfo`, as in SwiftData.
    public enum NotificationKey: String, Sendable {
        /// Not posted: ObjectGraph has no query generations.
        case queryGeneration
        /// Not posted: a save never invalidates every model.
        case invalidatedAllIdentifiers
        /// The models the save inserted, with the identifiers they have after it.
        case insertedIdentifiers
        /// The models whose attributes or relationships the save wrote, and those whose row a new
        /// model with the same unique value took over (an upsert).
        case updatedIdentifiers
        /// The models the save deleted: deleted one by one, by a delete rule, or by
        /// `delete(model:where:)`.
        case deletedIdentifiers
    }

    func postDidSave(request: SaveRequest, result: SaveResult, changed: [any PersistentModel]) {
        var inserted: [PersistentIdentifier] = [], updated: [PersistentIdentifier] = []
        for (insert, outcome) in zip(request.inserts, result.insertOutcomes) {
            switch outcome {
            case .inserted: inserted.append(insert.storage.identifier)
            case .tookOverRow: updated.append(insert.storage.identifier)
            }
        }
        updated += changed.map(\.persistentModelID)
        var deleted = request.deletes.map(\.identifier)
        for (entityName, keys) in result.batchDeletedKeys {
            deleted += keys.sorted().map {
                PersistentIdentifier(entityName: entityName, storeIdentifier: store.identifier, primaryKey: $0)
            }
        }
        NotificationCenter.default.post(name: Self.didSave, object: self, userInfo: [
            NotificationKey.insertedIdentifiers.rawValue: inserted,
            NotificationKey.updatedIdentifiers.rawValue: Self.eachOnce(updated),
            NotificationKey.deletedIdentifiers.rawValue: Self.eachOnce(deleted),
        ])
    }

    /// The identifiers in their first order, without repeats (a model deleted one by one may also
    /// match a batch delete).
    private static func eachOnce(_ identifiers: [PersistentIdentifier]) -> [PersistentIdentifier] {
        var seen = Set<PersistentIdentifier>()
        return identifiers.filter { seen.insert($0).inserted }
    }
}
