import Foundation

/// Read-only access to the UTF-8 source for the scanners, bounded by the end of the range a
/// scanner was given (embedded code ends where its host says).
///
/// It reads through a pointer rather than an array because the highlighter must stay fast in debug
/// builds, where every array access is an unspecialised generic call and every struct holding an
/// array is retained and released on each copy. The pointer is valid for the duration of
/// `SyntaxHighlighter.highlight(_:as:)`, which owns the bytes; nothing keeps a `SourceView` longer.
struct SourceView {
    let base: UnsafePointer<UInt8>
    /// The number of bytes of the whole source.
    let count: Int
    /// Where this view's range ends; reads at or past it go through `byte(at:)`.
    let end: Int

    func limited(to end: Int) -> SourceView {
        SourceView(base: base, count: count, end: min(end, count))
    }

    subscript(_ index: Int) -> UInt8 {
        precondition(index >= 0 && index < count, "source index out of range")
        return base[index]
    }

    /// The byte at `index`, or 0 at or past the end of the range, which matches no delimiter.
    func byte(at index: Int) -> UInt8 { index < end && index >= 0 ? base[index] : 0 }

    func matches(_ pattern: [UInt8], at index: Int) -> Bool {
        let length = pattern.count
        guard index >= 0, index + length <= end else { return false }
        var offset = 0
        while offset < length {
            if base[index + offset] != pattern[offset] { return false }
            offset += 1
        }
        return true
    }

    /// Case-insensitive for ASCII letters; `pattern` must be lowercase.
    func matchesIgnoringCase(_ pattern: [UInt8], at index: Int) -> Bool {
        let length = pattern.count
        guard index >= 0, index + length <= end else { return false }
        var offset = 0
        while offset < length {
            if ASCII.lowercased(base[index + offset]) != pattern[offset] { return false }
            offset += 1
        }
        return true
    }

    /// The index of the newline ending the line that contains `index`, or `end`.
    func lineEnd(from index: Int) -> Int {
        var index = index
        while index < end && base[index] != ASCII.newline { index += 1 }
        return index
    }

    /// The first index at or after `index` that is not a space or tab.
    func skipBlanks(from index: Int) -> Int {
        var index = index
        while index < end && (base[index] == ASCII.space || base[index] == ASCII.tab) { index += 1 }
        return index
    }

    /// The index of the first occurrence of `pattern` at or after `index`.
    func firstIndex(of pattern: [UInt8], from index: Int) -> Int? {
        var index = index
        let first = pattern[0]
        while index < end {
            if base[index] == first && matches(pattern, at: index) { return index }
            index += 1
        }
        return nil
    }

    /// The end of the first occurrence of `pattern` at or after `index`, or `end` when it never comes:
    /// where an unterminated comment or string stops.
    func endOfFirst(_ pattern: [UInt8], from index: Int) -> Int {
        firstIndex(of: pattern, from: index).map { $0 + pattern.count } ?? end
    }

    func bytes(_ start: Int, _ end: Int) -> [UInt8] {
        Array(UnsafeBufferPointer(start: base + start, count: end - start))
    }

    func string(_ start: Int, _ end: Int, lowercased: Bool = false) -> String {
        let bytes = UnsafeBufferPointer(start: base + start, count: end - start)
        return lowercased ? String(decoding: bytes.map(ASCII.lowercased), as: UTF8.self) : String(decoding: bytes, as: UTF8.self)
    }

    /// The end of a number literal starting at `start`: decimal, `0x`/`0b`/`0o`, fraction, exponent,
    /// digit separators, and any suffix of letters and digits (`1L`, `2.5f`, `10u8`, `3px`, `1n`).
    func numberEnd(from start: Int, separator: UInt8 = ASCII.underscore) -> Int {
        var index = start
        let marker = byte(at: index + 1) | 0x20
        if byte(at: index) == 0x30 && (marker == 0x78 || marker == 0x62 || marker == 0x6F) {  // 0x 0b 0o
            index += 2
            while index < end && (ASCII.isHexDigit(base[index]) || base[index] == separator) { index += 1 }
        } else {
            while index < end && (ASCII.isDigit(base[index]) || base[index] == separator) { index += 1 }
            if byte(at: index) == ASCII.dot && ASCII.isDigit(byte(at: index + 1)) {
                index += 1
                while index < end && (ASCII.isDigit(base[index]) || base[index] == separator) { index += 1 }
            }
            if byte(at: index) | 0x20 == 0x65 {  // e
                var exponent = index + 1
                if byte(at: exponent) == 0x2B || byte(at: exponent) == ASCII.minus { exponent += 1 }
                if ASCII.isDigit(byte(at: exponent)) {
                    index = exponent
                    while index < end && ASCII.isDigit(base[index]) { index += 1 }
                }
            }
        }
        while index < end && (ASCII.isAlphanumeric(base[index]) || base[index] == ASCII.underscore) { index += 1 }
        return index
    }
}
