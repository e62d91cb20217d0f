import Foundation

/// The models a fetch descriptor selects, kept current as they change, as SwiftData's
/// `ResultsObserver` (2026) keeps them: an `@Query` for code outside a view.
///
/// ```swift
/// let open = try ResultsObserver<Chore, Never>(filterBy: #Predicate { !$0.done }, sortBy: [SortDescriptor(\.title)],
///                                               modelContext: context)
/// withObservationTracking { _ = open.results } onChange: { print("the open chores changed") }
/// ```
///
/// The results follow the context's own pending changes (an insert, a delete, an edit: the fetch
/// includes pending changes unless the descriptor says otherwise) and every save to the store from
/// this process, through any context. Each change tells observers (`Observable`) at once and marks
/// the results stale; they are fetched again when next read, so many changes in a row cost one
/// fetch. Other processes' commits (and another container's of the same file) are looked for every
/// `otherProcessesCheckInterval` seconds, on a timer of the observer's own: SQLite tells no one of
/// them, and the look costs a `stat` of the store's files while nothing moved.
///
/// With `sectionBy`, the results are also grouped (`sections`), in the order of the section's
/// value, which is put first in the sort; a nil value is the section titled "".
///
/// Like its context, an observer is used on one thread (or actor) at a time; the changes it hears
/// of may come from any.
public final class ResultsObserver<Element: PersistentModel, SectionTitle: Hashable>: Observable, @unchecked Sendable {
    /// How results are grouped: the section of a model, and the sort that keeps sections together.
    ///
    /// The sort is held in an array, which the struct's copies only retain: holding a
    /// `SortDescriptor<Element>` itself, a release build gave the struct copy and assignment code
    /// that names the metadata of a type inside `SortDescriptor` that Foundation does not export
    /// (`SortDescriptor.AllowedComparison`), and anything linking ObjectGraph failed to link.
    struct Sectioning {
        let title: (Element) -> SectionTitle
        let leadingSort: [SortDescriptor<Element>]
    }

    /// The context the results are fetched in.
    public let modelContext: ModelContext
    private let sectioning: Sectioning?
    private let registrar = ObservationRegistrar()
    private let lock = NSLock()
    // Guarded by `lock`: a change may be heard of on another thread.
    private var descriptor: FetchDescriptor<Element>
    private var isStale = true
    private var current: [Element] = []
    private var currentSections: [ResultsSection<Element, SectionTitle>] = []
    private var lastError: (any Error)?
    private var watch: StoreChangeWatch?

    /// How often other processes' commits are looked for, in seconds (1 by default); 0 or less stops looking.
    public var otherProcessesCheckInterval: TimeInterval {
        get { watch?.interval ?? 0 }
        set { watch?.interval = newValue }
    }

    init(descriptor: FetchDescriptor<Element>, sectioning: Sectioning?, modelContext: ModelContext) throws {
        self.descriptor = descriptor
        self.sectioning = sectioning
        self.modelContext = modelContext
        try fetch()
        isStale = false
        // Captured as the protocol: a closure that captured the generic `self` would capture its type's metadata.
        let listener: any PendingChangeObserving = self
        watch = StoreChangeWatch(store: modelContext.store, interval: 1) { [weak listener] in
            listener?.pendingChangesDidChange()
        }
        modelContext.addPendingChangeObserver(self)
    }

    // MARK: What is observed

    /// The models that match, in order; fetched again when read after a change.
    public var results: [Element] {
        registrar.access(self, keyPath: \.results)
        fetchIfStale()
        return lock.withLock { current }
    }

    /// The results grouped by `sectionBy`, sections in sorted order; nil without `sectionBy`.
    public var sections: SectionedResults<Element, SectionTitle>? {
        registrar.access(self, keyPath: \.sections)
        guard sectioning != nil else { return nil }
        fetchIfStale()
        return SectionedResults(sections: lock.withLock { currentSections })
    }

    /// Why the last fetch failed, or nil: `results` then keeps what they were before it.
    public var fetchError: (any Error)? {
        registrar.access(self, keyPath: \.fetchError)
        fetchIfStale()
        return lock.withLock { lastError }
    }

    // MARK: The criteria

