import Foundation

#if !canImport(ObjectiveC)
/// The name a value transformer is registered under: Foundation's `NSValueTransformerName`, which
/// swift-corelibs-foundation does not have.
public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public init(_ rawValue: String) {
        self.rawValue = rawValue
    }
}

/// Foundation's `ValueTransformer` (`NSValueTransformer`), which swift-corelibs-foundation does not
/// have, so that a SwiftData model with `@Attribute(.transformable(by:))` and its transformer class
/// compile with `import ObjectGraph` on Linux. A subclass overrides the same methods as on Apple's
/// platforms; for a store, `transformedValue(_:)` turns the property's value into `Data` and
/// `reverseTransformedValue(_:)` turns that `Data` back.
///
/// Not here: `ValueTransformer(forName:)`, which returns the registered instance, a thing a Swift
/// initializer cannot do; `ValueTransformer.registered(forName:)` does it.
open class ValueTransformer {
    public required init() {}

    /// The class of the values `transformedValue(_:)` returns.
    open class func transformedValueClass() -> AnyClass { NSObject.self }

    /// Whether `reverseTransformedValue(_:)` undoes `transformedValue(_:)`. A store needs it to read
    /// a value back.
    open class func allowsReverseTransformation() -> Bool { true }

    open func transformedValue(_ value: Any?) -> Any? { value }

    /// By default, `transformedValue(_:)` again where reverse transformation is allowed, as in Foundation.
    open func reverseTransformedValue(_ value: Any?) -> Any? {
        Swift.type(of: self).allowsReverseTransformation() ? transformedValue(value) : nil
    }

    /// Registers `transformer` under `name` (nil removes the name), for `.transformable(by: "name")`.
    open class func setValueTransformer(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
        TransformerRegistry.shared.set(transformer, forName: name.rawValue)
    }

    /// The names registered with `setValueTransformer(_:forName:)`.
    open class func valueTransformerNames() -> [NSValueTransformerName] {
        TransformerRegistry.shared.names().map(NSValueTransformerName.init(rawValue:))
    }

    /// The transformer registered under `name`: what Foundation's `ValueTransformer(forName:)` returns.
    public static func registered(forName name: NSValueTransformerName) -> ValueTransformer? {
        TransformerRegistry.shared.transformer(named: name.rawValue)
    }
}
#endif

/// The transformers an attribute names: registered by name with `ValueTransformer.setValueTransformer`,
/// and the types `.transformable(by:)` was given, so that a schema made from stored text finds them.
final class TransformerRegistry: @unchecked Sendable {
    static let shared = TransformerRegistry()

    private let lock = NSLock()
    private var byName: [String: ValueTransformer] = [:]
    private var types: [String: ValueTransformer.Type] = [:]

    func set(_ transformer: ValueTransformer?, forName name: String) {
        lock.withLock { byName[name] = transformer }
    }

    func names() -> [String] {
        lock.withLock { byName.keys.sorted() }
    }

    func transformer(named name: String) -> ValueTransformer? {
        lock.withLock { byName[name] }
    }

    func register(_ type: ValueTransformer.Type, as key: String) {
        lock.withLock { types[key] = type }
    }

    /// An instance of the transformer an attribute names: a new one of a type, or the one registered by name.
    func transformer(for reference: Schema.Attribute.TransformerReference) -> ValueTransformer? {
        switch reference {
        case .type(let key): lock.withLock { types[key] }.map { $0.init() }
        case .name(let name): transformer(named: name)
        }
    }
}
