import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Model`: turns a class into a persistent model, as SwiftData's macro does.
///
/// - member role: the backing data, `schemaMetadata`, `init(backingData:)` and Observation support;
/// - member-attribute role: `@_PersistedProperty` on every stored `var` with a type annotation;
/// - extension role: `PersistentModel` and `Observable` conformances.
public struct ModelMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: ObjectGraphDiagnostic.modelOnNonClass))
            return []
        }
        let className = classDecl.name.trimmedDescription
        let access = classDecl.modifiers.accessPrefix
        let properties = classDecl.memberBlock.members.compactMap {
            ModelProperty.analyse($0.decl, diagnosingIn: context)
        }
        diagnoseConditionalProperties(in: classDecl.memberBlock.members, context: context)
        diagnoseRepeatedKeyPathListMacros(in: classDecl.memberBlock.members, context: context)
        let persisted = properties.filter { $0.kind != .notPersisted }

        // The key path objects the accessors pass, so that a property read finds its slot by address
        // (see `PersistedPropertyMacro.keyPathConstant`).
        let keepsKeyPathConstants = PersistedPropertyMacro.keyPathConstantOwner(classDecl) != nil
        let metadataEntries = persisted.map { property in
            let keyPath = property.kind == .managed && keepsKeyPathConstants
                ? "\(className).\(PersistedPropertyMacro.keyPathConstant(for: property.name))"
                : "\\\(className).\(property.name)"
            return "ObjectGraph.Schema.PropertyMetadata(name: \(literal(property.name)), keypath: \(keyPath), "
                + "defaultValue: \(property.defaultValueExpression), metadata: \(property.metadata?.description ?? "nil")"
                + (property.kind == .stored ? ", isStoredInInstance: true)" : ")")
        }
        let metadataList = metadataEntries.isEmpty
            ? "[]" : "[\n" + metadataEntries.map { "    " + $0 }.joined(separator: ",\n") + "\n]"

        var initLines: [String] = []
        for property in persisted {
            switch property.kind {
            case .managed:
                initLines.append("_\(property.name) = _ObjectGraphNoType()")
            case .stored where !(property.isLet && property.initializer != nil):
                initLines.append("self.\(property.name) = backingData.getValue(forKey: \\\(className).\(property.name))")
            default:
                continue
            }
        }
        initLines.append("self.persistentBackingData = backingData")

        return [
            "private var _$backingData: any ObjectGraph.BackingData<\(raw: className)> = \(raw: className).createBackingData()",
            """
            \(raw: access)var persistentBackingData: any ObjectGraph.BackingData<\(raw: className)> {
                get { _$backingData }
                set { _$backingData = newValue }
            }
            """,
            """
            \(raw: access)static var schemaMetadata: [ObjectGraph.Schema.PropertyMetadata] {
                \(raw: metadataList)
            }
            """,
            """
            \(raw: access)required init(backingData: any ObjectGraph.BackingData<\(raw: className)>) {
                \(raw: initLines.joined(separator: "\n"))
            }
            """,
            "private let _$observationRegistrar = ObjectGraph._ObjectGraphObservationRegistrar()",
            // Observing a model starts with a read (`withObservationTracking` records the reads), so a
            // model never read has no observer to tell of a change: its changes skip the registrar's
            // bookkeeping (a lock taken twice), 2% of inserting snippets, which no one reads. Only this
            // model's accessors touch the flag, one at a time (models are not `Sendable`).
            "@exclusivity(unchecked) nonisolated(unsafe) private var _$hasBeenRead = false",
            """
            internal nonisolated func access<_M>(keyPath: KeyPath<\(raw: className), _M>) {
                _$hasBeenRead = true
                _$observationRegistrar.access(self, keyPath: keyPath)
            }
            """,
            """
            internal nonisolated func withMutation<_M, _MR>(keyPath: KeyPath<\(raw: className), _M>, _ mutation: () throws -> _MR) rethrows -> _MR {
                guard _$hasBeenRead else { return try mutation() }
                return try _$observationRegistrar.withMutation(of: self, keyPath: keyPath, mutation)
            }
            """,
            "struct _ObjectGraphNoType {}",
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        // Members inside `#if` are not in the schema (the member role reports them), so they stay plain.
        guard let classDecl = declaration.as(ClassDeclSyntax.self),
              classDecl.memberBlock.members.contains(where: { $0.decl.trimmedDescription == member.trimmedDescription }),
              let property = ModelProperty.analyse(member, diagnosingIn: nil),
              property.kind == .managed
        else { return [] }
        return ["@ObjectGraph._PersistedProperty"]
    }

    /// Stored properties inside `#if` blocks would be persisted in some builds and not in others.
    private static func diagnoseConditionalProperties(in members: MemberBlockItemListSyntax, context: some MacroExpansionContext) {
        for member in members {
            guard let ifConfig = member.decl.as(IfConfigDeclSyntax.self) else { continue }
            for clause in ifConfig.clauses {
                guard case .decls(let nested) = clause.elements else { continue }
                for item in nested {
                    if let property = ModelProperty.analyse(item.decl, diagnosingIn: nil), property.kind != .notPersisted {
                        context.diagnose(Diagnostic(node: item.decl, message: ObjectGraphDiagnostic.conditionalProperty))
                    }
                }
                diagnoseConditionalProperties(in: nested, context: context)
            }
        }
    }

    /// Each `#Index` declares the same static member, so a second one would be a redeclaration; so does each `#Unique`.
    private static func diagnoseRepeatedKeyPathListMacros(in members: MemberBlockItemListSyntax, context: some MacroExpansionContext) {
        let expansions = members.compactMap { $0.decl.as(MacroExpansionDeclSyntax.self) }
        for macro in [KeyPathListMacro.index, .unique] {
            let uses = expansions.filter { $0.macroName.text == macro.rawValue }
            for repeated in uses.dropFirst() {
                context.diagnose(Diagnostic(node: repeated, message: KeyPathListDiagnostic(macro: macro, problem: .repeated)))
            }
        }
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else { return [] }
        // In a module whose default isolation is the main actor (SE-0466, Xcode 26's default for apps),
        // an extension is main-actor-isolated unless it says otherwise, and so would be the conformances
        // it declares, while the class itself is left nonisolated (it is declared not `Sendable`, below):
        // nothing but the main actor could then use the model as a `PersistentModel`, the library's
        // own code included. So the extensions are `nonisolated`, which in any other module they are
        // anyway. A class isolated to a global actor (`@MainActor`, or one of the program's own) has
        // members isolated to it, `init(backingData:)` and `schemaMetadata` among them, so its
        // conformance is isolated to that actor (SE-0470): the model is used there only, as its
        // isolation says.
        let globalActor = globalActorAttribute(of: classDecl)
        // The compiler lists the conformances the type still lacks, spelled as in the macro's declaration.
        let missing = Set(protocols.map { $0.trimmedDescription.split(separator: ".").last.map(String.init) ?? "" })
        let conformances = [
            ("PersistentModel", globalActor.map { "@\($0) ObjectGraph.PersistentModel" } ?? "ObjectGraph.PersistentModel"),
            ("Observable", "ObjectGraph._ObjectGraphObservable"),
        ]
        var extensions = try conformances.filter { missing.contains($0.0) }.map { _, qualified in
            try ExtensionDeclSyntax("nonisolated extension \(type.trimmed): \(raw: qualified) {}")
        }
        if missing.contains("Sendable") {
            // As in SwiftData: sending a model to another task is a compile-time error that says what to do.
            extensions.append(try ExtensionDeclSyntax("""
                @available(*, unavailable, message: "PersistentModels are not Sendable: pass persistentModelID to other tasks, or use a ModelActor")
                extension \(type.trimmed): Sendable {}
                """))
        }
        return extensions
    }

    /// The name of the global actor a class is isolated to, as its attribute spells it. A macro sees
    /// names, not declarations: a global actor is told by the convention its name ends in "Actor"
    /// (`MainActor`, `DatabaseActor`), which no attribute a class may otherwise carry follows but
    /// `@globalActor` and `@ModelActor`, which a model class is not.
    private static func globalActorAttribute(of classDecl: ClassDeclSyntax) -> String? {
        for element in classDecl.attributes {
            guard let attribute = element.as(AttributeSyntax.self), attribute.arguments == nil else { continue }
            let name = attribute.attributeName.trimmedDescription
            let lastComponent = name.split(separator: ".").last.map(String.init) ?? name
            guard lastComponent.hasSuffix("Actor"), lastComponent != "globalActor", lastComponent != "ModelActor" else { continue }
            return name
        }
        return nil
    }

    private static func literal(_ text: String) -> String {
        StringLiteralExprSyntax(content: text).description
    }
}

