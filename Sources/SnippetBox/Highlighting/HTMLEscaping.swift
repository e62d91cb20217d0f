import Foundation

/// The single place that decides how a byte of a snippet becomes HTML text. Everything the
/// highlighter outputs outside its own `<span>` tags goes through here, so no snippet can ever
/// produce markup.
enum HTMLEscaping {
    /// Whether `byte` must be written as a character reference. Bytes of multi-byte UTF-8 sequences
    /// are all ≥ 0x80 and never are, so escaping byte by byte never splits a character.
    @inline(__always)
    static func needsEscaping(_ byte: UInt8) -> Bool {
        byte <= 0x3E && (byte == 0x26 || byte == 0x3C || byte == 0x3E || byte == 0x22 || byte == 0x27 || byte == 0x00 || byte == 0x0D)
    }

    /// The character reference for a byte that `needsEscaping`.
    static func reference(for byte: UInt8) -> StaticString {
        if byte == 0x26 { return "&amp;" }
        if byte == 0x3C { return "&lt;" }
        if byte == 0x3E { return "&gt;" }
        if byte == 0x22 { return "&quot;" }
        if byte == 0x27 { return "&#39;" }
        // A raw NUL is dropped by HTML parsers and a lone carriage return becomes a line break that
        // would split one of our lines in two; references keep both visible and decodable.
        if byte == 0x0D { return "&#13;" }
        return "&#0;"
    }
}
