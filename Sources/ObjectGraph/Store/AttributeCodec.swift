import Foundation
import GRDB

/// Converts one attribute's Swift value to the value of its column and back.
///
/// Codecs are chosen once per attribute from its declared type, by protocol casts on the metatype,
/// so that reading a row costs one closure call per column: no `Mirror`, no keyed decoder.
struct AttributeCodec: @unchecked Sendable {
    /// The column's declared SQLite type.
    let columnType: String
    let isOptional: Bool
    /// Swift value (boxed in `Any`, of the property's exact type) to column value.
    let encode: (Any) throws -> DatabaseValue
    /// Column value to Swift value of the property's exact type, boxed in `Any`.
    let decode: (DatabaseValue) throws -> Any
    /// Whether the column holds the value's JSON text (`jsonCodec`), rather than a scalar.
    var storesJSON = false
    /// Whether this is `jsonMember`, for a value read out of JSON text (a member, an element), which
    /// may itself be the JSON text of a `Codable` value with members of its own. Told by its empty
    /// column type, which no stored attribute has: a stored flag of its own made the codec a larger
    /// value, copied and destroyed through the runtime's value witnesses in every save (+0.35% of
    /// inserting snippets, counted).
    var readsJSONMember: Bool { columnType.isEmpty }

    /// The codec of a value of `type`; with `opaque` (`@Attribute(.codable)`), always its JSON text,
    /// even for a type that has a column type of its own. Nil for a type that cannot be stored.
    ///
    /// With a `transformer` (`@Attribute(.transformable(by:))`), the value is stored as the `Data`
    /// the transformer makes of it, whatever its type.
    static func make(for type: Any.Type, opaque: Bool = false, transformer: ValueTransformer? = nil) -> AttributeCodec? {
        if let optional = type as? any _OptionalValue.Type {
            guard let wrapped = make(for: optional.wrappedType, opaque: opaque, transformer: transformer), !wrapped.isOptional else { return nil }
            // Made once: wrapping nil asks the runtime for the `Optional` type's metadata, and every
            // NULL column read (a snippet without a folder, an image or a deletion date) made it.
            let none = optional.wrapping(nil)
            return AttributeCodec(
                columnType: wrapped.columnType,
                isOptional: true,
                encode: { value in
                    // A non-optional value of the wrapped type is accepted too: predicates compare
                    // optional columns with plain captured values.
                    guard let optional = value as? any _OptionalValue else { return try wrapped.encode(value) }
                    guard let inner = optional.wrappedAny else { return .null }
                    return try wrapped.encode(inner)
                },
                decode: { stored in
                    stored.isNull ? none : optional.wrapping(try wrapped.decode(stored))
                },
                storesJSON: wrapped.storesJSON
            )
        }
        if let transformer { return transformedCodec(type, by: transformer) }
        if opaque {
            return (type as? any Codable.Type).map { jsonCodec($0) }
        }
        if let codec = specializedScalarCodec(for: type) { return codec }
        if let scalar = type as? any StorableScalar.Type { return scalarCodec(scalar) }
        if let raw = type as? any RawRepresentable.Type, let codec = rawValueCodec(raw) { return codec }
        if let codable = type as? any Codable.Type { return jsonCodec(codable) }
        return nil
    }

