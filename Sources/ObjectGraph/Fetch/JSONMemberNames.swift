import Foundation
import GRDB

/// What the JSON `Codable` types were seen to write shows about their members: which members are not
/// stored under their own name.
///
/// Predicates and sorts read a member of a `Codable` attribute out of the column's JSON by the
/// member's name (`json_extract(…, '$.latitude')`). A type whose `CodingKeys` store a member under
/// another key (`case latitude = "lat"`), or leave it out, has nothing under that name, and the SQL
/// would read NULL in every row: a predicate that matches nothing and a sort that sorts nothing,
/// silently. Swift has no way to ask a type for its coding keys, and decoding a made-up value to find
/// them would run the type's own `init(from:)` on it, which may trap (a force-unwrapped `URL(string:)`).
/// So the evidence is what the type itself wrote: the first few values each attribute encodes in this
/// process (`AttributeCodec.jsonCodec`), and a few stored values of every JSON column, read once a
/// store the first time SQL is about to read a member (`SQLiteStore.learnStoredMemberNames`). A member
/// is stored elsewhere when a value holds it, not nil, while the value's JSON has no key of its name.
///
/// These are facts about types, not stores (a type writes the same keys wherever it is saved), kept
/// for the process. A member nil in every value seen, or a type no value of which was seen, is not
/// known to be stored elsewhere, and is read by its name as before.
final class JSONMemberNames: @unchecked Sendable {
    static let shared = JSONMemberNames()

    private let lock = NSLock()
    /// By type: the members some value held while its JSON had no key of their name.
    private var storedElsewhere: [ObjectIdentifier: Set<String>] = [:]
    /// By type: the type of each member a value held (optionals opened), so that a sort's path of
    /// names (`route.start.latitude`) can be followed down from the attribute's type.
    private var memberTypes: [ObjectIdentifier: [String: Any.Type]] = [:]

    /// Elements of one array walked at most: the first of a long list show its element type's keys.
    private static let elementsWalked = 16

    func isStoredElsewhere(_ member: String, of type: Any.Type) -> Bool {
        lock.withLock { storedElsewhere[ObjectIdentifier(type)]?.contains(member) ?? false }
    }

    func memberType(_ member: String, of type: Any.Type) -> Any.Type? {
        lock.withLock { memberTypes[ObjectIdentifier(type)]?[member] }
    }

    /// Compares `value` with `json`, the JSON text it was encoded to or decoded from, member by member.
    func learn(from value: Any, json: String) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed]) else { return }
        var findings = Findings()
        walk(value, object, into: &findings)
        guard !findings.isEmpty else { return }
        lock.withLock {
            for (type, members) in findings.storedElsewhere { storedElsewhere[type, default: []].formUnion(members) }
            for (type, members) in findings.memberTypes { memberTypes[type, default: [:]].merge(members) { _, seen in seen } }
        }
    }

    private struct Findings {
        var storedElsewhere: [ObjectIdentifier: Set<String>] = [:]
        var memberTypes: [ObjectIdentifier: [String: Any.Type]] = [:]
        var isEmpty: Bool { storedElsewhere.isEmpty && memberTypes.isEmpty }
    }

    /// Walks a value and its JSON side by side: a struct's or class's stored properties (as `Mirror`
    /// lists them) against the object's keys, optionals opened, arrays element by element and
    /// `String`-keyed dictionaries by key. Sets (whose order differs from run to run), enums and
    /// tuples are not walked: no key path reaches their members by a stored name.
    private func walk(_ value: Any, _ json: Any, into findings: inout Findings) {
        guard let value = Self.opened(value) else { return }
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .struct, .class:
            let object = json as? [String: Any]
            let type = ObjectIdentifier(Swift.type(of: value))
            for child in Self.storedProperties(of: mirror) {
                guard let name = child.label, let member = Self.opened(child.value) else { continue }
                findings.memberTypes[type, default: [:]][name] = Swift.type(of: member)
                if let inner = object?[name] {
                    walk(member, inner, into: &findings)
                } else {
                    // No key of its name: renamed or left out by the type's `CodingKeys`, or the type
                    // encodes itself as one value (a number, a text), which has no members to read.
                    findings.storedElsewhere[type, default: []].insert(name)
                }
            }
        case .collection:
            guard let elements = json as? [Any] else { return }
            for (element, inner) in zip(mirror.children.prefix(Self.elementsWalked), elements) {
                walk(element.value, inner, into: &findings)
            }
        case .dictionary:
            guard let object = json as? [String: Any] else { return }
            for entry in mirror.children.prefix(Self.elementsWalked) {
                let pair = Mirror(reflecting: entry.value).children.map(\.value)
                guard pair.count == 2, let key = pair[0] as? String, let inner = object[key] else { continue }
                walk(pair[1], inner, into: &findings)
            }
        default:
            return
        }
    }

    /// A class's own stored properties and those of its superclasses.
    private static func storedProperties(of mirror: Mirror) -> [Mirror.Child] {
        var children = Array(mirror.children)
        var superclass = mirror.superclassMirror
        while let next = superclass {
            children += next.children
            superclass = next.superclassMirror
        }
        return children
    }

    /// The value an optional holds (nil for none, which its JSON leaves out by right), or the value itself.
    private static func opened(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let wrapped = mirror.children.first?.value else { return nil }
        return opened(wrapped)
    }
}

