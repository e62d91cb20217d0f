import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `#Index<Model>([\.a], [\.b, \.c])`: the indexes of a model's table, as SwiftData's macro declares them.
///
/// It expands to a static member that `PersistentModel` requires (with a default of no indexes), so
/// the library reads the key paths at run time and resolves them to columns when a container opens.
public struct IndexMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        KeyPathListMacro.index.expansion(of: node, in: context)
    }
}

/// `#Unique<Model>([\.id], [\.name, \.startDate])`: the combinations of properties whose values no two
/// models share, as SwiftData's macro (iOS 18) declares them. Expanded as `#Index` is.
public struct UniqueMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        KeyPathListMacro.unique.expansion(of: node, in: context)
    }
}

/// What `#Index` and `#Unique` share: both take arrays of key paths of the model they are declared in,
/// and both become a static member typed `[[PartialKeyPath<Model>]]`, so that `\.title` infers its
/// root as it does in SwiftData. Only the macro's syntax is checked here, the key paths themselves
/// when a container opens.
enum KeyPathListMacro: String {
    case index = "Index"
    case unique = "Unique"

    /// The `PersistentModel` requirement the expansion satisfies.
    var memberName: String {
        switch self {
        case .index: "_objectGraphIndexes"
        case .unique: "_objectGraphUniqueness"
        }
    }

    /// The macro as written in source.
    var spelling: String { "#" + rawValue }

    // The words of the diagnostics (see `KeyPathListDiagnostic`).

    /// What one array declares.
    var elementNoun: String {
        switch self {
        case .index: "index"
        case .unique: "constraint"
        }
    }

    var elementNounWithArticle: String {
        switch self {
        case .index: "an index"
        case .unique: "a constraint"
        }
    }

    var elementNounPlural: String {
        switch self {
        case .index: "indexes"
        case .unique: "constraints"
        }
    }

    /// What an array of several key paths declares.
    var severalPropertiesMeaning: String {
        switch self {
        case .index: "an index on both"
        case .unique: "a combination that is unique"
        }
    }

    var emptyElementFix: String {
        switch self {
        case .index: "name the properties to index"
        case .unique: "name the properties that are unique together"
        }
    }

    private var localName: String {
        switch self {
        case .index: "indices"
        case .unique: "constraints"
        }
    }

    func expansion(of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext) -> [DeclSyntax] {
        func diagnose(_ problem: KeyPathListDiagnostic.Problem, at syntax: some SyntaxProtocol) {
            context.diagnose(Diagnostic(node: syntax, message: KeyPathListDiagnostic(macro: self, problem: problem)))
        }
        guard let modelType = node.genericArgumentClause?.arguments.first?.argument.trimmedDescription,
              node.genericArgumentClause?.arguments.count == 1
        else {
            diagnose(.withoutModelType, at: node)
            return []
        }
        let enclosing = context.lexicalContext.first { $0.is(DeclSyntax.self) }
        if let enclosing, !(enclosing.is(ClassDeclSyntax.self) || enclosing.is(ExtensionDeclSyntax.self)) {
            diagnose(.outsideClass, at: node)
            return []
        }
        if let classDecl = enclosing?.as(ClassDeclSyntax.self), !Self.names(modelType, sameTypeAs: classDecl.name.text) {
            diagnose(.otherModelType(written: modelType, enclosing: classDecl.name.text),
                     at: node.genericArgumentClause.map(Syntax.init) ?? Syntax(node))
            return []
        }
        guard !node.arguments.isEmpty else {
            diagnose(.withoutElements, at: node)
            return []
        }
        var elements: [String] = []
        var valid = true
        for argument in node.arguments {
            guard let array = keyPathArray(in: argument.expression) else {
                diagnose(.notAnArray, at: argument.expression)
                valid = false
                continue
            }
            guard !array.elements.isEmpty else {
                diagnose(.emptyElement, at: array)
                valid = false
                continue
            }
            elements.append(array.trimmedDescription)
        }
        guard valid else { return [] }

        let access = enclosing?.as(ClassDeclSyntax.self)?.modifiers.accessPrefix
            ?? enclosing?.as(ExtensionDeclSyntax.self)?.modifiers.accessPrefix ?? ""
        let list = "[\n" + elements.map { "    " + $0 }.joined(separator: ",\n") + "\n]"
        return [
            """
            \(raw: access)static var \(raw: memberName): [[AnyKeyPath]] {
                let \(raw: localName): [[PartialKeyPath<\(raw: modelType)>]] = \(raw: list)
                return \(raw: localName)
            }
            """,
        ]
    }

    /// The array of key paths an argument declares: the argument itself, or for `#Index` also the
    /// array inside SwiftData's typed form, `.binary([\.a])` or `.rtree([\.a, \.b])` (both made
    /// as one ordinary index, see `Index` in ObjectGraph's `Macros.swift`).
    private func keyPathArray(in expression: ExprSyntax) -> ArrayExprSyntax? {
        if let array = expression.as(ArrayExprSyntax.self) { return array }
        guard self == .index, let call = expression.as(FunctionCallExprSyntax.self),
              let member = call.calledExpression.as(MemberAccessExprSyntax.self),
              member.base == nil || member.base?.trimmedDescription.hasSuffix("Types") == true,
              ["binary", "rtree"].contains(member.declName.baseName.text),
              call.arguments.count == 1, let only = call.arguments.first, only.label == nil
        else { return nil }
        return only.expression.as(ArrayExprSyntax.self)
    }

    /// `Snippet`, `Module.Snippet` and `Outer.Snippet` all name a class declared as `Snippet`.
    private static func names(_ written: String, sameTypeAs className: String) -> Bool {
        written == className || written.hasSuffix("." + className) || written == "Self"
    }
}