    /// The codecs of the common column types, each compiled for its type. A codec made for a type
    /// known only at run time decodes through the generic `T?`, whose metadata the runtime looks up
    /// on every call: a tenth of reading a row.
    private static func specializedScalarCodec(for type: Any.Type) -> AttributeCodec? {
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(String.self): scalarCodec(String.self)
        case ObjectIdentifier(Int.self): scalarCodec(Int.self)
        case ObjectIdentifier(Int64.self): scalarCodec(Int64.self)
        case ObjectIdentifier(Double.self): scalarCodec(Double.self)
        case ObjectIdentifier(Bool.self): scalarCodec(Bool.self)
        case ObjectIdentifier(Date.self): scalarCodec(Date.self)
        case ObjectIdentifier(UUID.self): scalarCodec(UUID.self)
        case ObjectIdentifier(Data.self): scalarCodec(Data.self)
        default: nil
        }
    }

    private static func scalarCodec<T: StorableScalar>(_ type: T.Type) -> AttributeCodec {
        AttributeCodec(
            columnType: T.columnType,
            isOptional: false,
            encode: { value in
                guard let typed = ModelStorage.unboxed(value, as: T.self) else { throw SwiftDataError.valueTypeMismatch(expected: T.self, found: value) }
                if let problem = typed.unstorableBecause { throw SwiftDataError(.modelValidationFailure, problem) }
                return typed.storedValue
            },
            decode: { stored in
                guard let value = T.fromStoredValue(stored) else {
                    throw SwiftDataError.unreadableValue(stored.description, as: T.self)
                }
                return value
            }
        )
    }

    /// Enums with a raw value are stored as that raw value, in one column, so predicates can compare them.
    private static func rawValueCodec<T: RawRepresentable>(_ type: T.Type) -> AttributeCodec? {
        rawValueCodec(type, keeping: _isPOD(T.self) ? DecodedValues() : nil)
    }

    /// Compiled for a type known only at run time, `as? T.RawValue` and `T(rawValue:)` look up
    /// `Optional`'s metadata on every call: 2,000 instructions a row for a language column. Such a
    /// column holds a few distinct values: a `CaseIterable` type's are all in a `CaseTable` made here,
    /// and any other's are kept in `decodedValues` as they are decoded (plain-data types only, as for
    /// `jsonCodec(_:keeping:)`).
    static func rawValueCodec<T: RawRepresentable>(_ type: T.Type, keeping decodedValues: DecodedValues?) -> AttributeCodec? {
        guard let rawType = T.RawValue.self as? any StorableScalar.Type,
              let rawCodec = make(for: rawType) else { return nil }
        // Only where values may be kept and shared at all (plain data, as `decodedValues` says).
        let cases = decodedValues == nil ? nil : CaseTable(T.self, storedWith: rawCodec)
        return AttributeCodec(
            columnType: rawCodec.columnType,
            isOptional: false,
            encode: { value in
                guard let typed = ModelStorage.unboxed(value, as: T.self) else { throw SwiftDataError.valueTypeMismatch(expected: T.self, found: value) }
                return try rawCodec.encode(typed.rawValue)
            },
            decode: { stored in
                if let cases, let value = cases.value(for: stored) { return value }
                if let decodedValues, let kept = decodedValues.value(for: stored) { return kept }
                let value = try decodeRawValue(stored, as: T.self, with: rawCodec)
                decodedValues?.keep(value, for: stored)
                return value
            }
        )
    }

    /// Apart from the codec's closure, whose every call would otherwise look up the metadata of the
    /// optionals here, kept value or not.
    @inline(never)
    private static func decodeRawValue<T: RawRepresentable>(_ stored: DatabaseValue, as type: T.Type, with rawCodec: AttributeCodec) throws -> T {
        guard let raw = try rawCodec.decode(stored) as? T.RawValue, let value = T(rawValue: raw) else {
            throw SwiftDataError.unreadableValue(stored.description, as: T.self)
        }
        return value
    }

    /// A value stored through a value transformer: a BLOB of the `Data` its `transformedValue(_:)`
    /// returns, read back through `reverseTransformedValue(_:)`, which must give a value of `type`.
    private static func transformedCodec(_ type: Any.Type, by transformer: ValueTransformer) -> AttributeCodec {
        let transformerName = String(describing: Swift.type(of: transformer))
        return AttributeCodec(
            columnType: "BLOB",
            isOptional: false,
            encode: { value in
                guard let data = transformer.transformedValue(value) as? Data else {
                    throw SwiftDataError(.modelValidationFailure,
                                         "the value transformer \(transformerName) did not turn a \(Swift.type(of: value)) into Data")
                }
                return data.databaseValue
            },
            decode: { stored in
                guard case .blob(let data) = stored.storage else { throw SwiftDataError.unreadableValue(stored.description, as: type) }
                guard let value = transformer.reverseTransformedValue(data), isInstance(value, of: type) else {
                    throw SwiftDataError(.unreadableValue,
                                         "the value transformer \(transformerName) did not turn the stored \(data.count) bytes back into a \(type)")
                }
                return value
            }
        )
    }

    /// Whether `value` is of `type` (or a subclass), for a type known only at run time.
    private static func isInstance(_ value: Any, of type: Any.Type) -> Bool {
        func check<T>(_: T.Type) -> Bool { value is T }
        return _openExistential(type, do: check)
    }

    /// Other Codable values (structs, enums with associated values, arrays) are one JSON text column,
    /// which SQLite's `json_extract` can filter and sort on.
    static func jsonCodec<T: Codable>(_ type: T.Type) -> AttributeCodec {
        jsonCodec(type, keeping: _isPOD(T.self) ? DecodedValues() : nil)
    }

    /// `decodedValues` keeps the values decoded from short texts. Only for plain-data types (no
    /// references, so a kept value cannot be changed through another copy): many rows hold the
    /// same few values (a tag's colour), and `JSONDecoder` took a thirtieth of the list page's time.
    ///
    /// The first few values it encodes show `JSONMemberNames` which members the type's JSON keeps
    /// under their own names, which SQL reads them by.
    static func jsonCodec<T: Codable>(_ type: T.Type, keeping decodedValues: DecodedValues?) -> AttributeCodec {
        let memberNames = JSONMemberNameLearning()
        return AttributeCodec(
            columnType: "TEXT",
            isOptional: false,
            encode: { value in
                guard let typed = ModelStorage.unboxed(value, as: T.self) else { throw SwiftDataError.valueTypeMismatch(expected: T.self, found: value) }
                let text = String(decoding: try JSONCoding.encoder.encode(typed), as: UTF8.self)
                memberNames.show(typed, json: text)
                return text.databaseValue
            },
            decode: { stored in
                guard let text = String.fromDatabaseValue(stored) else {
                    throw SwiftDataError.unreadableValue(stored.description, as: T.self)
                }
                if let decodedValues, let kept = decodedValues.value(for: stored) { return kept }
                do {
                    let value = try JSONCoding.decoder.decode(T.self, from: Data(text.utf8))
                    decodedValues?.keep(value, for: stored)
                    return value
                } catch {
                    throw SwiftDataError.unreadableValue(text, as: T.self)
                }
            },
            storesJSON: true
        )
    }
}

