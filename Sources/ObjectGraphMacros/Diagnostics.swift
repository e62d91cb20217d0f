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

/// A misuse of `#Index` or `#Unique`, told in the words of the macro written.
struct KeyPathListDiagnostic: DiagnosticMessage {
    enum Problem {
        case withoutModelType
        case outsideClass
        case withoutElements
        case notAnArray
        case emptyElement
        /// The macro used twice in one class: each use declares the same static member.
        case repeated
        /// `#Index<Other>` in the body of another class: its key paths could not name this model's columns.
        case otherModelType(written: String, enclosing: String)
    }

    let macro: KeyPathListMacro
    let problem: Problem

    var message: String {
        let name: String = macro.spelling
        let noun: String = macro.elementNoun
        let example = #"<Snippet>([\.title])"#
        switch problem {
        case .withoutModelType:
            return "\(name) needs the model class as its generic argument: \(name)\(example)"
        case .outsideClass:
            return "\(name) can only be used in the body of a @Model class"
        case .withoutElements:
            return "\(name) needs at least one \(noun): an array of key paths, such as \(name)\(example)"
        case .notAnArray:
            let forms = #"write [\.title], or [\.a, \.b] for"#
            return "each \(noun) of \(name) is an array of key paths: \(forms) \(macro.severalPropertiesMeaning)"
        case .emptyElement:
            return "\(macro.elementNounWithArticle) needs at least one key path: remove the empty array or \(macro.emptyElementFix)"
        case .repeated:
            return "a model can use \(name) once: list all its \(macro.elementNounPlural) in one \(name), one array per \(noun)"
        case .otherModelType(let written, let enclosing):
            return "\(name)<\(written)> is declared in \(enclosing): the generic argument must be the model class itself, \(name)<\(enclosing)>"
        }
    }

    var diagnosticID: MessageID {
        let problemName: String = switch problem {
        case .withoutModelType: "withoutModelType"
        case .outsideClass: "outsideClass"
        case .withoutElements: "withoutElements"
        case .notAnArray: "notAnArray"
        case .emptyElement: "emptyElement"
        case .repeated: "repeated"
        case .otherModelType: "otherModelType"
        }
        return MessageID(domain: "ObjectGraphMacros", id: macro.elementNoun + "." + problemName)
    }

    var severity: DiagnosticSeverity { .error }
}

struct ObjectGraphMacroError: Error {}
