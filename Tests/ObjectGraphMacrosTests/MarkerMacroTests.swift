import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest
import ObjectGraphMacros

/// `@Attribute`, `@Relationship` and `@Transient` only mark properties for `@Model`: on their own they
/// expand to nothing.
final class MarkerMacroTests: XCTestCase {
    func testMarkersExpandToNothing() {
        assertMacroExpansion(
            #"""
            final class Item {
                @Attribute(.unique, originalName: "old")
                var name: String = ""
                @Relationship(deleteRule: .cascade, inverse: \Tag.items)
                var tags: [Tag] = []
                @Transient
                var cache: Int = 0
            }
            """#,
            expandedSource: """
                final class Item {
                    var name: String = ""
                    var tags: [Tag] = []
                    var cache: Int = 0
                }
                """,
            macroSpecs: testMacroSpecs
        )
    }
}
