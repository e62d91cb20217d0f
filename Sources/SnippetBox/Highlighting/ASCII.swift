import Foundation

/// Byte constants and classes shared by the scanners. The scanners work on UTF-8 bytes because every
/// delimiter in every supported language is ASCII: bytes ≥ 0x80 only ever occur inside identifiers,
/// strings and comments, and are copied through whole.
enum ASCII {
    static let newline: UInt8 = 0x0A
    static let tab: UInt8 = 0x09
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let quote: UInt8 = 0x22
    static let hash: UInt8 = 0x23
    static let dollar: UInt8 = 0x24
    static let apostrophe: UInt8 = 0x27
    static let leftParenthesis: UInt8 = 0x28
    static let rightParenthesis: UInt8 = 0x29
    static let asterisk: UInt8 = 0x2A
    static let comma: UInt8 = 0x2C
    static let minus: UInt8 = 0x2D
    static let dot: UInt8 = 0x2E
    static let slash: UInt8 = 0x2F
    static let colon: UInt8 = 0x3A
    static let semicolon: UInt8 = 0x3B
    static let lessThan: UInt8 = 0x3C
    static let equals: UInt8 = 0x3D
    static let greaterThan: UInt8 = 0x3E
    static let question: UInt8 = 0x3F
    static let at: UInt8 = 0x40
    static let leftBracket: UInt8 = 0x5B
    static let backslash: UInt8 = 0x5C
    static let rightBracket: UInt8 = 0x5D
    static let underscore: UInt8 = 0x5F
    static let backtick: UInt8 = 0x60
    static let leftBrace: UInt8 = 0x7B
    static let rightBrace: UInt8 = 0x7D
    static let tilde: UInt8 = 0x7E

    @inline(__always) static func isDigit(_ byte: UInt8) -> Bool { byte &- 0x30 < 10 }
    @inline(__always) static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) &- 0x61 < 26 }
    @inline(__always) static func isUppercase(_ byte: UInt8) -> Bool { byte &- 0x41 < 26 }
    @inline(__always) static func isLowercase(_ byte: UInt8) -> Bool { byte &- 0x61 < 26 }
    @inline(__always) static func isAlphanumeric(_ byte: UInt8) -> Bool { isLetter(byte) || isDigit(byte) }
    @inline(__always) static func isHexDigit(_ byte: UInt8) -> Bool { isDigit(byte) || (byte | 0x20) &- 0x61 < 6 }
    /// Space or tab, and the rarer blanks that editors leave in code.
    @inline(__always) static func isBlank(_ byte: UInt8) -> Bool {
        byte == space || byte == tab || byte == carriageReturn || byte == 0x0B || byte == 0x0C
    }
    @inline(__always) static func isBlankOrNewline(_ byte: UInt8) -> Bool { isBlank(byte) || byte == newline }
    /// Letters, digits, `_` and every byte of a non-ASCII character: the usual identifier bytes.
    @inline(__always) static func isWordByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == underscore || byte >= 0x80
    }
    @inline(__always) static func lowercased(_ byte: UInt8) -> UInt8 { isUppercase(byte) ? byte | 0x20 : byte }
}
