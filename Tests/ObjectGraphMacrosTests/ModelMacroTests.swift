import SwiftSyntaxMacros
import SwiftSyntaxMacrosTestSupport
import XCTest
import ObjectGraphMacros

final class ModelMacroTests: XCTestCase {
    func testItemAllRoles() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var title: String
                var count: Int = 0
            }
            """,
            expandedSource: "",
            macros: ["Model": ModelMacro.self]
        )
    }

    func testPublicClass() {
        assertMacroExpansion(
            """
            @Model public final class Item {
                public var title: String
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testPackageClass() {
        assertMacroExpansion(
            """
            @Model package final class Item {
                package var title: String
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testLetProperties() {
        assertMacroExpansion(
            """
            @Model final class Item {
                let serial: Int
                let kind: String = "plain"
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testInferredTypeVar() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var createdAt = Date.now
            }
            """,
            expandedSource: "",
            macros: testMacros
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
            expandedSource: "",
            macros: testMacros
        )
    }

    func testTransient() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var title: String
                @Transient var cache: Int = 0
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testComputedAndStaticPropertiesLeftAlone() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var title: String
                var upperTitle: String { title.uppercased() }
                var shout: String {
                    get { title + "!" }
                    set { title = newValue }
                }
                static var defaultTitle: String = "Untitled"
                static let version = 2
                lazy var formatter: Formatter = Formatter()
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testAttributeMetadata() {
        assertMacroExpansion(
            """
            @Model final class Item {
                @Attribute(.unique, originalName: "old") var name: String
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testRelationshipMetadata() {
        assertMacroExpansion(
            """
            @Model final class Item {
                @Relationship(deleteRule: .cascade, inverse: \\Tag.items) var tags: [Tag] = []
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testModelNestedInEnum() {
        assertMacroExpansion(
            """
            enum V1 {
                @Model final class Note {
                    var text: String
                }
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testPropertyNamedID() {
        assertMacroExpansion(
            """
            @Model final class Item {
                var id: UUID
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }

    func testEmptyModel() {
        assertMacroExpansion(
            """
            @Model final class Empty {
            }
            """,
            expandedSource: "",
            macros: testMacros
        )
    }
}