/// Every case of a `CaseIterable` enum with a text or integer raw value, by the value its column
/// holds: made once with the codec and never changed after, so a row's decode reads it without the
/// lock `DecodedValues` takes. That lock and the look-up by `DatabaseValue` were 1,150 instructions
/// a row for a language column (callgrind, fetching 5,000 rows), taken by every thread of a server
/// reading rows at once. Nil for a type that is not `CaseIterable`, or whose cases' raw values are
/// not all stored as text or integers.
///
/// `@unchecked`: its values are `Any`, but of a plain-data type (the codec makes a table only where
/// `decodedValues` may keep values), and nothing changes them once the table is made.
struct CaseTable: @unchecked Sendable {
    /// The cases whose raw text fits a `ShortText`, in an open-addressed table of a power of two
    /// slots, at least twice as many as the cases: a dictionary by `String` hashed the text with
    /// SipHash (390 instructions a row for a language column of 30 cases, callgrind, fetching 5,000
    /// rows), and a binary search over sorted texts took 320. Kept apart from their values, so that
    /// a probe copies no `Any` (which retains its value).
    private var shortTextSlots: [ShortText?] = []
    private var shortTextValues: [Any] = []
    private var shortTextShift = 0
    /// The cases whose raw text is longer.
    private var byText: [String: Any] = [:]
    private var byInteger: [Int64: Any] = [:]

    init?<T: RawRepresentable>(_ type: T.Type, storedWith rawCodec: AttributeCodec) {
        guard let iterable = type as? any CaseIterable.Type else { return nil }
        var byShortText: [(text: ShortText, value: Any)] = []
        defer { placeShortTexts(byShortText) }
        for element in Self.allCases(of: iterable) {
            // Kept as `init(rawValue:)` makes it from the raw value it is stored as, as a row's decode did.
            guard let listed = element as? T, let value = T(rawValue: listed.rawValue) else { return nil }
            // A raw value a save refuses (a text with a NUL) is never read back either.
            guard let stored = try? rawCodec.encode(listed.rawValue) else { continue }
            switch stored.storage {
            case .string(let text):
                // Two cases listed with one raw value (a hand-written conformance) give one value, that
                // of `init(rawValue:)`, so either entry the search meets is right.
                if let short = ShortText(text) { byShortText.append((short, value)) } else { byText[text] = value }
            case .int64(let integer): byInteger[integer] = value
            case .null, .double, .blob: return nil
            }
        }
    }

