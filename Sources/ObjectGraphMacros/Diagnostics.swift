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
    case indexWithoutModelType
    case indexOutsideClass
    case indexWithoutIndices
    case indexNotAnArray
    case emptyIndex
    case multipleIndexMacros

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
        case .indexWithoutModelType:
            "#Index needs the model class as its generic argument: #Index<Snippet>([\\.title])"
        case .indexOutsideClass:
            "#Index can only be used in the body of a @Model class"
        case .indexWithoutIndices:
            "#Index needs at least one index: an array of key paths, such as #Index<Snippet>([\\.title])"
        case .indexNotAnArray:
            "each index of #Index is an array of key paths: write [\\.title], or [\\.a, \\.b] for an index on both"
        case .emptyIndex:
            "an index needs at least one key path: remove the empty array or name the properties to index"
        case .multipleIndexMacros:
            "a model can use #Index once: list all its indexes in one #Index, one array per index"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "ObjectGraphMacros", id: rawValue) }
    var severity: DiagnosticSeverity { .error }
}

/// `#Index<Other>` in the body of another class: its key paths could not name this model's columns.
struct IndexOfOtherTypeDiagnostic: DiagnosticMessage {
    let written: String
    let enclosing: String

    var message: String {
        "#Index<\(written)> is declared in \(enclosing): the generic argument must be the model class itself, #Index<\(enclosing)>"
    }
    var diagnosticID: MessageID { MessageID(domain: "ObjectGraphMacros", id: "indexOfOtherType") }
    var severity: DiagnosticSeverity { .error }
}

struct ObjectGraphMacroError: Error {}