/// `@_PersistedProperty`: routes a stored property of a model through its backing data, with
/// Observation, as SwiftData's `@_PersistedProperty` does. `@Model` adds it; nobody writes it by hand.
public struct PersistedPropertyMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let name = propertyName(of: declaration) else { return [] }
        let keyPath = modelClassName(in: context).map { "\($0).\(keyPathConstant(for: name))" } ?? "\\.\(name)"
        return [
            """
            @storageRestrictions(accesses: _$backingData, initializes: _\(raw: name))
            init(initialValue) {
                _$backingData.setValue(forKey: \(raw: keyPath), to: initialValue)
                _\(raw: name) = _ObjectGraphNoType()
            }
            """,
            """
            get {
                access(keyPath: \(raw: keyPath))
                return self.getValue(forKey: \(raw: keyPath))
            }
            """,
            """
            set {
                withMutation(keyPath: \(raw: keyPath)) {
                    self.setValue(forKey: \(raw: keyPath), to: newValue)
                }
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let name = propertyName(of: declaration) else { return [] }
        var peers: [DeclSyntax] = ["private var _\(raw: name): _ObjectGraphNoType"]
        if let className = modelClassName(in: context) {
            peers.append("private static let \(raw: keyPathConstant(for: name)) = \\\(raw: className).\(raw: name)")
        }
        return peers
    }

    /// The static constant holding a property's key path, which its accessors pass and `schemaMetadata`
    /// lists. A key path literal is instantiated once per place it is written, and an accessor
    /// inlined into its callers brings its literal along: the accessors' objects were others than
    /// `schemaMetadata`'s, so every property read hashed its key path to find its slot (3% of the
    /// server's time under load). One constant makes them the same object, found by address.
    static func keyPathConstant(for property: String) -> String {
        "_objectGraphKeyPath_" + property
    }

    /// The model class around the property, when it holds the constants.
    private static func modelClassName(in context: some MacroExpansionContext) -> String? {
        context.lexicalContext.first?.as(ClassDeclSyntax.self).flatMap(keyPathConstantOwner)
    }

    /// The class's name when it holds its properties' key path constants, which `@Model`'s
    /// `schemaMetadata` and these accessors must agree on: a generic class has no static stored
    /// properties, and keeps key path literals.
    static func keyPathConstantOwner(_ classDecl: ClassDeclSyntax) -> String? {
        classDecl.genericParameterClause == nil ? classDecl.name.trimmedDescription : nil
    }

    private static func propertyName(of declaration: some DeclSyntaxProtocol) -> String? {
        guard let token = declaration.as(VariableDeclSyntax.self)?.bindings.first?
            .pattern.as(IdentifierPatternSyntax.self)?.identifier else { return nil }
        return token.identifier?.name ?? token.trimmedDescription
    }
}
