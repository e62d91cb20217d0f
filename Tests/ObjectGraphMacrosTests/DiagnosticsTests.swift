import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest
import ObjectGraphMacros

/// Every error of `ObjectGraphDiagnostic`, with its exact message and position.
final class DiagnosticsTests: XCTestCase {
    // MARK: - @Model on something other than a class

    private let modelOnNonClass =
        "@Model can only be applied to a class; structs, enums and actors cannot be persistent models"

    func testModelOnStruct() {
        assertMacroExpansion(
            """
            @Model struct Item {
                var title: String
            }
            """,
            expandedSource: """
                struct Item {
                    var title: String
                }
                """,
            diagnostics: [DiagnosticSpec(message: modelOnNonClass, line: 1, column: 1)],
            macroSpecs: testMacroSpecs
        )
    }

    func testModelOnEnum() {
        assertMacroExpansion(
            """
            @Model enum Kind {
                case plain
            }
            """,
            expandedSource: """
                enum Kind {
                    case plain
                }
                """,
            diagnostics: [DiagnosticSpec(message: modelOnNonClass, line: 1, column: 1)],
            macroSpecs: testMacroSpecs
        )
    }

    func testModelOnActor() {
        assertMacroExpansion(
            """
            @Model actor Store {
                var count: Int = 0
            }
            """,
            expandedSource: """
                actor Store {
                    var count: Int = 0
                }
                """,
            diagnostics: [DiagnosticSpec(message: modelOnNonClass, line: 1, column: 1)],
            macroSpecs: testMacroSpecs
        )
    }

    // MARK: - Properties @Model cannot persist

    func testPropertyWithoutTypeOrInitializer() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var x
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        var x
                    """,
                metadata: [],
                initializer: []
            ),
            diagnostics: [
                DiagnosticSpec(
                    message: "a persisted property needs a type annotation or an initial value to infer its type from",
                    line: 2,
                    column: 9
                ),
            ],
            macroSpecs: testMacroSpecs
        )
    }

    func testSeveralBindingsInOneDeclaration() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var a: Int, b: Int
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        var a: Int, b: Int
                    """,
                metadata: [],
                initializer: []
            ),
            diagnostics: [
                DiagnosticSpec(
                    message: "declare each persisted property on its own line: @Model cannot persist several bindings in one declaration",
                    line: 2,
                    column: 5
                ),
            ],
            macroSpecs: testMacroSpecs
        )
    }

    func testPropertyObservers() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var x: Int {
                    didSet {}
                }
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        var x: Int {
                            didSet {}
                        }
                    """,
                metadata: [],
                initializer: []
            ),
            diagnostics: [
                DiagnosticSpec(
                    message: "a persisted property cannot have willSet/didSet observers; use a computed property or mark it @Transient",
                    line: 2,
                    column: 16
                ),
            ],
            macroSpecs: testMacroSpecs
        )
    }

    // MARK: - @Transient

    func testTransientWithoutDefault() {
        assertMacroExpansion(
            """
            @Model final class Item {
                @Transient var x: Int
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        var x: Int
                    """,
                metadata: [],
                initializer: []
            ),
            diagnostics: [
                DiagnosticSpec(
                    message: "a @Transient property needs a default value (or to be an optional var) so that fetched models can be created",
                    line: 2,
                    column: 5
                ),
            ],
            macroSpecs: testMacroSpecs
        )
    }

    /// An optional `var` starts as nil, so it needs no default.
    func testTransientOptionalWithoutDefaultIsAccepted() {
        assertMacroExpansion(
            """
            @Model final class Item {
                @Transient var x: Int?
                @Transient var y: Optional<Int>
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        var x: Int?
                        var y: Optional<Int>
                    """,
                metadata: [],
                initializer: []
            ),
            macroSpecs: testMacroSpecs
        )
    }

    // MARK: - @Attribute and @Relationship together

    func testAttributeAndRelationshipOnOneProperty() {
        assertMacroExpansion(
            """
            @Model final class Item {
                @Attribute(.unique)
                @Relationship
                var tag: Tag?
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                        @ObjectGraph._PersistedProperty
                        var tag: Tag?
                    """,
                metadata: [
                    #"ObjectGraph.Schema.PropertyMetadata(name: "tag", keypath: Item._objectGraphKeyPath_tag, defaultValue: nil, metadata: ObjectGraph.Schema.Attribute(.unique))"#,
                ],
                initializer: ["_tag = _ObjectGraphNoType()"]
            ),
            diagnostics: [
                DiagnosticSpec(
                    message: "a property cannot be both an @Attribute and a @Relationship",
                    line: 2,
                    column: 5
                ),
            ],
            macroSpecs: testMacroSpecs
        )
    }

    // MARK: - @ModelActor on something other than an actor

    func testModelActorOnClass() {
        assertMacroExpansion(
            """
            @ModelActor final class Worker {
            }
            """,
            expandedSource: """
                final class Worker {
                }
                """,
            diagnostics: [
                DiagnosticSpec(message: "@ModelActor can only be applied to an actor", line: 1, column: 1),
            ],
            macroSpecs: testMacroSpecs
        )
    }

    // MARK: - Found by review: shapes that compiled into broken code or were silently not persisted

    func testTransientOptionalLetWithoutValue() {
        assertMacroExpansion(
            """
            @Model final class Item {
                @Transient let cache: Int?
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: "    let cache: Int?",
                metadata: [],
                initializer: []),
            diagnostics: [DiagnosticSpec(
                message: "a @Transient property needs a default value (or to be an optional var) so that fetched models can be created",
                line: 2, column: 5)],
            macroSpecs: testMacroSpecs
        )
    }

    func testDestructuringPattern() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var (a, b): (Int, Int) = (1, 2)
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: "    var (a, b): (Int, Int) = (1, 2)",
                metadata: [],
                initializer: []),
            diagnostics: [DiagnosticSpec(
                message: "a persisted property needs a name of its own: declare each one separately, or mark this one @Transient",
                line: 2, column: 9)],
            macroSpecs: testMacroSpecs
        )
    }

    func testPropertyInsideIfConfig() {
        assertMacroExpansion(
            """
            @Model final class Item {
                #if DEBUG
                var debugNote: String = ""
                #endif
            }
            """,
            expandedSource: expandedModel(
                "Item",
                members: """
                    #if DEBUG
                    var debugNote: String = ""
                    #endif
                """,
                metadata: [],
                initializer: []),
            diagnostics: [DiagnosticSpec(
                message: "a persisted property cannot be declared inside #if: declare it unconditionally, or mark it @Transient",
                line: 3, column: 5)],
            macroSpecs: testMacroSpecs
        )
    }
}
