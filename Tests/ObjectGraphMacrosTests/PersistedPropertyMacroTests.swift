import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest
import ObjectGraphMacros

final class PersistedPropertyMacroTests: XCTestCase {
    /// `@Model` adds `@ObjectGraph._PersistedProperty`, spelled with its module so that it resolves in
    /// any file. The compiler expands that attribute, but the test expansion only looks macros up by a
    /// plain name: `@ObjectGraph._PersistedProperty` would stay unexpanded even with "_PersistedProperty"
    /// in `macroSpecs`. So this test expands `@Model` first (`itemModelExpansion`, checked by
    /// `ModelMacroTests.testItemAllRoles`), then the attributes it added, spelled `@_PersistedProperty`,
    /// to get the class the compiler finally builds.
    func testItemWithPersistedProperty() {
        let afterModel = itemModelExpansion.replacingOccurrences(
            of: "@ObjectGraph._PersistedProperty", with: "@_PersistedProperty"
        )
        XCTAssertEqual(afterModel.components(separatedBy: "@_PersistedProperty").count, 3)
        assertMacroExpansion(
            afterModel,
            expandedSource: "",
            macroSpecs: [
                "Model": MacroSpec(type: ModelMacro.self, conformances: modelConformances),
                "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
            ]
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
            macroSpecs: testMacroSpecs
        )
    }

    func testNotAVariable() {
        assertMacroExpansion(
            """
            final class Item {
                @_PersistedProperty
                var (a, b): (Int, Int)
            }
            """,
            expandedSource: "",
            macroSpecs: testMacroSpecs
        )
    }
}
