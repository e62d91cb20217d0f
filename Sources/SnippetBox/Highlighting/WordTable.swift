import Foundation

/// A hash set of words (keywords, type names, builtins) that answers "which kind is the word at
/// `start..<end` of the source?" without building a `String` for it. Looking words up is the
/// scanner's most frequent question; doing it on the bytes in place keeps debug builds fast.
///
/// A struct of pointers, so that using it costs no reference counting; its owner (a
/// `CompiledGrammar`) calls `deallocate()` when it goes away.
struct WordTable {
    /// What the table knows about a word.
    struct Entry {
        var kind: TokenKind
        /// For keywords: whether they stay keywords after a member-access dot (`.self`, `.init`).
        var keepsKindAfterDot: Bool
    }

    private let slotCount: Int
    /// Index into the entry arrays plus one; 0 marks an empty slot.
    private let slots: UnsafeMutablePointer<Int32>
    private let wordBytes: UnsafeMutablePointer<UInt8>
    private let wordStarts: UnsafeMutablePointer<Int32>
    private let wordLengths: UnsafeMutablePointer<Int32>
    private let entries: UnsafeMutablePointer<Entry>
    private let entryCount: Int
    private let caseInsensitive: Bool
    /// The longest word: longer identifiers are not looked up at all.
    let longestWord: Int

    /// Builds the table; when a word is in several lists the first wins. With `caseInsensitive`, the
    /// words must be lowercase and lookups ignore case.
    init(_ lists: [(words: Set<String>, entry: Entry)], caseInsensitive: Bool) {
        var unique: [(bytes: [UInt8], entry: Entry)] = []
        var seen = Set<String>()
        for list in lists {
            for word in list.words.sorted() where seen.insert(word).inserted {
                unique.append((Array(word.utf8), list.entry))
            }
        }
        self.caseInsensitive = caseInsensitive
        entryCount = unique.count
        longestWord = unique.map(\.bytes.count).max() ?? 0
        var slotCount = 16
        while slotCount < unique.count * 3 { slotCount *= 2 }
        self.slotCount = slotCount
        slots = .allocate(capacity: slotCount)
        slots.initialize(repeating: 0, count: slotCount)
        let totalBytes = unique.reduce(0) { $0 + $1.bytes.count }
        wordBytes = .allocate(capacity: max(totalBytes, 1))
        wordStarts = .allocate(capacity: max(unique.count, 1))
        wordLengths = .allocate(capacity: max(unique.count, 1))
        entries = .allocate(capacity: max(unique.count, 1))
        var offset = 0
        for (number, word) in unique.enumerated() {
            wordStarts[number] = Int32(offset)
            wordLengths[number] = Int32(word.bytes.count)
            (entries + number).initialize(to: word.entry)
            for byte in word.bytes {
                wordBytes[offset] = byte
                offset += 1
            }
            var slot = word.bytes.withUnsafeBufferPointer { Self.hash($0.baseAddress!, 0, $0.count, lowercase: false) } & (slotCount - 1)
            while slots[slot] != 0 { slot = (slot + 1) & (slotCount - 1) }
            slots[slot] = Int32(number + 1)
        }
    }

    func deallocate() {
        slots.deallocate()
        wordBytes.deallocate()
        wordStarts.deallocate()
        wordLengths.deallocate()
        entries.deinitialize(count: entryCount)
        entries.deallocate()
    }

    /// The entry for the word `source[start..<end]`, if it is in the table.
    func lookup(_ source: SourceView, _ start: Int, _ end: Int) -> Entry? {
        let length = end - start
        guard length <= longestWord, entryCount > 0 else { return nil }
        let base = source.base
        let mask = slotCount - 1
        var slot = Self.hash(base, start, end, lowercase: caseInsensitive) & mask
        while slots[slot] != 0 {
            let number = Int(slots[slot]) - 1
            if Int(wordLengths[number]) == length {
                let wordStart = Int(wordStarts[number])
                var offset = 0
                while offset < length {
                    let byte = caseInsensitive ? ASCII.lowercased(base[start + offset]) : base[start + offset]
                    if byte != wordBytes[wordStart + offset] { break }
                    offset += 1
                }
                if offset == length { return entries[number] }
            }
            slot = (slot + 1) & mask
        }
        return nil
    }

    /// FNV-1a, over lowercased bytes when the table ignores case.
    private static func hash(_ base: UnsafePointer<UInt8>, _ start: Int, _ end: Int, lowercase: Bool) -> Int {
        var hash: UInt32 = 2_166_136_261
        var index = start
        while index < end {
            hash = (hash ^ UInt32(lowercase ? ASCII.lowercased(base[index]) : base[index])) &* 16_777_619
            index += 1
        }
        return Int(hash)
    }
}
