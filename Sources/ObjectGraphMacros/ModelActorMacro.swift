import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@ModelActor`: gives an actor a model container and a context of its own, as SwiftData's macro does.
public struct ModelActorMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let actorDecl = declaration.as(ActorDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ObjectGraphDiagnostic.modelActorOnNonActor))
            return []
        }
        let access = actorDecl.modifiers.accessPrefix
        return [
            "\(raw: access)nonisolated let modelExecutor: any ObjectGraph.ModelExecutor",
            "\(raw: access)nonisolated let modelContainer: ObjectGraph.ModelContainer",
            """
            \(raw: access)init(modelContainer: ObjectGraph.ModelContainer) {
                let modelContext = ObjectGraph.ModelContext(modelContainer)
                self.modelExecutor = ObjectGraph.DefaultSerialModelExecutor(modelContext: modelContext)
                self.modelContainer = modelContainer
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        // The compiler lists the conformances still missing; an actor that declares ModelActor itself gets none.
        guard declaration.is(ActorDeclSyntax.self), !protocols.isEmpty else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): ObjectGraph.ModelActor {}")]
    }
}
