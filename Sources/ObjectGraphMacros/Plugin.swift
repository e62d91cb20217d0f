import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in that provides ObjectGraph's SwiftData-compatible macros.
@main
struct ObjectGraphMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [
        ModelMacro.self,
        PersistedPropertyMacro.self,
        AttributeMacro.self,
        RelationshipMacro.self,
        TransientMacro.self,
        ModelActorMacro.self,
        IndexMacro.self,
        UniqueMacro.self,
    ]
}
