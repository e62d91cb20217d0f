import SwiftDiagnostics

/// Every error and warning the ObjectGraph macros can report, with a message that says how to fix it.
enum ObjectGraphDiagnostic: String, DiagnosticMessage {
    case modelOnNonClass
    case missingTypeAndInitializer
    case multipleBindings
    case propertyObservers
    case transientWithoutDefault
    case attributeAndRelationship
    case modelActorOnNonActor
    case destructuringPattern
    case conditionalProperty

    var message: String {
        switch self {
        case .modelOnNonClass:
            "@Model can only be applied to a class; structs, enums and actors cannot be persistent models"
        case .missingTypeAndInitializer:
            "a persisted property needs a type annotation or an initial value to infer its type from"
        case .multipleBindings:
            "declare each persisted property on its own line: @Model cannot persist several bindings in one declaration"
        case .propertyObservers:
            "a persisted property cannot have willSet/didSet observers; use a computed property or mark it @Transient"
        case .transientWithoutDefault:
            "a @Transient property needs a default value (or to be an optional var) so that fetched models can be created"
        case .attributeAndRelationship:
            "a property cannot be both an @Attribute and a @Relationship"
        case .modelActorOnNonActor:
            "@ModelActor can only be applied to an actor"
        case .destructuringPattern:
            "a persisted property needs a name of its own: declare each one separately, or mark this one @Transient"
        case .conditionalProperty:
            "a persisted property cannot be declared inside #if: declare it unconditionally, or mark it @Transient"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "ObjectGraphMacros", id: rawValue) }
    var severity: DiagnosticSeverity { .error }
}

struct ObjectGraphMacroError: Error {}
