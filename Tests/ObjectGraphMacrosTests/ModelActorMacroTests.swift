import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest
import ObjectGraphMacros

final class ModelActorMacroTests: XCTestCase {
    func testActor() {
        assertMacroExpansion(
            """
            @ModelActor actor Worker {}
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testPublicActor() {
        assertMacroExpansion(
            """
            @ModelActor public actor Worker {
                func count() -> Int { 0 }
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }
}