    /// What is fetched; changing it fetches again when the results are next read.
    public var fetchDescriptor: FetchDescriptor<Element> {
        get {
            registrar.access(self, keyPath: \.fetchDescriptor)
            return lock.withLock { descriptor }
        }
        set {
            registrar.withMutation(of: self, keyPath: \.fetchDescriptor) {
                lock.withLock { descriptor = newValue }
            }
            resultsMayHaveChanged()
        }
    }

    /// The descriptor's predicate.
    public var filterBy: Predicate<Element>? {
        get { fetchDescriptor.predicate }
        set { fetchDescriptor.predicate = newValue }
    }

    /// The descriptor's sort; with `sectionBy`, the section's value is sorted on first all the same.
    public var sortBy: [SortDescriptor<Element>] {
        get { fetchDescriptor.sortBy }
        set { fetchDescriptor.sortBy = newValue }
    }

    /// Marks the results stale, so that they are fetched again when next read, without waiting for
    /// the next look for other processes' commits (or with it stopped).
    public func refresh() {
        resultsMayHaveChanged()
    }

    // MARK: Keeping current

    /// Marks the results stale and tells observers, once until they are fetched again.
    func resultsMayHaveChanged() {
        let wasCurrent = lock.withLock {
            defer { isStale = true }
            return !isStale
        }
        guard wasCurrent else { return }
        registrar.withMutation(of: self, keyPath: \.results) {}
        registrar.withMutation(of: self, keyPath: \.fetchError) {}
        if sectioning != nil { registrar.withMutation(of: self, keyPath: \.sections) {} }
    }

    private func fetchIfStale() {
        // Marked current before the fetch: a change heard of meanwhile marks it stale again.
        let stale = lock.withLock {
            defer { isStale = false }
            return isStale
        }
        if stale { try? fetch() }
    }

    /// Fetches the results now; a failure is kept in `lastError` (and thrown), the results kept.
    private func fetch() throws {
        var fetched = lock.withLock { descriptor }
        if let sectioning { fetched.sortBy = sectioning.leadingSort + fetched.sortBy }
        do {
            let models = try modelContext.fetch(fetched)
            let sections = sectioning.map { Self.sections(of: models, by: $0.title) } ?? []
            lock.withLock {
                current = models
                currentSections = sections
                lastError = nil
            }
        } catch {
            lock.withLock { lastError = error }
            throw error
        }
    }

    /// Runs of equal titles, in order: the sort put the section's value first.
    private static func sections(of models: [Element], by title: (Element) -> SectionTitle) -> [ResultsSection<Element, SectionTitle>] {
        var sections: [ResultsSection<Element, SectionTitle>] = []
        for model in models {
            let name = title(model)
            if sections.last?.title == name {
                sections[sections.count - 1].elements.append(model)
            } else {
                sections.append(ResultsSection(title: name, elements: [model]))
            }
        }
        return sections
    }
}

extension ResultsObserver: PendingChangeObserving {
    func pendingChangesDidChange() { resultsMayHaveChanged() }
}

// MARK: Initializers, as SwiftData declares them

extension ResultsObserver where SectionTitle == Never {
    /// An observer of the models `fetchDescriptor` selects in `modelContext`, not grouped.
    public convenience init(
        fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), modelContext: ModelContext,
        isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(descriptor: fetchDescriptor, sectioning: nil, modelContext: modelContext)
    }

    /// An observer of the models that match `filterBy` in `modelContext`, in the order of `sortBy`.
    public convenience init(
        filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>]? = nil, modelContext: ModelContext,
        isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(descriptor: FetchDescriptor(predicate: filterBy, sortBy: sortBy ?? []), sectioning: nil, modelContext: modelContext)
    }

    /// The same, in a new context of `modelContainer`.
    public convenience init(
        fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), modelContainer: ModelContainer,
        isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(descriptor: fetchDescriptor, sectioning: nil, modelContext: ModelContext(modelContainer))
    }

    /// The same, in a new context of `modelContainer`.
    public convenience init(
        filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>]? = nil, modelContainer: ModelContainer,
        isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(
            descriptor: FetchDescriptor(predicate: filterBy, sortBy: sortBy ?? []), sectioning: nil,
            modelContext: ModelContext(modelContainer))
    }
}