    private mutating func placeShortTexts(_ cases: [(text: ShortText, value: Any)]) {
        var bits = 1
        while 1 << bits < 2 * cases.count { bits += 1 }
        shortTextShift = 64 - bits
        shortTextSlots = Array(repeating: nil, count: 1 << bits)
        shortTextValues = Array(repeating: (), count: 1 << bits)
        for (text, value) in cases {
            var slot = text.slot(shift: shortTextShift)
            while let placed = shortTextSlots[slot], placed != text { slot = (slot + 1) & (shortTextSlots.count - 1) }
            shortTextSlots[slot] = text
            shortTextValues[slot] = value
        }
    }

    private static func allCases<Cases: CaseIterable>(of type: Cases.Type) -> [Any] {
        Cases.allCases.map { $0 }
    }

    /// The case stored as `stored`; nil for a value no case has (an older version's case, say),
    /// which the codec then decodes, or refuses, as before.
    func value(for stored: DatabaseValue) -> Any? {
        switch stored.storage {
        case .string(let text):
            if let short = ShortText(text) { valueOfShortText(short) } else { byText[text] }
        case .int64(let integer): byInteger[integer]
        case .null, .double, .blob: nil
        }
    }

    private func valueOfShortText(_ text: ShortText) -> Any? {
        // At most half the slots are taken, so a probe meets an empty slot soon after its start.
        var slot = text.slot(shift: shortTextShift)
        while let placed = shortTextSlots[slot] {
            if placed == text { return shortTextValues[slot] }
            slot = (slot + 1) & (shortTextSlots.count - 1)
        }
        return nil
    }
}

/// A text of at most 15 bytes of UTF-8 (every case name in practice, and the most a `String` holds
/// without a buffer of its own) as two integers: its bytes, and its length in the last byte, so that
/// texts that differ only by trailing NUL bytes stay apart. Equal values mean the same bytes, which
/// is stricter than `String`'s equality (canonically equivalent texts are equal): a column's text
/// that is a case's raw value in another normalization is not found in the table, and the codec
/// then decodes it with `init(rawValue:)`, as before the table.
struct ShortText: Equatable {
    static let capacity = 15
    private let low: UInt64
    private let high: UInt64

    /// Nil for a longer text, or one whose bytes are not contiguous (a bridged `NSString`; every
    /// text read from a row is native).
    init?(_ text: String) {
        // Copied at once: iterating `utf8` a byte at a time cost as much as the dictionary's hash.
        let packed = text.utf8.withContiguousStorageIfAvailable { bytes -> (UInt64, UInt64, Int)? in
            guard bytes.count <= Self.capacity else { return nil }
            var words: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(bytes)) }
            return (words.0, words.1, bytes.count)
        }
        guard let (low, high, count) = packed ?? nil else { return nil }
        // Read as little-endian, the sixteenth byte (never copied into) is the top of `high`.
        self.low = UInt64(littleEndian: low)
        self.high = UInt64(littleEndian: high) | UInt64(count) << 56
    }

    /// A slot of a table of `1 << (64 - shift)`: the two words folded into one by `fibonacciSlot`'s
    /// multiplication, then spread by it.
    func slot(shift: Int) -> Int {
        fibonacciSlot(of: low ^ (high &* fibonacciMultiplier), shift: UInt64(shift))
    }
}

/// Values one codec decoded, by the stored value they were decoded from: at most `capacity` values,
/// texts and blobs of up to `longestText` bytes (forgotten all at once when full, which a column of
/// few distinct values never is). Only for plain-data types (see `jsonCodec(_:keeping:)`).
final class DecodedValues: @unchecked Sendable {
    static let capacity = 256
    static let longestText = 256
    private let lock = NSLock()
    private var values: [DatabaseValue: Any] = [:]

