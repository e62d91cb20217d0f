import Foundation
import NIOConcurrencyHelpers
import ObjectGraph

/// The order people expect of titles and names, as Finder and `localizedStandardCompare` give it:
/// without regard to case, accents or width, and numbers by their value ("Step 9" before "Step 10").
///
/// SQLite compares text byte by byte, and Foundation on Linux has no `localizedStandardCompare`, so
/// the order is carried by a key: the text folded, with every number written after its count of
/// digits ("9" as "019", "10" as "0210"), so that a shorter number sorts first and numbers of one
/// length by their digits. Comparing keys byte by byte then gives the order, in SQL (a snippet stores
/// its title's key and an index on it) and in memory (folders and saved searches, which are few).
enum TitleOrder {
    /// Numbers of up to this many digits (leading zeros aside) sort by their value.
    static let longestNumber = 99

    static func sortKey(_ text: String) -> String {
        let folded = text.trimmingCharacters(in: .whitespacesAndNewlines)
            .folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        var key = String.UnicodeScalarView()
        var digits = String.UnicodeScalarView()
        func appendNumber() {
            guard !digits.isEmpty else { return }
            // Leading zeros do not change the value: "007" sorts with "7", and "0" is one digit.
            let significant = digits.drop { $0 == "0" }
            let number = significant.isEmpty ? String.UnicodeScalarView(["0"]) : String.UnicodeScalarView(significant)
            let length = min(number.count, longestNumber)
            key.append(contentsOf: (length < 10 ? "0\(length)" : "\(length)").unicodeScalars)
            key.append(contentsOf: number)
            digits.removeAll()
        }
        for scalar in folded.unicodeScalars {
            if ("0"..."9").contains(scalar) {
                digits.append(scalar)
            } else {
                appendNumber()
                key.append(scalar)
            }
        }
        appendNumber()
        return String(key)
    }

    /// The key of a folder's, tag's or saved search's name, kept from one page to the next: every list
    /// page sorts the library's folders and tags and each row's tags by name, some eighty keys, and
    /// folding a string with Foundation is most of a key's cost (8% of a list page's CPU under wrk,
    /// by perf). Names are few; should there be more than `keptNameKeys`, the kept keys start over.
    static func nameSortKey(_ name: String) -> String {
        if let kept = nameKeys.withLockedValue({ $0[name] }) { return kept }
        let key = sortKey(name)
        nameKeys.withLockedValue { keys in
            if keys.count >= keptNameKeys { keys.removeAll(keepingCapacity: true) }
            keys[name] = key
        }
        return key
    }

    static let keptNameKeys = 4_096
    private static let nameKeys = NIOLockedValueBox<[String: String]>([:])
    static var keptNameKeyCount: Int { nameKeys.withLockedValue(\.count) }

    /// Sorts a short list by name in this order, each name's key computed once; equal keys keep
    /// the list's order.
    static func sorted<Item>(_ items: [Item], byName name: (Item) -> String) -> [Item] {
        items.map { (key: nameSortKey(name($0)), item: $0) }
            .enumerated()
            .sorted { ($0.element.key, $0.offset) < ($1.element.key, $1.offset) }
            .map(\.element.item)
    }

    /// Computes every snippet's key from its title, a thousand snippets a save, each batch in a context
    /// of its own so that memory holds one batch (a library of 100,000 snippets holds their code too).
    static func fillSortKeys(in container: ModelContainer) throws {
        let batchSize = 1_000
        var offset = 0
        while true {
            let context = ModelContext(container)
            var descriptor = FetchDescriptor<Snippet>()
            descriptor.fetchOffset = offset
            descriptor.fetchLimit = batchSize
            let batch = try context.fetch(descriptor)
            batch.forEach { $0.refreshTitleSortKey() }
            try context.save()
            guard batch.count == batchSize else { return }
            offset += batchSize
        }
    }
}
