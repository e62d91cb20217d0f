import ObjectGraph

/// A title or excerpt with the words a search matched, as HTML: the text escaped (by the same rules
/// as highlighted code), each match in `<mark>`.
///
/// The list page used to hand Leaf the pieces and loop over them in the template, a loop and two
/// lookups per piece, for the title and the excerpt of every row: a tenth of rendering a search
/// page. The template now writes this text with `#unsafeHTML`, which is safe because nothing here
/// reaches the output unescaped but the `<mark>` tags themselves.
enum MarkedText {
    /// Excerpts of code cross line breaks; a list row shows them on one line, breaks marked.
    static let lineBreak = " ⏎ "

    static func html(_ fragments: [TextFragment]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(fragments.reduce(0) { $0 + $1.text.utf8.count } + 16)
        for fragment in fragments {
            if fragment.isMatch { bytes.append(contentsOf: "<mark>".utf8) }
            appendEscaped(fragment.text, to: &bytes, lineBreak: lineBreak)
            if fragment.isMatch { bytes.append(contentsOf: "</mark>".utf8) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Text with nothing marked, escaped as `html(_:)` escapes it.
    static func html(plain text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        appendEscaped(text, to: &bytes, lineBreak: nil)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func appendEscaped(_ text: String, to bytes: inout [UInt8], lineBreak: String?) {
        for byte in text.utf8 {
            if byte == ASCII.newline, let lineBreak {
                bytes.append(contentsOf: lineBreak.utf8)
            } else if HTMLEscaping.needsEscaping(byte) {
                let reference = HTMLEscaping.reference(for: byte)
                bytes.append(contentsOf: UnsafeBufferPointer(start: reference.utf8Start, count: reference.utf8CodeUnitCount))
            } else {
                bytes.append(byte)
            }
        }
    }
}
