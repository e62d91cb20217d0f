import Observation

/// Turns a class into a persistent model that a ``ModelContext`` can store.
///
/// ```swift
/// @Model final class Snippet {
///     var title: String
///     var createdAt: Date = Date.now
///     init(title: String) { self.title = title }
/// }
/// ```
@attached(member, conformances: Observable, PersistentModel,
          names: named(_$backingData), named(persistentBackingData), named(schemaMetadata), named(init),
          named(_$observationRegistrar), named(_$hasBeenRead), named(_ObjectGraphNoType), named(access), named(withMutation))
@attached(memberAttribute)
@attached(extension, conformances: Observable, PersistentModel, Sendable)
public macro Model() = #externalMacro(module: "ObjectGraphMacros", type: "ModelMacro")

/// Customises how a model's property is stored: `@Attribute(.unique) var name: String`.
@attached(peer)
public macro Attribute(
    _ options: Schema.Attribute.Option...,
    originalName: String? = nil,
    hashModifier: String? = nil
) = #externalMacro(module: "ObjectGraphMacros", type: "AttributeMacro")

/// Customises a relationship: its delete rule, its inverse and the number of related models allowed.
@attached(peer)
public macro Relationship(
    _ options: Schema.Relationship.Option...,
    deleteRule: Schema.Relationship.DeleteRule = .nullify,
    minimumModelCount: Int? = 0,
    maximumModelCount: Int? = 0,
    originalName: String? = nil,
    inverse: AnyKeyPath? = nil,
    hashModifier: String? = nil
) = #externalMacro(module: "ObjectGraphMacros", type: "RelationshipMacro")

/// Keeps a property out of the store: it is reset to its default value whenever a fetch creates the model.
@attached(peer)
public macro Transient() = #externalMacro(module: "ObjectGraphMacros", type: "TransientMacro")

/// Declares the indexes of a model's table, as SwiftData's `#Index` does: each array is one index,
/// on several columns when it names several properties. Index what fetches filter and sort by, in
/// the order a query narrows: equality tests first, then the sort key.
///
/// ```swift
/// @Model final class Snippet {
///     #Index<Snippet>([\.updatedAt], [\.deletedAt, \.folder])
///     var updatedAt: Date = .now
///     var deletedAt: Date?
///     var folder: Folder?
/// }
/// ```
///
/// Key paths may name stored attributes and to-one relationships (whose column holds the related
/// row's key); a container refuses to open on anything else. The indexes are created whenever a
/// store opens, so a store written before an index was declared gets it on its next open, without a
/// migration; an index no longer declared is dropped then.
@freestanding(declaration, names: named(_objectGraphIndexes))
public macro Index<T>(_ indices: [PartialKeyPath<T>]...) = #externalMacro(module: "ObjectGraphMacros", type: "IndexMacro")

/// SwiftData's typed form of `#Index`: `#Index<Place>(.binary([\.name]), .rtree([\.latitude, \.longitude]))`.
///
/// A `.binary` index is the same as the array form. An `.rtree` index is made as an ordinary
/// (B-tree) index on the same columns, which SQLite uses for a range of the first and filters the
/// rest by: SQLite's R*Tree is a virtual table of its own that every query would have to join, and
/// ObjectGraph does not keep one, so a query for a box of coordinates is correct but not spatial.
@freestanding(declaration, names: named(_objectGraphIndexes))
public macro Index<T>(_ indices: Schema.Index<T>.Types<T>...) = #externalMacro(module: "ObjectGraphMacros", type: "IndexMacro")

/// Declares which properties no two models of a type share, as SwiftData's `#Unique` does: each
/// array is one constraint, and a constraint of several properties is met by their values together.
///
/// ```swift
/// @Model final class Trip {
///     #Unique<Trip>([\.name, \.startDate])
///     var name: String
///     var startDate: Date
/// }
/// ```
///
/// Inserting a model whose values match a saved model's on every property of a constraint updates
/// that model instead (an upsert), as `@Attribute(.unique)` does for one property; a constraint of
/// one property is the same as `.unique` on it. A constraint with a nil value never matches (as in
/// SQLite, nil differs from every value, nil included). Editing a saved model into another's values
/// fails the save with `SwiftDataError.uniqueConstraintViolation`. Key paths may name stored
/// attributes and to-one relationships; a container refuses to open on anything else.
@freestanding(declaration, names: named(_objectGraphUniqueness))
public macro Unique<T>(_ constraints: [PartialKeyPath<T>]...) = #externalMacro(module: "ObjectGraphMacros", type: "UniqueMacro")

/// Routes a stored property through the model's backing data. `@Model` adds it; don't write it by hand.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_), prefixed(_objectGraphKeyPath_))
public macro _PersistedProperty() = #externalMacro(module: "ObjectGraphMacros", type: "PersistedPropertyMacro")

/// Gives an actor its own ``ModelContext`` on a container, for work off the main actor.
@attached(member, names: named(modelExecutor), named(modelContainer), named(init))
@attached(extension, conformances: ModelActor)
public macro ModelActor() = #externalMacro(module: "ObjectGraphMacros", type: "ModelActorMacro")
