/// The results of `ModelContext.fetch(_:batchSize:)`, as in SwiftData: their number is known at once,
/// and the models are read from the store a batch at a time, when an element of that batch is first
/// read. Reading `count`, or the first page of a long list, reads no other row.
///
/// Copies share the batch last read. Models read stay registered in the context, as `fetch`'s do;
/// to walk a large table in bounded memory, use `ModelContext.enumerate(_:batchSize:block:)`.
public struct FetchResultsCollection<Element>: RandomAccessCollection {
    public typealias Index = Int
    public typealias Indices = Range<Int>
    public typealias Iterator = IndexingIterator<FetchResultsCollection<Element>>
    public typealias SubSequence = Slice<FetchResultsCollection<Element>>

    public var startIndex: Int { 0 }
    public let endIndex: Int
    private let source: Source

    private enum Source {
        case loaded([Element])
        case batches(BatchReader<Element>)
    }

    /// Results read already.
    init(_ elements: [Element]) {
        endIndex = elements.count
        source = .loaded(elements)
    }

    /// `count` results, read by `read` a range at a time; `read` answers for every position it is given.
    init(count: Int, batchSize: Int, read: @escaping (Range<Int>) -> [Element]) {
        endIndex = count
        source = .batches(BatchReader(count: count, batchSize: batchSize, read: read))
    }

    public subscript(position: Int) -> Element {
        precondition(indices.contains(position), "index \(position) out of range 0..<\(endIndex)")
        switch source {
        case .loaded(let elements): return elements[position]
        case .batches(let reader): return reader.element(at: position)
        }
    }
}

/// Keeps the batch read last, so that walking the collection in order reads each batch once.
private final class BatchReader<Element> {
    let count: Int
    let batchSize: Int
    let read: (Range<Int>) -> [Element]
    var current: (range: Range<Int>, elements: [Element])?

    init(count: Int, batchSize: Int, read: @escaping (Range<Int>) -> [Element]) {
        self.count = count
        self.batchSize = max(1, batchSize)
        self.read = read
    }

    func element(at position: Int) -> Element {
        if let current, current.range.contains(position) {
            return current.elements[position - current.range.lowerBound]
        }
        let start = position / batchSize * batchSize
        let range = start..<min(start + batchSize, count)
        let elements = read(range)
        current = (range, elements)
        return elements[position - start]
    }
}
