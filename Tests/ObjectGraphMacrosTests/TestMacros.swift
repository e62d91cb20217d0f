import SwiftSyntaxMacros
import ObjectGraphMacros

/// Every macro of ObjectGraph under the name the `ObjectGraph` module declares it with,
/// so that a test expands a model the way the compiler does.
let testMacros: [String: Macro.Type] = [
    "Model": ModelMacro.self,
    "_PersistedProperty": PersistedPropertyMacro.self,
    "Attribute": AttributeMacro.self,
    "Relationship": RelationshipMacro.self,
    "Transient": TransientMacro.self,
    "ModelActor": ModelActorMacro.self,
]
