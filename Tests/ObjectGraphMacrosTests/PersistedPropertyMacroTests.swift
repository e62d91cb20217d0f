import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest
import ObjectGraphMacros

final class PersistedPropertyMacroTests: XCTestCase {
    /// The `Item` of `ModelMacroTests.testItemAllRoles` as the compiler finally builds it, with the
    /// accessors and the `_title`/`_count` peers of `@_PersistedProperty`.
    ///
    /// `@Model` adds the attribute spelled `@ObjectGraph._PersistedProperty`. The compiler resolves that
    /// name, but the test expansion looks macros up by plain name only, so it would leave the attribute
    /// unexpanded even with "_PersistedProperty" in `macroSpecs`. This test therefore expands in two
    /// steps, as the compiler does: it starts from `itemModelExpansion` (what `@Model` expands to) with
    /// the attribute spelled `@_PersistedProperty`.
    ///
    /// The test expansion also drops `= 0` from `count` once it has a getter and setter; the compiler
    /// keeps the initial value and passes it to the `init` accessor.
    func testItemWithPersistedProperty() {
        let afterModel = itemModelExpansion.replacingOccurrences(
            of: "@ObjectGraph._PersistedProperty", with: "@_PersistedProperty"
        )
        XCTAssertEqual(afterModel.components(separatedBy: "@_PersistedProperty\n").count, 3)
        assertMacroExpansion(
            afterModel,
            expandedSource: #"""
                final class Item {
                    var title: String {
                        @storageRestrictions(accesses: _$backingData, initializes: _title)
                        init(initialValue) {
                            _$backingData.setValue(forKey: Item._objectGraphKeyPath_title, to: initialValue)
                            _title = _ObjectGraphNoType()
                        }
                        get {
                            access(keyPath: Item._objectGraphKeyPath_title)
                            return self.getValue(forKey: Item._objectGraphKeyPath_title)
                        }
                        set {
                            withMutation(keyPath: Item._objectGraphKeyPath_title) {
                                self.setValue(forKey: Item._objectGraphKeyPath_title, to: newValue)
                            }
                        }
                    }

                    private var _title: _ObjectGraphNoType

                    private static let _objectGraphKeyPath_title = \Item.title
                    var count: Int {
                        @storageRestrictions(accesses: _$backingData, initializes: _count)
                        init(initialValue) {
                            _$backingData.setValue(forKey: Item._objectGraphKeyPath_count, to: initialValue)
                            _count = _ObjectGraphNoType()
                        }
                        get {
                            access(keyPath: Item._objectGraphKeyPath_count)
                            return self.getValue(forKey: Item._objectGraphKeyPath_count)
                        }
                        set {
                            withMutation(keyPath: Item._objectGraphKeyPath_count) {
                                self.setValue(forKey: Item._objectGraphKeyPath_count, to: newValue)
                            }
                        }
                    }

                    private var _count: _ObjectGraphNoType

                    private static let _objectGraphKeyPath_count = \Item.count

                    private var _$backingData: any ObjectGraph.BackingData<Item> = Item.createBackingData()

                    var persistentBackingData: any ObjectGraph.BackingData<Item> {
                        get {
                            _$backingData
                        }
                        set {
                            _$backingData = newValue
                        }
                    }

                    static var schemaMetadata: [ObjectGraph.Schema.PropertyMetadata] {
                        [
                        ObjectGraph.Schema.PropertyMetadata(name: "title", keypath: Item._objectGraphKeyPath_title, defaultValue: nil, metadata: nil),
                        ObjectGraph.Schema.PropertyMetadata(name: "count", keypath: Item._objectGraphKeyPath_count, defaultValue: (0 as Int), metadata: nil)
                        ]
                    }

                    required init(backingData: any ObjectGraph.BackingData<Item>) {
                        _title = _ObjectGraphNoType()
                        _count = _ObjectGraphNoType()
                        self.persistentBackingData = backingData
                    }

                    private let _$observationRegistrar = ObjectGraph._ObjectGraphObservationRegistrar()

                    @exclusivity(unchecked) nonisolated(unsafe) private var _$hasBeenRead = false

                    internal nonisolated func access<_M>(keyPath: KeyPath<Item, _M>) {
                        _$hasBeenRead = true
                        _$observationRegistrar.access(self, keyPath: keyPath)
                    }

                    internal nonisolated func withMutation<_M, _MR>(keyPath: KeyPath<Item, _M>, _ mutation: () throws -> _MR) rethrows -> _MR {
                        guard _$hasBeenRead else {
                            return try mutation()
                        }
                        return try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
                    }

                    struct _ObjectGraphNoType {
                    }
                }

                nonisolated extension Item: ObjectGraph.PersistentModel {
                }

                nonisolated extension Item: ObjectGraph._ObjectGraphObservable {
                }

                @available(*, unavailable, message: "PersistentModels are not Sendable: pass persistentModelID to other tasks, or use a ModelActor")
                extension Item: Sendable {
                }
                """#,
            macroSpecs: [
                "Model": MacroSpec(type: ModelMacro.self, conformances: modelConformances),
                "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
            ]
        )
    }

    /// The accessors route the property through the backing data and Observation; the peer is the
    /// storage the `init` accessor initialises, so that the class's initialisers can assign the property.
    func testAccessorsAndPeer() {
        assertMacroExpansion(
            """
            final class Item {
                @_PersistedProperty
                var isDone: Bool
            }
            """,
            expandedSource: #"""
                final class Item {
                    var isDone: Bool {
                        @storageRestrictions(accesses: _$backingData, initializes: _isDone)
                        init(initialValue) {
                            _$backingData.setValue(forKey: Item._objectGraphKeyPath_isDone, to: initialValue)
                            _isDone = _ObjectGraphNoType()
                        }
                        get {
                            access(keyPath: Item._objectGraphKeyPath_isDone)
                            return self.getValue(forKey: Item._objectGraphKeyPath_isDone)
                        }
                        set {
                            withMutation(keyPath: Item._objectGraphKeyPath_isDone) {
                                self.setValue(forKey: Item._objectGraphKeyPath_isDone, to: newValue)
                            }
                        }
                    }

                    private var _isDone: _ObjectGraphNoType

                    private static let _objectGraphKeyPath_isDone = \Item.isDone
                }
                """#,
            macroSpecs: testMacroSpecs
        )
    }

    /// In a generic class (no static stored properties) the accessors keep key path literals.
    func testAGenericClassKeepsKeyPathLiterals() {
        assertMacroExpansion(
            """
            final class Box<Value> {
                @_PersistedProperty
                var isDone: Bool
            }
            """,
            expandedSource: #"""
                final class Box<Value> {
                    var isDone: Bool {
                        @storageRestrictions(accesses: _$backingData, initializes: _isDone)
                        init(initialValue) {
                            _$backingData.setValue(forKey: \.isDone, to: initialValue)
                            _isDone = _ObjectGraphNoType()
                        }
                        get {
                            access(keyPath: \.isDone)
                            return self.getValue(forKey: \.isDone)
                        }
                        set {
                            withMutation(keyPath: \.isDone) {
                                self.setValue(forKey: \.isDone, to: newValue)
                            }
                        }
                    }

                    private var _isDone: _ObjectGraphNoType
                }
                """#,
            macroSpecs: testMacroSpecs
        )
    }
}