extension ResultsObserver where SectionTitle == String {
    /// An observer of the models `fetchDescriptor` selects, grouped by `sectionBy`.
    public convenience init(
        fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String> & Sendable,
        modelContext: ModelContext, isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(descriptor: fetchDescriptor, sectioning: Self.sectioning(sectionBy), modelContext: modelContext)
    }

    /// An observer of the models `fetchDescriptor` selects, grouped by `sectionBy`; nil is the section "".
    public convenience init(
        fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String?> & Sendable,
        modelContext: ModelContext, isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(descriptor: fetchDescriptor, sectioning: Self.sectioning(sectionBy), modelContext: modelContext)
    }

    /// An observer of the models that match `filterBy`, grouped by `sectionBy`, in the order of `sortBy` within.
    public convenience init(
        filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>]? = nil, sectionBy: KeyPath<Element, String> & Sendable,
        modelContext: ModelContext, isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(
            descriptor: FetchDescriptor(predicate: filterBy, sortBy: sortBy ?? []), sectioning: Self.sectioning(sectionBy),
            modelContext: modelContext)
    }

    /// The same, with an optional section value; nil is the section "".
    public convenience init(
        filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>]? = nil, sectionBy: KeyPath<Element, String?> & Sendable,
        modelContext: ModelContext, isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(
            descriptor: FetchDescriptor(predicate: filterBy, sortBy: sortBy ?? []), sectioning: Self.sectioning(sectionBy),
            modelContext: modelContext)
    }

    /// The same, in a new context of `modelContainer`.
    public convenience init(
        fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String> & Sendable,
        modelContainer: ModelContainer, isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(descriptor: fetchDescriptor, sectioning: Self.sectioning(sectionBy), modelContext: ModelContext(modelContainer))
    }

    /// The same, in a new context of `modelContainer`; nil is the section "".
    public convenience init(
        fetchDescriptor: FetchDescriptor<Element> = FetchDescriptor<Element>(), sectionBy: KeyPath<Element, String?> & Sendable,
        modelContainer: ModelContainer, isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(descriptor: fetchDescriptor, sectioning: Self.sectioning(sectionBy), modelContext: ModelContext(modelContainer))
    }

    /// The same, in a new context of `modelContainer`.
    public convenience init(
        filterBy: Predicate<Element>? = nil, sortBy: [SortDescriptor<Element>]? = nil, sectionBy: KeyPath<Element, String> & Sendable,
        modelContainer: ModelContainer, isolation: isolated (any Actor)? = #isolation
    ) throws {
        try self.init(
            descriptor: FetchDescriptor(predicate: filterBy, sortBy: sortBy ?? []), sectioning: Self.sectioning(sectionBy),
            modelContext: ModelContext(modelContainer))
    }

    private static func sectioning(_ keyPath: KeyPath<Element, String> & Sendable) -> Sectioning {
        Sectioning(title: { $0[keyPath: keyPath] }, leadingSort: [SortDescriptor(keyPath)])
    }

    private static func sectioning(_ keyPath: KeyPath<Element, String?> & Sendable) -> Sectioning {
        Sectioning(title: { $0[keyPath: keyPath] ?? "" }, leadingSort: [SortDescriptor(keyPath)])
    }
}

// MARK: Sections

/// The sections of a `ResultsObserver`'s results, in order (SwiftData, 2026).
public struct SectionedResults<Element: PersistentModel, SectionTitle: Hashable>: RandomAccessCollection {
    let sections: [ResultsSection<Element, SectionTitle>]

    public var startIndex: Int { sections.startIndex }
    public var endIndex: Int { sections.endIndex }
    public subscript(position: Int) -> ResultsSection<Element, SectionTitle> { sections[position] }
}

/// The models of one section, which share the value `title` (SwiftData, 2026).
public struct ResultsSection<Element: PersistentModel, SectionTitle: Hashable>: RandomAccessCollection, Identifiable {
    public let title: SectionTitle
    var elements: [Element]

    public var id: SectionTitle { title }
    public var startIndex: Int { elements.startIndex }
    public var endIndex: Int { elements.endIndex }
    public subscript(position: Int) -> Element { elements[position] }
}
