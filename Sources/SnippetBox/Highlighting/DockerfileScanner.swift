import Foundation

/// Dockerfiles are instructions, one per logical line: the instruction is a keyword, and its
/// arguments — continued over lines ending in `\`, and including the bodies of `<<EOF` heredocs —
/// are highlighted as shell for the instructions that run commands (and for heredocs), and with a
/// small argument grammar (strings, `AS`, numbers) for the others.
final class DockerfileScanner {
    private static let instructions: Set<String> = [
        "from", "run", "cmd", "label", "maintainer", "expose", "env", "add", "copy", "entrypoint", "volume", "user",
        "workdir", "arg", "onbuild", "stopsignal", "healthcheck", "shell",
    ]
    private static let shellInstructions: Set<String> = ["run", "cmd", "entrypoint", "shell", "healthcheck"]

    private let writer: HTMLLineWriter
    private let grammars: GrammarCache
    private let source: SourceView
    private let end: Int
    // Hot state skips run-time exclusivity checks, as in `HTMLLineWriter`: one scan, one thread.
    @exclusivity(unchecked) private var position: Int

    static func highlight(_ range: Range<Int>, into writer: HTMLLineWriter, grammars: GrammarCache) {
        DockerfileScanner(writer: writer, range: range, grammars: grammars).run()
    }

    private init(writer: HTMLLineWriter, range: Range<Int>, grammars: GrammarCache) {
        self.writer = writer
        self.grammars = grammars
        source = writer.source.limited(to: range.upperBound)
        end = source.end
        position = range.lowerBound
    }

    private func emit(_ tokenEnd: Int, _ kind: TokenKind?) {
        writer.write(position, tokenEnd, as: kind)
        position = tokenEnd
    }

    /// Every iteration starts at the beginning of a line.
    private func run() {
        while position < end {
            emit(source.skipBlanks(from: position), nil)
            let lineEnd = source.lineEnd(from: position)
            if source.byte(at: position) == ASCII.hash {
                emit(lineEnd, .comment)
            } else {
                scanInstruction(lineEnd: lineEnd)
            }
            if position < end { emit(position + 1, nil) }
        }
    }

    private func scanInstruction(lineEnd: Int) {
        // `ONBUILD RUN …` is an instruction prefixing another: loop rather than recurse.
        while true {
            var wordEnd = position
            while wordEnd < lineEnd && ASCII.isLetter(source[wordEnd]) { wordEnd += 1 }
            let instruction = source.string(position, wordEnd, lowercased: true)
            guard wordEnd > position, Self.instructions.contains(instruction) else {
                emit(lineEnd, nil)
                return
            }
            emit(wordEnd, .keyword)
            if instruction == "onbuild" {
                emit(source.skipBlanks(from: position), nil)
                continue
            }
            let argumentsEnd = instructionEnd(from: position)
            let heredocsEnd = heredocBodiesEnd(arguments: position..<argumentsEnd)
            let runsCommands = Self.shellInstructions.contains(instruction) || heredocsEnd != nil
            let grammar = runsCommands ? grammars.grammar(for: .shell) : grammars.dockerfileArgumentsGrammar
            let instructionEnd = heredocsEnd ?? argumentsEnd
            if let grammar {
                CodeScanner.highlight(position..<instructionEnd, with: grammar, into: writer)
            }
            position = instructionEnd
            return
        }
    }

    /// Where the arguments starting at `index` end: at the end of the first line that does not end
    /// in `\`, stepping over the comment and blank lines a continuation may contain.
    private func instructionEnd(from index: Int) -> Int {
        var lineStart = index
        while true {
            let lineEnd = source.lineEnd(from: lineStart)
            var lastByte = lineEnd
            while lastByte > lineStart && ASCII.isBlank(source[lastByte - 1]) { lastByte -= 1 }
            guard lastByte > lineStart, source[lastByte - 1] == ASCII.backslash, lineEnd < end else { return lineEnd }
            var next = lineEnd + 1
            while next < end {
                let nextLineEnd = source.lineEnd(from: next)
                let first = source.skipBlanks(from: next)
                guard first == nextLineEnd || source[first] == ASCII.hash else { break }
                next = nextLineEnd + 1
            }
            guard next < end else { return end }
            lineStart = next
        }
    }

    /// With `RUN <<EOF` or `COPY <<EOF /file`, the lines after the instruction up to each `EOF` are
    /// part of it. Returns the end of the last body, or nil without heredocs.
    private func heredocBodiesEnd(arguments: Range<Int>) -> Int? {
        var delimiters: [(name: [UInt8], indented: Bool)] = []
        var index = arguments.lowerBound
        while index + 2 < arguments.upperBound {
            guard source[index] == ASCII.lessThan && source[index + 1] == ASCII.lessThan else {
                index += 1
                continue
            }
            index += 2
            var indented = false
            if source.byte(at: index) == ASCII.minus {
                indented = true
                index += 1
            }
            let quote = source.byte(at: index)
            if quote == ASCII.quote || quote == ASCII.apostrophe { index += 1 }
            let nameStart = index
            while index < arguments.upperBound && (ASCII.isWordByte(source[index]) || source[index] == ASCII.minus) { index += 1 }
            if index > nameStart { delimiters.append((source.bytes(nameStart, index), indented)) }
        }
        guard !delimiters.isEmpty else { return nil }
        var bodiesEnd = arguments.upperBound
        for delimiter in delimiters {
            guard bodiesEnd < end else { return end }
            var lineStart = bodiesEnd + 1
            bodiesEnd = end
            while lineStart < end {
                let lineEnd = source.lineEnd(from: lineStart)
                let nameStart = delimiter.indented ? source.skipBlanks(from: lineStart) : lineStart
                if lineEnd - nameStart == delimiter.name.count && source.matches(delimiter.name, at: nameStart) {
                    bodiesEnd = lineEnd
                    break
                }
                lineStart = lineEnd + 1
            }
        }
        return bodiesEnd
    }
}
