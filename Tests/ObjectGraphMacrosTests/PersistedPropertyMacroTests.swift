import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest
import ObjectGraphMacros

final class PersistedPropertyMacroTests: XCTestCase {
    func testItemWithPersistedProperty() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var title: String
                var count: Int = 0
            }
            """,
            expandedSource: "",
            macros: ["Model": ModelMacro.self, "_PersistedProperty": PersistedPropertyMacro.self]
        )
    }

    func testStandalone() {
        assertMacroExpansion(
            """
            final class Item {
                @_PersistedProperty
                var title: String
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }
}
