import Foundation

/// What to fetch: a predicate, an order, and a window, as in SwiftData.
///
/// ```swift
/// var descriptor = FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.title)])
/// descriptor.fetchLimit = 50
/// let firstPage = try context.fetch(descriptor)
/// ```
public struct FetchDescriptor<T: PersistentModel>: @unchecked Sendable {
    public var predicate: Predicate<T>?
    public var sortBy: [SortDescriptor<T>]
    public var fetchLimit: Int?
    public var fetchOffset: Int?
    /// When true (the default), unsaved inserts and deletes of the context are reflected in the result.
    public var includePendingChanges: Bool = true
    public var propertiesToFetch: [PartialKeyPath<T>] = []
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []

    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }
}
