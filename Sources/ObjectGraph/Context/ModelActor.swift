import Foundation

/// Gives a context to an actor. `@ModelActor` generates the conformance.
public protocol ModelExecutor: AnyObject, Sendable {
    var modelContext: ModelContext { get }
}

/// An executor that owns one context, used by the code `@ModelActor` generates.
public final class DefaultSerialModelExecutor: ModelExecutor, @unchecked Sendable {
    /// Only the owning actor touches the context, so the actor's isolation is what keeps it safe.
    public let modelContext: ModelContext

    public init(modelContext: ModelContext) {
        self.modelContext = modelContext
    }
}

/// An actor that works with models through a context of its own, off the main actor.
public protocol ModelActor: Actor {
    nonisolated var modelContainer: ModelContainer { get }
    nonisolated var modelExecutor: any ModelExecutor { get }
}

extension ModelActor {
    /// The actor's own context. Use it only from inside the actor.
    public var modelContext: ModelContext { modelExecutor.modelContext }

    /// The model with this identifier in the actor's context, if it exists and has type `T`: nil
    /// for a row that is gone (deleted, or of another store), where `model(for:)` gives a deleted
    /// stand-in, so that `guard let note = self[id, as: Note.self]` stops there.
    public subscript<T: PersistentModel>(id: PersistentIdentifier, as type: T.Type) -> T? {
        guard let model = modelContext.model(for: id) as? T, !model.storage.rowIsGone else { return nil }
        return model
    }
}
