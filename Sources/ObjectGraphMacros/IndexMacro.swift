import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `#Index<Model>([\.a], [\.b, \.c])`: the indexes of a model's table, as SwiftData's macro declares them.
///
/// It expands to a static member that `PersistentModel` requires (with a default of no indexes), so
/// the library reads the key paths at run time and resolves them to columns when a container opens.
/// The arrays are typed `[[PartialKeyPath<Model>]]` so that `\.title` infers its root as it does in
/// SwiftData; only the macro's syntax is checked here, the key paths themselves when the container opens.
public struct IndexMacro: DeclarationMacro {
    static let memberName = "_objectGraphIndexes"

    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let modelType = node.genericArgumentClause?.arguments.first?.argument.trimmedDescription,
              node.genericArgumentClause?.arguments.count == 1
        else {
            context.diagnose(Diagnostic(node: node, message: ObjectGraphDiagnostic.indexWithoutModelType))
            return []
        }
        let enclosing = context.lexicalContext.first { $0.is(DeclSyntax.self) }
        if let enclosing, !(enclosing.is(ClassDeclSyntax.self) || enclosing.is(ExtensionDeclSyntax.self)) {
            context.diagnose(Diagnostic(node: node, message: ObjectGraphDiagnostic.indexOutsideClass))
            return []
        }
        if let classDecl = enclosing?.as(ClassDeclSyntax.self), !names(modelType, sameTypeAs: classDecl.name.text) {
            context.diagnose(Diagnostic(
                node: node.genericArgumentClause.map(Syntax.init) ?? Syntax(node),
                message: IndexOfOtherTypeDiagnostic(written: modelType, enclosing: classDecl.name.text)))
            return []
        }
        guard !node.arguments.isEmpty else {
            context.diagnose(Diagnostic(node: node, message: ObjectGraphDiagnostic.indexWithoutIndices))
            return []
        }
        var indices: [String] = []
        var valid = true
        for argument in node.arguments {
            guard let array = argument.expression.as(ArrayExprSyntax.self) else {
                context.diagnose(Diagnostic(node: argument.expression, message: ObjectGraphDiagnostic.indexNotAnArray))
                valid = false
                continue
            }
            guard !array.elements.isEmpty else {
                context.diagnose(Diagnostic(node: array, message: ObjectGraphDiagnostic.emptyIndex))
                valid = false
                continue
            }
            indices.append(array.trimmedDescription)
        }
        guard valid else { return [] }

        let access = enclosing?.as(ClassDeclSyntax.self)?.modifiers.accessPrefix
            ?? enclosing?.as(ExtensionDeclSyntax.self)?.modifiers.accessPrefix ?? ""
        let list = "[\n" + indices.map { "    " + $0 }.joined(separator: ",\n") + "\n]"
        return [
            """
            \(raw: access)static var \(raw: memberName): [[AnyKeyPath]] {
                let indices: [[PartialKeyPath<\(raw: modelType)>]] = \(raw: list)
                return indices
            }
            """,
        ]
    }

    /// `Snippet`, `Module.Snippet` and `Outer.Snippet` all name a class declared as `Snippet`.
    private static func names(_ written: String, sameTypeAs className: String) -> Bool {
        written == className || written.hasSuffix("." + className) || written == "Self"
    }
}