/// Counts the values one attribute's codec has shown `JSONMemberNames`: the first few of them.
final class JSONMemberNameLearning: @unchecked Sendable {
    private static let valuesShown = 4
    private let shown = LockedValue(0)

    /// Shows `value` and its JSON to `JSONMemberNames`, if this attribute has shown fewer than a few.
    func show(_ value: Any, json: String) {
        let wanted = shown.withLock { shown in
            guard shown < Self.valuesShown else { return false }
            shown += 1
            return true
        }
        if wanted { JSONMemberNames.shared.learn(from: value, json: json) }
    }
}

extension SQLiteStore {
    /// Shows `JSONMemberNames` a few stored values of every JSON column of every entity, once for this
    /// store: values saved by earlier runs, which this process has not encoded. The first time SQL is
    /// about to read a member of a `Codable` value (`PredicateTranslation`, `SortKeyPathResolver`).
    ///
    /// Read with GRDB's reentrant read, on a connection of its own when none is in use on this
    /// thread: a predicate may be translated inside a save (a kept count's upkeep) or a read. Left
    /// out of the SQL log, like other work off a call's own path. A value that does not decode is
    /// skipped: a fetch of its row fails on its own.
    ///
    /// The store is marked as sampled once the sample has been read, not before: a caller that found
    /// the mark while another was still reading went on with nothing learned, and read a renamed
    /// member by its name, as NULL in every row. Callers that arrive together each read the sample (a
    /// few values per JSON column), rather than wait on one another: the first may be inside a read
    /// or a save, holding a connection the others' reads would wait for.
    func learnStoredMemberNames() {
        guard !storedMemberNamesLearned.withLock({ $0 }) else { return }
        defer { storedMemberNamesLearned.withLock { $0 = true } }
        let sampleSize = 4
        for layout in schema.entities.map(\.layout) {
            for slot in layout.storedColumnSlots {
                guard let codec = slot.codec, codec.storesJSON, !slot.isOpaqueCodable, !slot.isExternalStorage else { continue }
                let column = slot.name.quotedIdentifier
                let sql = "SELECT \(column) FROM \(layout.name.quotedIdentifier) WHERE \(column) IS NOT NULL LIMIT \(sampleSize)"
                let texts = (try? writer.unsafeReentrantRead { db in
                    try sqlLog.unrecorded(db) { try String.fetchAll(db, sql: sql) }
                }) ?? []
                for text in texts {
                    guard let value = try? codec.decode(text.databaseValue) else { continue }
                    JSONMemberNames.shared.learn(from: value, json: text)
                }
            }
        }
    }

    /// Why SQL cannot read `member` of `type` from stored JSON, when the JSON `type` was seen to write
    /// keeps it under another key or none; nil when it may be read by its name.
    func reasonMemberIsUnreadable(_ member: String, of type: Any.Type) -> String? {
        learnStoredMemberNames()
        guard JSONMemberNames.shared.isStoredElsewhere(member, of: type) else { return nil }
        return "\(type) does not store \(member) under the key \"\(member)\" (its CodingKeys rename it or leave it out, "
            + "or the type encodes itself as one value), so SQL cannot read it from the stored JSON; "
            + "keep the member's name as its key, or use a member that has it"
    }
}
