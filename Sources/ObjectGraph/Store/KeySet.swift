import Foundation
import GRDB

/// A set of rows' primary keys, one bit per key: the rows one part of a predicate matches, kept by
/// the aggregate cache so that the counts of any combination of parts are an intersection in memory
/// (see `ModelContext.matchingKeys`).
///
/// Keys are dense in a table with an autoincremented key, so 100,000 rows take 12.5 KB and an
/// intersection a few thousand word operations.
struct KeySet: Sendable {
    /// The largest key a set holds: past it, a set would take more memory than its rows' own indexes
    /// (8 MB). A key outside `0...largestKey` makes the set `unrepresentable`, and its users count in SQL.
    static let largestKey: Int64 = 1 << 26

    /// Bit `k % 64` of word `k / 64` is set for key `k`. `GroupedKeys` reads it directly.
    fileprivate private(set) var words: [UInt64]
    private(set) var count: Int
    /// A key was out of range: the set does not hold every matching row.
    private(set) var unrepresentable = false

    init() {
        words = []
        count = 0
    }

    init(_ keys: some Sequence<Int64>) {
        self.init()
        for key in keys { insert(key) }
    }

    /// The keys, in ascending order.
    var sortedKeys: [Int64] {
        var keys: [Int64] = []
        keys.reserveCapacity(count)
        for (index, word) in words.enumerated() where word != 0 {
            var bits = word
            while bits != 0 {
                keys.append(Int64(index << 6 + bits.trailingZeroBitCount))
                bits &= bits - 1
            }
        }
        return keys
    }

    func contains(_ key: Int64) -> Bool {
        guard key >= 0 else { return false }
        let word = Int(key >> 6)
        return word < words.count && words[word] & (1 << UInt64(key & 63)) != 0
    }

    mutating func insert(_ key: Int64) {
        guard key >= 0, key <= Self.largestKey else {
            unrepresentable = true
            return
        }
        let word = Int(key >> 6)
        if word >= words.count {
            // Doubling, so that keys read in ascending order grow the storage a few times only.
            words.append(contentsOf: repeatElement(0, count: max(word + 1 - words.count, words.count)))
        }
        let bit: UInt64 = 1 << UInt64(key & 63)
        if words[word] & bit == 0 {
            words[word] |= bit
            count += 1
        }
    }

    mutating func remove(_ key: Int64) {
        guard contains(key) else { return }
        words[Int(key >> 6)] &= ~(1 << UInt64(key & 63))
        count -= 1
    }

    /// The keys in both sets.
    func intersection(_ other: KeySet) -> KeySet {
        combined(with: other, length: min(words.count, other.words.count)) { $0 & $1 }
    }

    /// How many keys both sets hold, without making the intersection.
    func intersectionCount(_ other: KeySet) -> Int {
        words.withUnsafeBufferPointer { mine in
            other.words.withUnsafeBufferPointer { theirs in
                var count = 0
                for index in 0..<min(mine.count, theirs.count) { count += (mine[index] & theirs[index]).nonzeroBitCount }
                return count
            }
        }
    }

    /// The positions of the words that hold a key, when they are at most an eighth of the words (a
    /// rare word's hits, a narrow filter's rows); nil for a set spread wider, which `intersectionCount`
    /// walks word by word faster than it would look these up.
    var fewOccupiedWords: [Int]? {
        words.withUnsafeBufferPointer { words in
            let most = words.count / 8
            var occupied: [Int] = []
            for index in words.indices where words[index] != 0 {
                if occupied.count == most { return nil }
                occupied.append(index)
            }
            return occupied
        }
    }

    /// How many keys both sets hold, reading only the words at `occupied` (`other.fewOccupiedWords`,
    /// outside which `other` holds no key).
    func intersectionCount(_ other: KeySet, occupied: [Int]) -> Int {
        words.withUnsafeBufferPointer { mine in
            other.words.withUnsafeBufferPointer { theirs in
                var count = 0
                for index in occupied where index < mine.count { count += (mine[index] & theirs[index]).nonzeroBitCount }
                return count
            }
        }
    }

    /// The keys of this set that `other` does not hold.
    func subtracting(_ other: KeySet) -> KeySet {
        combined(with: other, length: words.count) { $0 & ~$1 }
    }

    private func combined(with other: KeySet, length: Int, _ operation: (UInt64, UInt64) -> UInt64) -> KeySet {
        var result = KeySet()
        result.words = [UInt64](repeating: 0, count: length)
        var count = 0
        for index in 0..<length {
            let word = operation(words[index], index < other.words.count ? other.words[index] : 0)
            result.words[index] = word
            count += word.nonzeroBitCount
        }
        result.count = count
        result.unrepresentable = unrepresentable || other.unrepresentable
        return result
    }

    /// This set less the keys in `removed`, plus those in `added`: a kept set brought up to date by a
    /// save (what the save's rows matched before it, and after).
    func replacing(_ removed: [Int64], with added: [Int64]) -> KeySet {
        var result = self
        for key in removed { result.remove(key) }
        for key in added { result.insert(key) }
        return result
    }
}

