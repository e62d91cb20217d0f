import Foundation

/// Collects the highlighted HTML line by line. Scanners hand it the tokens they colour, in order;
/// the source between two tokens is plain text, so scanners need not report it. The writer escapes
/// everything, splits at newlines and keeps every line's spans balanced by closing the open span at
/// the end of a line and reopening it (lazily, so blank lines inside a block comment stay empty) on
/// the next one. Adjacent tokens of the same kind share one span.
///
/// The HTML goes into one growing byte buffer, and lines become strings only at the end: copying
/// bytes through a pointer is what keeps a debug build fast. For the same reason the hot stored
/// properties opt out of run-time exclusivity checks; a writer belongs to one highlighting call on
/// one thread and none of its methods re-enter another.
final class HTMLLineWriter {
    let source: SourceView
    @exclusivity(unchecked) private var buffer: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var count = 0
    /// Where each finished line ends in `buffer`.
    private var lineEnds: [Int] = []
    @exclusivity(unchecked) private var kind: TokenKind?
    @exclusivity(unchecked) private var spanIsOpen = false
    /// How far into the source the output goes.
    @exclusivity(unchecked) private var written = 0
    /// How far into the source scanners have reported, plain text included. Tokens must come in
    /// order without overlapping: that is what keeps every character in the output exactly once.
    @exclusivity(unchecked) private var claimed = 0

    init(source: SourceView) {
        self.source = source
        capacity = max(64, source.count * 2)
        buffer = .allocate(capacity: capacity)
    }

    deinit {
        buffer.deallocate()
    }

    /// Writes `source[start..<end]` as a token of `kind`; with a nil `kind` it only notes that the
    /// range is plain text, which it would be anyway.
    func write(_ start: Int, _ end: Int, as kind: TokenKind? = nil) {
        var start = start
        if start < claimed {
            assertionFailure("scanner reported source bytes \(start)..<\(claimed) twice")
            start = claimed
        }
        let end = end < source.count ? end : source.count
        guard start < end else { return }
        claimed = end
        guard let kind else { return }
        if start > written { output(written, start, as: nil) }
        output(start, end, as: kind)
    }

    private func output(_ start: Int, _ end: Int, as kind: TokenKind?) {
        written = end
        if (kind?.rawValue ?? -1) != (self.kind?.rawValue ?? -1) {
            closeSpan()
            self.kind = kind
        }
        let base = source.base
        var index = start
        while index < end {
            var segmentEnd = end
            if let newline = memchr(base + index, Int32(ASCII.newline), end - index) {
                segmentEnd = base.distance(to: newline.assumingMemoryBound(to: UInt8.self))
            }
            if segmentEnd > index {
                if !spanIsOpen, let kind {
                    append(kind.openingTag)
                    spanIsOpen = true
                }
                appendEscaped(index, segmentEnd)
            }
            if segmentEnd < end {
                closeSpan()
                lineEnds.append(count)
                segmentEnd += 1
            }
            index = segmentEnd
        }
    }

    /// The finished lines. A source ending in a newline gets no extra empty line; an empty source
    /// gets one empty line.
    func finish() -> [String] {
        if written < source.count { output(written, source.count, as: nil) }
        closeSpan()
        let endsWithNewline = source.count > 0 && source[source.count - 1] == ASCII.newline
        if !endsWithNewline || lineEnds.isEmpty { lineEnds.append(count) }
        var lines: [String] = []
        lines.reserveCapacity(lineEnds.count)
        var lineStart = 0
        for lineEnd in lineEnds {
            lines.append(String(decoding: UnsafeBufferPointer(start: buffer + lineStart, count: lineEnd - lineStart), as: UTF8.self))
            lineStart = lineEnd
        }
        return lines
    }

    private func closeSpan() {
        if spanIsOpen {
            append("</span>")
            spanIsOpen = false
        }
    }

    private func reserve(_ extra: Int) {
        guard count + extra > capacity else { return }
        let newCapacity = max(capacity * 2, count + extra)
        let newBuffer = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBuffer.update(from: buffer, count: count)
        buffer.deallocate()
        buffer = newBuffer
        capacity = newCapacity
    }

    private func append(_ text: StaticString) {
        let length = text.utf8CodeUnitCount
        reserve(length)
        memcpy(buffer + count, text.utf8Start, length)
        count += length
    }

    /// Copies `source[start..<end]` (no newlines in it), escaping what must be.
    private func appendEscaped(_ start: Int, _ end: Int) {
        // No reference is longer than six bytes.
        reserve((end - start) * 6)
        // Locals, not properties, in the loop: in debug builds each property read is a call.
        let base = source.base
        let buffer = self.buffer
        var output = count
        var index = start
        while index < end {
            let byte = base[index]
            // Letters, digits, space and the punctuation from `(` to `;` never need escaping (see
            // `HTMLEscaping`); deciding those inline spares a call per byte in debug builds.
            if byte > 0x3E || (byte >= 0x28 && byte <= 0x3B) || byte == ASCII.space || !HTMLEscaping.needsEscaping(byte) {
                buffer[output] = byte
                output += 1
            } else {
                let reference = HTMLEscaping.reference(for: byte)
                memcpy(buffer + output, reference.utf8Start, reference.utf8CodeUnitCount)
                output += reference.utf8CodeUnitCount
            }
            index += 1
        }
        count = output
    }
}
