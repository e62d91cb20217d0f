import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// How `@Model` stores one property of a model class.
enum PersistenceKind {
    /// A `var` with a type annotation: its accessors go through the backing data and are observed.
    case managed
    /// A `let`, or a `var` whose type is inferred from its initial value: Swift allows no accessors on it,
    /// so it stays a stored property; the context reads it through its key path when it saves and
    /// `init(backingData:)` assigns it when a fetch creates the model.
    case stored
    /// `@Transient`, computed, `static` and `lazy` properties: not part of the schema.
    case notPersisted
}

/// The facts `@Model` needs about one member property, read from its syntax.
struct ModelProperty {
    let name: String
    let typeAnnotation: TypeSyntax?
    let initializer: ExprSyntax?
    let isLet: Bool
    let kind: PersistenceKind
    /// `Schema.Attribute(...)` or `Schema.Relationship(...)` built from the property's marker attribute.
    let metadata: ExprSyntax?

    /// Reads a member declaration; returns nil for members that are not properties.
    /// Diagnostics are reported only when `context` is given, so that the member and member-attribute
    /// roles, which both analyse every member, report each problem once.
    static func analyse(
        _ member: some DeclSyntaxProtocol,
        diagnosingIn context: (any MacroExpansionContext)?
    ) -> ModelProperty? {
        guard let variable = member.as(VariableDeclSyntax.self) else { return nil }
        let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
        let modifiers = Set(variable.modifiers.map(\.name.text))
        if modifiers.contains("static") || modifiers.contains("class") || modifiers.contains("lazy") {
            return nil
        }
        guard let binding = variable.bindings.first else { return nil }
        guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
            if !variable.hasAttribute(named: "Transient") {
                context?.diagnose(Diagnostic(node: binding.pattern, message: ObjectGraphDiagnostic.destructuringPattern))
            }
            return nil
        }
        // The name without backticks: generated code prefixes it (`_default`) or uses it after a dot.
        let name = identifier.identifier.identifier?.name ?? identifier.identifier.trimmedDescription
        let type = binding.typeAnnotation?.type.trimmed
        let initializer = binding.initializer?.value.trimmed

        if variable.hasAttribute(named: "Transient") {
            // Only an optional `var` starts as nil; a `let` needs a value to be initialized by fetches.
            let startsAsNil = !isLet && (type.map(\.isOptional) ?? false)
            if initializer == nil && !startsAsNil {
                context?.diagnose(Diagnostic(node: variable, message: ObjectGraphDiagnostic.transientWithoutDefault))
            }
            return ModelProperty(name: name, typeAnnotation: type, initializer: initializer, isLet: isLet,
                                 kind: .notPersisted, metadata: nil)
        }
        if let accessors = binding.accessorBlock {
            if case .accessors(let list) = accessors.accessors,
               list.contains(where: { ["willSet", "didSet"].contains($0.accessorSpecifier.text) }) {
                context?.diagnose(Diagnostic(node: accessors, message: ObjectGraphDiagnostic.propertyObservers))
            }
            return ModelProperty(name: name, typeAnnotation: type, initializer: initializer, isLet: isLet,
                                 kind: .notPersisted, metadata: nil)
        }
        if variable.bindings.count > 1 {
            context?.diagnose(Diagnostic(node: variable, message: ObjectGraphDiagnostic.multipleBindings))
            return nil
        }
        if type == nil && initializer == nil {
            context?.diagnose(Diagnostic(node: binding, message: ObjectGraphDiagnostic.missingTypeAndInitializer))
            return nil
        }
        let attribute = variable.attribute(named: "Attribute")
        let relationship = variable.attribute(named: "Relationship")
        if attribute != nil && relationship != nil {
            context?.diagnose(Diagnostic(node: variable, message: ObjectGraphDiagnostic.attributeAndRelationship))
        }
        let metadata: ExprSyntax? =
            if let attribute { metadataExpression(type: "Attribute", arguments: attribute.arguments) }
            else if let relationship { metadataExpression(type: "Relationship", arguments: relationship.arguments) }
            else { nil }
        let kind: PersistenceKind = (isLet || type == nil) ? .stored : .managed
        return ModelProperty(name: name, typeAnnotation: type, initializer: initializer, isLet: isLet,
                             kind: kind, metadata: metadata)
    }

    private static func metadataExpression(type: String, arguments: AttributeSyntax.Arguments?) -> ExprSyntax {
        let argumentText = if case .argumentList(let list) = arguments { list.trimmedDescription } else { "" }
        return "ObjectGraph.Schema.\(raw: type)(\(raw: argumentText))"
    }

    /// The declaration's default value as an expression of the property's type, for `schemaMetadata`.
    var defaultValueExpression: ExprSyntax {
        guard let initializer else { return "nil" }
        if let typeAnnotation { return "(\(initializer) as \(typeAnnotation))" }
        return initializer
    }
}

extension VariableDeclSyntax {
    func attribute(named name: String) -> AttributeSyntax? {
        for element in attributes {
            guard let attribute = element.as(AttributeSyntax.self) else { continue }
            let attributeName = attribute.attributeName.trimmedDescription
            if attributeName == name || attributeName == "ObjectGraph.\(name)" || attributeName == "SwiftData.\(name)" {
                return attribute
            }
        }
        return nil
    }

    func hasAttribute(named name: String) -> Bool { attribute(named: name) != nil }
}

extension TypeSyntax {
    var isOptional: Bool {
        self.is(OptionalTypeSyntax.self) || self.is(ImplicitlyUnwrappedOptionalTypeSyntax.self)
            || self.trimmedDescription.hasPrefix("Optional<")
    }
}

extension DeclModifierListSyntax {
    /// The access modifier generated members need so that they satisfy protocol requirements
    /// of a `public` or `package` model class.
    var accessPrefix: String {
        for modifier in self {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            default: continue
            }
        }
        return ""
    }
}
