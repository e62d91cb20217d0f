import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import ObjectGraphMacros

/// Every macro of ObjectGraph under the name the `ObjectGraph` module declares it with.
let testMacros: [String: Macro.Type] = [
    "Model": ModelMacro.self,
    "_PersistedProperty": PersistedPropertyMacro.self,
    "Attribute": AttributeMacro.self,
    "Relationship": RelationshipMacro.self,
    "Transient": TransientMacro.self,
    "ModelActor": ModelActorMacro.self,
    "Index": IndexMacro.self,
    "Unique": UniqueMacro.self,
]

/// The conformances the compiler passes to the extension role of `@Model` for a class that has none
/// of them yet: those of `@attached(extension, conformances: Observable, PersistentModel)`, spelled as
/// in that declaration (checked with `SWIFT_DUMP_PLUGIN_MESSAGING=1`). Without them the extension role
/// generates nothing, as it does for a class that already conforms to both protocols.
let modelConformances: [TypeSyntax] = ["Observable", "PersistentModel", "Sendable"]

/// `testMacros` with the conformances the compiler passes to the extension roles of `@Model` and
/// `@ModelActor`, so that their extensions are generated as in a real build.
let testMacroSpecs: [String: MacroSpec] = testMacros.mapValues { macro in
    switch macro {
    case is ModelMacro.Type: MacroSpec(type: macro, conformances: modelConformances)
    case is ModelActorMacro.Type: MacroSpec(type: macro, conformances: ["ModelActor"])
    default: MacroSpec(type: macro)
    }
}

/// The source `@Model` expands a top-level class to, for tests that check only some parts of it:
/// the class's own members as written (with any `@ObjectGraph._PersistedProperty` the member-attribute
/// role adds), then the members the member role generates around `metadata` (the entries of
/// `schemaMetadata`) and `initializer` (the lines of `init(backingData:)` before the backing data is
/// set), then the extensions of the extension role.
///
/// `ModelMacroTests.testItemAllRoles` spells out a whole expansion without this helper.
func expandedModel(
    _ name: String,
    declaration: String? = nil,
    access: String = "",
    members: String,
    metadata: [String],
    initializer: [String]
) -> String {
    let metadataList = metadata.isEmpty
        ? "        []"
        : "        [\n" + metadata.map { "        " + $0 }.joined(separator: ",\n") + "\n        ]"
    let initializerLines = (initializer + ["self.persistentBackingData = backingData"])
        .map { "        " + $0 }.joined(separator: "\n")
    return """
        \(declaration ?? "final class \(name)") {
        \(members.isEmpty ? "" : members + "\n")
            private var _$backingData: any ObjectGraph.BackingData<\(name)> = \(name).createBackingData()

            \(access)var persistentBackingData: any ObjectGraph.BackingData<\(name)> {
                get {
                    _$backingData
                }
                set {
                    _$backingData = newValue
                }
            }

            \(access)static var schemaMetadata: [ObjectGraph.Schema.PropertyMetadata] {
        \(metadataList)
            }

            \(access)required init(backingData: any ObjectGraph.BackingData<\(name)>) {
        \(initializerLines)
            }

            private let _$observationRegistrar = ObjectGraph._ObjectGraphObservationRegistrar()

            @exclusivity(unchecked) nonisolated(unsafe) private var _$hasBeenRead = false

            internal nonisolated func access<_M>(keyPath: KeyPath<\(name), _M>) {
                _$hasBeenRead = true
                _$observationRegistrar.access(self, keyPath: keyPath)
            }

            internal nonisolated func withMutation<_M, _MR>(keyPath: KeyPath<\(name), _M>, _ mutation: () throws -> _MR) rethrows -> _MR {
                guard _$hasBeenRead else {
                    return try mutation()
                }
                return try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
            }

            struct _ObjectGraphNoType {
            }
        }

        nonisolated extension \(name): ObjectGraph.PersistentModel {
        }

        nonisolated extension \(name): ObjectGraph._ObjectGraphObservable {
        }

        @available(*, unavailable, message: "PersistentModels are not Sendable: pass persistentModelID to other tasks, or use a ModelActor")
        extension \(name): Sendable {
        }
        """
}