    var count: Int { lock.withLock { values.count } }

    func value(for stored: DatabaseValue) -> Any? {
        guard Self.isShort(stored) else { return nil }
        return lock.withLock { values[stored] }
    }

    func keep(_ value: Any, for stored: DatabaseValue) {
        guard Self.isShort(stored) else { return }
        lock.withLock {
            if values.count >= Self.capacity { values.removeAll(keepingCapacity: true) }
            values[stored] = value
        }
    }

    private static func isShort(_ stored: DatabaseValue) -> Bool {
        switch stored.storage {
        case .string(let text): text.utf8.count <= longestText
        case .blob(let data): data.count <= longestText
        case .null, .int64, .double: true
        }
    }
}

enum JSONCoding {
    // Dates inside JSON are seconds since 2001, as `Date` encodes itself and like Date columns, so that
    // predicates compare them alike and they read back exactly (see `Date.storedValue`). Stores written
    // before `StoredDates` held seconds since 1970: the conversion reads them with `legacyDecoder`, and
    // leaves as written a value that `legacyEncoder` writes as `encoder` does (one without dates).
    // Foundation's coders are Sendable: their options are set here, once, and encoding is thread-safe.
    static let encoder = makeEncoder(dates: .deferredToDate)
    static let decoder = makeDecoder(dates: .deferredToDate)
    static let legacyEncoder = makeEncoder(dates: .secondsSince1970)
    static let legacyDecoder = makeDecoder(dates: .secondsSince1970)

    private static func makeEncoder(dates: JSONEncoder.DateEncodingStrategy) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = dates
        return encoder
    }

    private static func makeDecoder(dates: JSONDecoder.DateDecodingStrategy) -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = dates
        return decoder
    }
}

extension AttributeCodec {
    /// Encodes a value the way it appears inside a JSON column, as `json_extract` returns it:
    /// strings as TEXT, numbers as INTEGER or REAL, booleans as 0 or 1.
    static let jsonMember = AttributeCodec(
        columnType: "",
        isOptional: true,
        encode: { value in
            if let optional = value as? any _OptionalValue, optional.wrappedAny == nil { return .null }
            guard let encodable = value as? any Encodable else {
                throw SwiftDataError(.unsupportedPredicate, "\(type(of: value)) cannot be compared with a stored JSON member")
            }
            let text = String(decoding: try JSONCoding.encoder.encode(encodable), as: UTF8.self)
            switch text {
            case "true": return 1.databaseValue
            case "false": return 0.databaseValue
            case "null": return .null
            default:
                if let integer = Int64(text) { return integer.databaseValue }
                if let double = Double(text) { return double.databaseValue }
                if text.hasPrefix("\""),
                   let string = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) as? String {
                    return string.databaseValue
                }
                return text.databaseValue
            }
        },
        decode: { $0 })
}

/// A Swift type stored in a single column as a SQLite primitive.
protocol StorableScalar {
    static var columnType: String { get }
    var storedValue: DatabaseValue { get }
    static func fromStoredValue(_ value: DatabaseValue) -> Self?
    /// Why this value cannot be stored as it is, or nil: one SQLite would turn into another is refused
    /// rather than changed.
    var unstorableBecause: String? { get }
}

extension StorableScalar {
    var unstorableBecause: String? { nil }
}

/// SQLite keeps a NaN as NULL: a non-optional attribute then failed the save as "needs a value",
/// and an optional one read back as nil.
private func notANumber(_ isNaN: Bool) -> String? {
    isNaN ? "NaN cannot be stored or compared: SQLite keeps it as NULL" : nil
}

extension StorableScalar where Self: DatabaseValueConvertible {
    var storedValue: DatabaseValue { databaseValue }
    static func fromStoredValue(_ value: DatabaseValue) -> Self? { fromDatabaseValue(value) }
}

