import Foundation

/// A text form of `Decimal` that keeps every digit and sorts, byte by byte, in numeric order.
///
/// SQLite has no decimal type: REAL loses digits and plain text sorts "10" before "9". This form
/// is `sign exponent digits`:
/// - zero is `"1"`;
/// - a positive value is `"2"`, then its decimal exponent plus 500 in three digits, then its significant
///   digits (`0.d1d2… × 10^e` with `d1 ≠ 0`, no trailing zeros);
/// - a negative value is `"0"`, then `499 - e` in three digits, then the nines' complement of its digits
///   and `"~"`, which sorts after every digit so that `-1.55` sorts before `-1.5`.
enum SortableDecimal {
    static func encode(_ value: Decimal) -> String {
        if value.isZero { return "1" }
        let isNegative = value < 0
        let magnitude = isNegative ? -value : value
        var digits = magnitude.significandDigits
        while digits.hasSuffix("0") { digits.removeLast() }
        let integerDigits = Int(magnitude.exponent) + magnitude.significandDigits.count
        let exponent = integerDigits
        if isNegative {
            let complement = String(digits.map { Character(String(9 - ($0.wholeNumberValue ?? 0))) })
            return "0" + threeDigits(499 - exponent) + complement + "~"
        }
        return "2" + threeDigits(exponent + 500) + digits
    }

    static func decode(_ text: String) -> Decimal? {
        guard let first = text.first else { return nil }
        if first == "1" { return text.count == 1 ? Decimal.zero : nil }
        guard text.count >= 5, let biased = Int(text.dropFirst().prefix(3)) else { return nil }
        var digits = String(text.dropFirst(4))
        let exponent: Int
        let isNegative = first == "0"
        if isNegative {
            guard digits.hasSuffix("~") else { return nil }
            digits.removeLast()
            // A NaN, as `encode` wrote it before saves refused NaNs: read back as one, so that its row
            // can be fetched (and the value replaced) rather than failing every fetch of its table.
            if digits.isEmpty { return Decimal.nan }
            exponent = 499 - biased
            var restored = ""
            for character in digits {
                guard let digit = character.wholeNumberValue else { return nil }
                restored.append(String(9 - digit))
            }
            digits = restored
        } else {
            guard first == "2" else { return nil }
            exponent = biased - 500
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isNumber) else { return nil }
        return Decimal(string: "\(isNegative ? "-" : "")0.\(digits)e\(exponent)", locale: Locale(identifier: "en_US_POSIX"))
    }

    private static func threeDigits(_ number: Int) -> String {
        let clamped = min(max(number, 0), 999)
        let text = String(clamped)
        return String(repeating: "0", count: 3 - text.count) + text
    }
}

private extension Decimal {
    /// The significand's decimal digits, without leading zeros.
    var significandDigits: String {
        var significand = self.significand
        if significand < 0 { significand = -significand }
        var text = NSDecimalNumber(decimal: significand).stringValue
        if let dot = text.firstIndex(of: ".") { text.remove(at: dot) }
        while text.hasPrefix("0") && text.count > 1 { text.removeFirst() }
        return text
    }
}
