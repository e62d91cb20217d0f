import SwiftSyntaxMacroExpansion
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
            expandedSource: """
                actor Worker {

                    nonisolated let modelExecutor: any ObjectGraph.ModelExecutor

                    nonisolated let modelContainer: ObjectGraph.ModelContainer

                    init(modelContainer: ObjectGraph.ModelContainer) {
                        let modelContext = ObjectGraph.ModelContext(modelContainer)
                        self.modelExecutor = ObjectGraph.DefaultSerialModelExecutor(modelContext: modelContext)
                        self.modelContainer = modelContainer
                    }
                }

                extension Worker: ObjectGraph.ModelActor {
                }
                """,
            macroSpecs: testMacroSpecs
        )
    }

    func testPublicActorGetsPublicMembers() {
        assertMacroExpansion(
            """
            @ModelActor public actor Worker {
                func count() -> Int { 0 }
            }
            """,
            expandedSource: """
                public actor Worker {
                    func count() -> Int { 0 }

                    public nonisolated let modelExecutor: any ObjectGraph.ModelExecutor

                    public nonisolated let modelContainer: ObjectGraph.ModelContainer

                    public init(modelContainer: ObjectGraph.ModelContainer) {
                        let modelContext = ObjectGraph.ModelContext(modelContainer)
                        self.modelExecutor = ObjectGraph.DefaultSerialModelExecutor(modelContext: modelContext)
                        self.modelContainer = modelContainer
                    }
                }

                extension Worker: ObjectGraph.ModelActor {
                }
                """,
            macroSpecs: testMacroSpecs
        )
    }
}