/// Each row's group for one grouping of counts (its folder, its language, each of its tags), as
/// pairs of the row's key and the group's value: counting the rows of a `KeySet` per group is then a
/// walk of these arrays, with no SQL.
struct GroupedKeys: @unchecked Sendable {
    /// The rows' keys, one per pair: a row appears once per group it is in (none for a row in no group).
    private(set) var owners: [Int64] = []
    /// Each pair's group, as a position in `values`.
    private(set) var groups: [Int32] = []
    /// Every group value seen, each once.
    private(set) var values: [DatabaseValue] = []
    private var positions: [DatabaseValue: Int32] = [:]
    /// Each group's rows as a set, made at the first count of these pairs (see `counts(of:)`). Pairs
    /// are appended only while they are made (a read, `replacing`), before any count: a value made
    /// from another has a box of its own.
    private var groupSets = GroupSets()

    init() {}

    mutating func append(_ owner: Int64, _ value: DatabaseValue) {
        let position: Int32
        if let known = positions[value] {
            position = known
        } else {
            position = Int32(values.count)
            positions[value] = position
            values.append(value)
        }
        owners.append(owner)
        groups.append(position)
    }

    /// How many of `keys` are in each group, in the form of a `GROUP BY` count: each group with at
    /// least one row, once.
    ///
    /// With each group's rows as a set, a count is an intersection per group: for the 25 tags of
    /// 100,000 snippets, 25 × 1,563 words, where the walk of every pair is 250,000 lookups. A
    /// search's first page counts three groupings (folders, tags, languages) afresh for its words.
    ///
    /// A set of few keys (a rare word's hits) is intersected at the words that hold them only: for the
    /// folders, tags and languages of 100,000 snippets, every group's 1,563 words for three hits were
    /// 8% of the samples of such a search's first page over HTTP.
    func counts(of keys: KeySet) -> [(DatabaseValue, Int)] {
        if let sets = groupSets.sets(making: makeGroupSets) {
            let occupied = keys.fewOccupiedWords
            return sets.indices.compactMap { group in
                let count = occupied.map { sets[group].intersectionCount(keys, occupied: $0) } ?? sets[group].intersectionCount(keys)
                return count > 0 ? (values[group], count) : nil
            }
        }
        var tally = [Int](repeating: 0, count: values.count)
        // Buffers, not arrays: a walk of every pair (250,000 for the tags of 100,000 snippets) for each
        // count, where the arrays' checks on every access took most of the time.
        keys.words.withUnsafeBufferPointer { words in
            owners.withUnsafeBufferPointer { owners in
                groups.withUnsafeBufferPointer { groups in
                    tally.withUnsafeMutableBufferPointer { tally in
                        for index in 0..<owners.count {
                            // A negative key becomes a word past the end: in no set.
                            let key = UInt64(bitPattern: owners[index])
                            let word = key >> 6
                            guard word < UInt64(words.count), words[Int(word)] & (1 << (key & 63)) != 0 else { continue }
                            tally[Int(groups[index])] += 1
                        }
                    }
                }
            }
        }
        return tally.indices.compactMap { tally[$0] > 0 ? (values[$0], tally[$0]) : nil }
    }

    /// Makes what `counts(of:)` counts with, if it is not made yet.
    func prepareCounts() {
        _ = groupSets.sets(making: makeGroupSets)
    }

    /// Whether a count or `prepareCounts()` has made the groups' sets (or found there are none to make).
    var groupSetsAreMade: Bool { groupSets.isMade }

    /// Sets held in memory for the groups: a set per group takes a bit per key up to the largest, so
    /// a grouping of many values (a count per title) is counted by walking its pairs.
    private static let groupSetWordBudget = 1 << 20

    /// Each group's rows, by group position; nil when they would take more than the budget, or a
    /// row is in a group twice (the walk counts each pair, as `GROUP BY` does).
    private func makeGroupSets() -> [KeySet]? {
        let largest = owners.max() ?? 0
        guard largest <= KeySet.largestKey, values.count * (Int(largest >> 6) + 1) <= Self.groupSetWordBudget else { return nil }
        var sets = [KeySet](repeating: KeySet(), count: values.count)
        for index in owners.indices {
            let group = Int(groups[index])
            let before = sets[group].count
            sets[group].insert(owners[index])
            guard sets[group].count > before else { return nil }
        }
        return sets
    }

    /// The group sets of one `GroupedKeys`, made once by whichever count comes first.
    private final class GroupSets: @unchecked Sendable {
        private let lock = NSLock()
        private var made: [KeySet]??

        var isMade: Bool { lock.withLock { made != nil } }

        func sets(making make: () -> [KeySet]?) -> [KeySet]? {
            lock.withLock {
                if let made { return made }
                let sets = make()
                made = .some(sets)
                return sets
            }
        }
    }

    /// These pairs brought up to date by a save: every pair of a row in `removed` (all the pairs the
    /// save's rows had before it) taken out, and those of `added` (what they have after it) put in.
    func replacing(_ removed: GroupedKeys, with added: GroupedKeys) -> GroupedKeys {
        var result = self
        result.groupSets = GroupSets()
        if !removed.owners.isEmpty {
            let leaving = Set(removed.owners)
            var kept = GroupedKeys()
            kept.values = values
            kept.positions = positions
            kept.owners.reserveCapacity(owners.count)
            kept.groups.reserveCapacity(groups.count)
            for index in owners.indices where !leaving.contains(owners[index]) {
                kept.owners.append(owners[index])
                kept.groups.append(groups[index])
            }
            result = kept
        }
        for index in added.owners.indices { result.append(added.owners[index], added.values[Int(added.groups[index])]) }
        return result
    }
}
