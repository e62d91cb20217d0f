import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest
import ObjectGraphMacros

final class DiagnosticsTests: XCTestCase {
    func testModelOnStruct() {
        assertMacroExpansion(
            """
            @Model struct Item {
                var title: String
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testModelOnEnum() {
        assertMacroExpansion(
            """
            @Model enum Kind {
                case plain
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testModelOnActor() {
        assertMacroExpansion(
            """
            @Model actor Store {
                var count: Int = 0
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testMissingTypeAndInitializer() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var x
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testMultipleBindings() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var a: Int, b: Int
            }
            """,
            expandedSource: "",
            macros: testMacros
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
            expandedSource: "",
            macros: testMacros
        )
    }

    func testTransientWithoutDefault() {
        assertMacroExpansion(
            """
            @Model final class Item {
                @Transient var x: Int
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testTransientOptionalWithoutDefault() {
        assertMacroExpansion(
            """
            @Model final class Item {
                @Transient var x: Int?
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testAttributeAndRelationship() {
        assertMacroExpansion(
            """
            @Model final class Item {
                @Attribute(.unique) @Relationship var tag: Tag?
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testModelActorOnClass() {
        assertMacroExpansion(
            """
            @ModelActor final class Worker {
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }
}
