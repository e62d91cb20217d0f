import Foundation

/// The compiled grammars of one highlighting call, so that a Markdown file with many fenced blocks
/// or a Dockerfile with many `RUN` lines compiles each grammar once.
final class GrammarCache {
    private var compiled: [CodingLanguage: CompiledGrammar] = [:]
    private var dockerfileArguments: CompiledGrammar?

    func grammar(for language: CodingLanguage) -> CompiledGrammar? {
        if let grammar = compiled[language] { return grammar }
        guard let grammar = LanguageGrammar.forLanguage(language).map(CompiledGrammar.init) else { return nil }
        compiled[language] = grammar
        return grammar
    }

    var dockerfileArgumentsGrammar: CompiledGrammar {
        if let dockerfileArguments { return dockerfileArguments }
        let grammar = CompiledGrammar(.dockerfileArguments)
        dockerfileArguments = grammar
        return grammar
    }
}