extension Int: StorableScalar { static var columnType: String { "INTEGER" } }
extension Int8: StorableScalar { static var columnType: String { "INTEGER" } }
extension Int16: StorableScalar { static var columnType: String { "INTEGER" } }
extension Int32: StorableScalar { static var columnType: String { "INTEGER" } }
extension Int64: StorableScalar { static var columnType: String { "INTEGER" } }
extension UInt8: StorableScalar { static var columnType: String { "INTEGER" } }
extension UInt16: StorableScalar { static var columnType: String { "INTEGER" } }
extension UInt32: StorableScalar { static var columnType: String { "INTEGER" } }
extension Bool: StorableScalar { static var columnType: String { "INTEGER" } }
extension Double: StorableScalar {
    static var columnType: String { "REAL" }
    var unstorableBecause: String? { notANumber(isNaN) }
}
extension Float: StorableScalar {
    static var columnType: String { "REAL" }
    var unstorableBecause: String? { notANumber(isNaN) }
}
extension String: StorableScalar {
    static var columnType: String { "TEXT" }
    /// SQLite is handed text up to its first NUL character (as GRDB binds text, and reads it back):
    /// the rest was dropped without a word.
    var unstorableBecause: String? {
        containsNUL ? "text with a NUL character cannot be stored: SQLite would keep only what comes before it" : nil
    }

    /// Found by `memchr` over the string's own UTF-8, which costs little beside the copy SQLite makes.
    private var containsNUL: Bool {
        var text = self
        return text.withUTF8 { bytes in
            guard let start = bytes.baseAddress else { return false }
            return memchr(start, 0, bytes.count) != nil
        }
    }
}
extension Data: StorableScalar { static var columnType: String { "BLOB" } }
extension UUID: StorableScalar { static var columnType: String { "BLOB" } }

/// UInt64 values above Int64.max keep their bits: SQLite integers are signed 64-bit.
extension UInt64: StorableScalar {
    static var columnType: String { "INTEGER" }
    var storedValue: DatabaseValue { Int64(bitPattern: self).databaseValue }
    static func fromStoredValue(_ value: DatabaseValue) -> UInt64? {
        Int64.fromDatabaseValue(value).map { UInt64(bitPattern: $0) }
    }
}

/// UInt is 64 bits wide here too, and kept as UInt64 is: GRDB's own conversion traps above Int64.max.
extension UInt: StorableScalar {
    static var columnType: String { "INTEGER" }
    var storedValue: DatabaseValue { UInt64(self).storedValue }
    static func fromStoredValue(_ value: DatabaseValue) -> UInt? {
        UInt64.fromStoredValue(value).flatMap { UInt(exactly: $0) }
    }
}

/// URLs are their absolute string.
extension URL: StorableScalar {
    static var columnType: String { "TEXT" }
    var storedValue: DatabaseValue { absoluteString.databaseValue }
    static func fromStoredValue(_ value: DatabaseValue) -> URL? {
        String.fromDatabaseValue(value).flatMap { URL(string: $0) }
    }
}

/// Dates are seconds since 2001 (Foundation's reference date) as a REAL, so that they sort and compare
/// as numbers. That is the number a `Date` holds, so it is stored exactly. Seconds since 1970, as
/// stores before `StoredDates` held, need about one more bit than a `Double` has for most dates
/// since 1985: they read back a unit in the last place off, and such a date no longer equalled itself.
extension Date: StorableScalar {
    static var columnType: String { "REAL" }
    var storedValue: DatabaseValue { timeIntervalSinceReferenceDate.databaseValue }
    static func fromStoredValue(_ value: DatabaseValue) -> Date? {
        Double.fromDatabaseValue(value).map { Date(timeIntervalSinceReferenceDate: $0) }
    }
    var unstorableBecause: String? { notANumber(timeIntervalSinceReferenceDate.isNaN) }
}

/// Decimals are exact: stored as text in ``SortableDecimal``'s order-preserving form.
extension Decimal: StorableScalar {
    static var columnType: String { "TEXT" }
    var storedValue: DatabaseValue { SortableDecimal.encode(self).databaseValue }
    /// A NaN has no digits to keep: it was written as a negative number with none, which no fetch could read.
    var unstorableBecause: String? { notANumber(isNaN) }
    static func fromStoredValue(_ value: DatabaseValue) -> Decimal? {
        String.fromDatabaseValue(value).flatMap(SortableDecimal.decode)
    }
}
