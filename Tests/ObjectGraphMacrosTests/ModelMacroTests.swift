import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest
import ObjectGraphMacros

/// What `@Model` expands `Item` to, before the compiler expands the `@ObjectGraph._PersistedProperty`
/// attributes it adds. `PersistedPropertyMacroTests` expands them from here.
let itemModelExpansion = #"""
    final class Item {
        @ObjectGraph._PersistedProperty
        var title: String
        @ObjectGraph._PersistedProperty
        var count: Int = 0

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
    """#

final class ModelMacroTests: XCTestCase {
    // MARK: - All roles

    /// Only `@Model` is expanded, so the `@ObjectGraph._PersistedProperty` attributes of the
    /// member-attribute role stay visible next to the members and extensions of the other roles.
    func testItemAllRoles() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var title: String
                var count: Int = 0
            }
            """,
            expandedSource: itemModelExpansion,
            macroSpecs: ["Model": MacroSpec(type: ModelMacro.self, conformances: modelConformances)]
        )
    }

    func testEmptyModel() {
        assertMacroExpansion(
            """
            @Model final class Empty {
            }
            """,
            expandedSource: expandedModel("Empty", members: "", metadata: [], initializer: []),
            macroSpecs: testMacroSpecs
        )
    }

    // MARK: - Extension role

    /// The compiler passes only the conformances the class still lacks.
    func testExtensionRoleAddsOnlyTheMissingConformances() {
        assertMacroExpansion(
            """
            @Model final class Item: Observable {
            }
            """,
            expandedSource: """
                final class Item: Observable {

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
                        []
                    }

                    required init(backingData: any ObjectGraph.BackingData<Item>) {
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
                """,
            macroSpecs: ["Model": MacroSpec(type: ModelMacro.self, conformances: ["PersistentModel"])]
        )
    }

    /// The compiler may spell the conformances with their module; only the protocol name counts.
    func testExtensionRoleAcceptsQualifiedConformances() {
        assertMacroExpansion(
            """
            @Model final class Empty {
            }
            """,
            expandedSource: expandedModel("Empty", members: "", metadata: [], initializer: []),
            macroSpecs: [
                "Model": MacroSpec(
                    type: ModelMacro.self,
                    conformances: ["Observation.Observable", "ObjectGraph.PersistentModel", "Swift.Sendable"]
                ),
            ]
        )
    }

    /// In a module whose default isolation is the main actor, an extension takes that isolation unless it
    /// says otherwise, so the conformances are declared `nonisolated`; a class isolated to the main actor
    /// conforms to `PersistentModel` on the main actor only (an isolated conformance), since its
    /// generated members are isolated like the class.
    func testMainActorClassConformsToPersistentModelOnTheMainActor() {
        let plain = expandedModel("Easel", declaration: "@MainActor\nfinal class Easel", members: "", metadata: [], initializer: [])
        let isolated = plain.replacingOccurrences(
            of: "nonisolated extension Easel: ObjectGraph.PersistentModel",
            with: "nonisolated extension Easel: @MainActor ObjectGraph.PersistentModel")
        XCTAssertNotEqual(isolated, plain)
        assertMacroExpansion(
            """
            @MainActor
            @Model final class Easel {
            }
            """,
            expandedSource: isolated,
            macroSpecs: testMacroSpecs
        )
    }

    /// A class isolated to a global actor of the program's own conforms on that actor, as a
    /// main-actor class does on the main actor; other attributes leave the conformance nonisolated.
    func testGlobalActorClassConformsToPersistentModelOnItsActor() {
        let plain = expandedModel("Ledger", declaration: "@Storage.LedgerActor\nfinal class Ledger", members: "", metadata: [], initializer: [])
        let isolated = plain.replacingOccurrences(
            of: "nonisolated extension Ledger: ObjectGraph.PersistentModel",
            with: "nonisolated extension Ledger: @Storage.LedgerActor ObjectGraph.PersistentModel")
        XCTAssertNotEqual(isolated, plain)
        assertMacroExpansion(
            """
            @Storage.LedgerActor
            @Model final class Ledger {
            }
            """,
            expandedSource: isolated,
            macroSpecs: testMacroSpecs
        )
        let unisolated = expandedModel(
            "Ledger", declaration: "@available(macOS 14, *) @preconcurrency\nfinal class Ledger", members: "", metadata: [], initializer: [])
        XCTAssertTrue(unisolated.contains("nonisolated extension Ledger: ObjectGraph.PersistentModel"))
        assertMacroExpansion(
            """
            @available(macOS 14, *) @preconcurrency
            @Model final class Ledger {
            }
            """,
            expandedSource: unisolated,
            macroSpecs: testMacroSpecs
        )
    }

    // MARK: - Access level

    func testPublicClassGetsPublicMembers() {
        assertMacroExpansion(
            """
            @Model public final class Item {
                public var title: String
            }
            """,
            expandedSource: #"""
                public final class Item {
                    @ObjectGraph._PersistedProperty
                    public var title: String

                    private var _$backingData: any ObjectGraph.BackingData<Item> = Item.createBackingData()

                    public var persistentBackingData: any ObjectGraph.BackingData<Item> {
                        get {
                            _$backingData
                        }
                        set {
                            _$backingData = newValue
                        }
                    }

                    public static var schemaMetadata: [ObjectGraph.Schema.PropertyMetadata] {
                        [
                        ObjectGraph.Schema.PropertyMetadata(name: "title", keypath: Item._objectGraphKeyPath_title, defaultValue: nil, metadata: nil)
                        ]
                    }

                    public required init(backingData: any ObjectGraph.BackingData<Item>) {
                        _title = _ObjectGraphNoType()
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
            macroSpecs: testMacroSpecs
        )
    }

    func testOpenClassGetsPublicMembers() {
        assertMacroExpansion(
            """
            @Model open class Item {
            }
            """,
            expandedSource: expandedModel(
                "Item", declaration: "open class Item", access: "public ", members: "", metadata: [], initializer: []
            ),
            macroSpecs: testMacroSpecs
        )
    }

    /// A generic class cannot hold static stored properties: its key paths stay literals, in the
    /// accessors (see `PersistedPropertyMacroTests`) and in `schemaMetadata`.
    func testGenericClassKeepsKeyPathLiterals() {
        assertMacroExpansion(
            """
            @Model final class Box<Value> {
                var count: Int
            }
            """,
            expandedSource: expandedModel(
                "Box",
                declaration: "final class Box<Value>",
                members: """
                        @ObjectGraph._PersistedProperty
                        var count: Int
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "count", keypath: \Box.count, defaultValue: nil, metadata: nil)"#,
                ],
                initializer: ["_count = _ObjectGraphNoType()"]
            ),
            macroSpecs: testMacroSpecs
        )
    }

    func testPackageClassGetsPackageMembers() {
        assertMacroExpansion(
            """
            @Model package final class Item {
                package var title: String
            }
            """,
            expandedSource: expandedModel(
                "Item",
                declaration: "package final class Item",
                access: "package ",
                members: """
                        @ObjectGraph._PersistedProperty
                        package var title: String
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "title", keypath: Item._objectGraphKeyPath_title, defaultValue: nil, metadata: nil)"#,
                ],
                initializer: ["_title = _ObjectGraphNoType()"]
            ),
            macroSpecs: testMacroSpecs
        )
    }

    // MARK: - Kinds of properties

    /// `let`s get no accessors; `init(backingData:)` assigns only those without an initial value.
    func testLetPropertiesAreStoredInInstance() {
        assertMacroExpansion(
            """
            @Model final class Item {
                let serial: Int
                let kind: String = "plain"
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        let serial: Int
                        let kind: String = "plain"
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "serial", keypath: \Item.serial, defaultValue: nil, metadata: nil, isStoredInInstance: true)"#,
                    #"ObjectGraph.Schema.PropertyMetadata(name: "kind", keypath: \Item.kind, defaultValue: ("plain" as String), metadata: nil, isStoredInInstance: true)"#,
                ],
                initializer: [#"self.serial = backingData.getValue(forKey: \Item.serial)"#]
            ),
            macroSpecs: testMacroSpecs
        )
    }

    /// Swift allows no accessors on a `var` without a type annotation, so it is stored in the instance.
    func testVarWithInferredTypeIsStoredInInstance() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var createdAt = Date.now
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        var createdAt = Date.now
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "createdAt", keypath: \Item.createdAt, defaultValue: Date.now, metadata: nil, isStoredInInstance: true)"#,
                ],
                initializer: [#"self.createdAt = backingData.getValue(forKey: \Item.createdAt)"#]
            ),
            macroSpecs: testMacroSpecs
        )
    }

    func testOptionals() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var note: String?
                var rating: Optional<Int> = 3
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        @ObjectGraph._PersistedProperty
                        var note: String?
                        @ObjectGraph._PersistedProperty
                        var rating: Optional<Int> = 3
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "note", keypath: Item._objectGraphKeyPath_note, defaultValue: nil, metadata: nil)"#,
                    #"ObjectGraph.Schema.PropertyMetadata(name: "rating", keypath: Item._objectGraphKeyPath_rating, defaultValue: (3 as Optional<Int>), metadata: nil)"#,
                ],
                initializer: ["_note = _ObjectGraphNoType()", "_rating = _ObjectGraphNoType()"]
            ),
            macroSpecs: testMacroSpecs
        )
    }

    /// `@Transient` expands to nothing; `@Model` leaves the property out of the schema and alone.
    func testTransientPropertyIsLeftOutOfTheSchema() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var title: String
                @Transient var cache: Int = 0
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        @ObjectGraph._PersistedProperty
                        var title: String
                        var cache: Int = 0
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "title", keypath: Item._objectGraphKeyPath_title, defaultValue: nil, metadata: nil)"#,
                ],
                initializer: ["_title = _ObjectGraphNoType()"]
            ),
            macroSpecs: testMacroSpecs
        )
    }

    func testComputedStaticAndLazyPropertiesAreLeftAlone() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var title: String
                var upperTitle: String { title.uppercased() }
                var shout: String {
                    get { title + "!" }
                    set { title = newValue }
                }
                static let defaultTitle = "Untitled"
                static var version: Int { 2 }
                class var kind: String { "item" }
                lazy var formatter: Formatter = Formatter()
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        @ObjectGraph._PersistedProperty
                        var title: String
                        var upperTitle: String { title.uppercased() }
                        var shout: String {
                            get { title + "!" }
                            set { title = newValue }
                        }
                        static let defaultTitle = "Untitled"
                        static var version: Int { 2 }
                        class var kind: String { "item" }
                        lazy var formatter: Formatter = Formatter()
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "title", keypath: Item._objectGraphKeyPath_title, defaultValue: nil, metadata: nil)"#,
                ],
                initializer: ["_title = _ObjectGraphNoType()"]
            ),
            macroSpecs: testMacroSpecs
        )
    }

    func testPropertyNamedID() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var id: UUID
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        @ObjectGraph._PersistedProperty
                        var id: UUID
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "id", keypath: Item._objectGraphKeyPath_id, defaultValue: nil, metadata: nil)"#,
                ],
                initializer: ["_id = _ObjectGraphNoType()"]
            ),
            macroSpecs: testMacroSpecs
        )
    }

    // MARK: - @Attribute and @Relationship

    func testAttributeBecomesSchemaAttribute() {
        assertMacroExpansion(
            """
            @Model final class Item {
                @Attribute(.unique, originalName: "old") var name: String
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        @ObjectGraph._PersistedProperty var name: String
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "name", keypath: Item._objectGraphKeyPath_name, defaultValue: nil, metadata: ObjectGraph.Schema.Attribute(.unique, originalName: "old"))"#,
                ],
                initializer: ["_name = _ObjectGraphNoType()"]
            ),
            macroSpecs: testMacroSpecs
        )
    }

    /// An `@Attribute` without arguments, and one spelled with its module, which the test expansion
    /// leaves in place (the compiler expands it to nothing as well).
    func testAttributeWithoutArgumentsAndQualifiedAttribute() {
        assertMacroExpansion(
            """
            @Model final class Item {
                @Attribute var plain: Int = 1
                @ObjectGraph.Attribute(.externalStorage) var blob: Data
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        @ObjectGraph._PersistedProperty var plain: Int = 1
                        @ObjectGraph.Attribute(.externalStorage)
                        @ObjectGraph._PersistedProperty var blob: Data
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "plain", keypath: Item._objectGraphKeyPath_plain, defaultValue: (1 as Int), metadata: ObjectGraph.Schema.Attribute())"#,
                    #"ObjectGraph.Schema.PropertyMetadata(name: "blob", keypath: Item._objectGraphKeyPath_blob, defaultValue: nil, metadata: ObjectGraph.Schema.Attribute(.externalStorage))"#,
                ],
                initializer: ["_plain = _ObjectGraphNoType()", "_blob = _ObjectGraphNoType()"]
            ),
            macroSpecs: testMacroSpecs
        )
    }

    func testRelationshipBecomesSchemaRelationship() {
        assertMacroExpansion(
            #"""
            @Model final class Item {
                @Relationship(deleteRule: .cascade, inverse: \Tag.items) var tags: [Tag] = []
            }
            """#,
            expandedSource: expandedModel(
                "Item",
                members: """
                        @ObjectGraph._PersistedProperty var tags: [Tag] = []
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "tags", keypath: Item._objectGraphKeyPath_tags, defaultValue: ([] as [Tag]), metadata: ObjectGraph.Schema.Relationship(deleteRule: .cascade, inverse: \Tag.items))"#,
                ],
                initializer: ["_tags = _ObjectGraphNoType()"]
            ),
            macroSpecs: testMacroSpecs
        )
    }

    // MARK: - Nesting

    /// Inside the class its plain name is enough; the extensions need the qualified one.
    func testModelNestedInEnum() {
        assertMacroExpansion(
            """
            enum V1 {
                @Model final class Note {
                    var text: String
                }
            }
            """,
            expandedSource: #"""
                enum V1 {
                    final class Note {
                        @ObjectGraph._PersistedProperty
                        var text: String

                        private var _$backingData: any ObjectGraph.BackingData<Note> = Note.createBackingData()

                        var persistentBackingData: any ObjectGraph.BackingData<Note> {
                            get {
                                _$backingData
                            }
                            set {
                                _$backingData = newValue
                            }
                        }

                        static var schemaMetadata: [ObjectGraph.Schema.PropertyMetadata] {
                            [
                            ObjectGraph.Schema.PropertyMetadata(name: "text", keypath: Note._objectGraphKeyPath_text, defaultValue: nil, metadata: nil)
                            ]
                        }

                        required init(backingData: any ObjectGraph.BackingData<Note>) {
                            _text = _ObjectGraphNoType()
                            self.persistentBackingData = backingData
                        }

                        private let _$observationRegistrar = ObjectGraph._ObjectGraphObservationRegistrar()

                        @exclusivity(unchecked) nonisolated(unsafe) private var _$hasBeenRead = false

                        internal nonisolated func access<_M>(keyPath: KeyPath<Note, _M>) {
                            _$hasBeenRead = true
                            _$observationRegistrar.access(self, keyPath: keyPath)
                        }

                        internal nonisolated func withMutation<_M, _MR>(keyPath: KeyPath<Note, _M>, _ mutation: () throws -> _MR) rethrows -> _MR {
                            guard _$hasBeenRead else {
                                return try mutation()
                            }
                            return try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
                        }

                        struct _ObjectGraphNoType {
                        }
                    }
                }

                nonisolated extension V1.Note: ObjectGraph.PersistentModel {
                }

                nonisolated extension V1.Note: ObjectGraph._ObjectGraphObservable {
                }

                @available(*, unavailable, message: "PersistentModels are not Sendable: pass persistentModelID to other tasks, or use a ModelActor")
                extension V1.Note: Sendable {
                }
                """#,
            macroSpecs: testMacroSpecs
        )
    }
}
