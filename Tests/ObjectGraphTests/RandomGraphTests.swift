import Foundation
@testable import ObjectGraph
import XCTest

/// Random edits of a folder / snippet / tag graph (one-to-many with cascade, many-to-many with order on
/// both sides), made through either side of each relationship, in contexts that have loaded some sides
/// and not others, saved, rolled back, and read again: after every save and rollback, the graph as the
/// live context, a fresh context, another container on the same file (as another process would) and
/// the kept counts see it is compared with a plain model of what the edits mean.
///
/// What the plain model takes from SwiftData's documentation and ObjectGraph's README: setting either
/// side of a relationship sets its inverse; a folder's deletion cascades to its snippets, a tag's and a
/// snippet's nullify; a to-many array keeps its order where a join table holds it (a snippet's tags
/// and a tag's snippets), and a model joining one is appended; `rollback()` returns to the last save.
/// A folder's snippets (a foreign key, no position) are compared as a set.
///
/// `RANDOM_GRAPH_SEED` and `RANDOM_GRAPH_STEPS` run other sequences, for hunting.
final class RandomGraphTests: StoreTestCase {
    /// What one snippet should hold.
    struct ExpectedItem: Equatable {
        var folder: String?
        var tags: [String]
    }

    /// The graph as plain values, keyed by the names the models carry (unique in these runs).
    struct Graph: Equatable {
        var folders: Set<String> = []
        var items: [String: ExpectedItem] = [:]
        /// Each tag's snippets, in the order of its side of the relationship.
        var tagMembers: [String: [String]] = [:]
        /// Each folder's snippets as the folder's side reads them (derived from `items` when expected).
        var folderMembers: [String: Set<String>] = [:]

        /// The folder side, from the snippets' side: in the plain model it cannot disagree.
        mutating func deriveFolderMembers() {
            folderMembers = Dictionary(uniqueKeysWithValues: folders.map { ($0, Set<String>()) })
            for (title, item) in items {
                if let folder = item.folder { folderMembers[folder, default: []].insert(title) }
            }
        }

        mutating func deleteItem(_ title: String) {
            guard let item = items.removeValue(forKey: title) else { return }
            for tag in item.tags { tagMembers[tag]?.removeAll { $0 == title } }
        }

        mutating func setTags(of title: String, to tags: [String]) {
            guard let old = items[title]?.tags else { return }
            for tag in old where !tags.contains(tag) { tagMembers[tag]?.removeAll { $0 == title } }
            for tag in tags where !old.contains(tag) { tagMembers[tag]?.append(title) }
            items[title]?.tags = tags
        }

        /// A readable difference, for the failure message.
        func difference(from other: Graph) -> String {
            var lines: [String] = []
            if folders != other.folders { lines.append("folders \(folders.sorted()) vs \(other.folders.sorted())") }
            for title in Set(items.keys).union(other.items.keys).sorted() where items[title] != other.items[title] {
                lines.append("item \(title): \(String(describing: items[title])) vs \(String(describing: other.items[title]))")
            }
            for tag in Set(tagMembers.keys).union(other.tagMembers.keys).sorted() where tagMembers[tag] != other.tagMembers[tag] {
                lines.append("tag \(tag): \(String(describing: tagMembers[tag])) vs \(String(describing: other.tagMembers[tag]))")
            }
            for folder in Set(folderMembers.keys).union(other.folderMembers.keys).sorted() where folderMembers[folder] != other.folderMembers[folder] {
                lines.append("folder \(folder): \(String(describing: folderMembers[folder]?.sorted())) vs \(String(describing: other.folderMembers[folder]?.sorted()))")
            }
            return lines.joined(separator: "\n")
        }
    }

    /// The graph as a context reads it, every side of every relationship read from its own model.
    private func observed(in context: ModelContext) throws -> Graph {
        var graph = Graph()
        for folder in try context.fetch(FetchDescriptor<SnippetFolder>()) {
            graph.folders.insert(folder.name)
            graph.folderMembers[folder.name] = Set(folder.snippets.map(\.title))
        }
        for item in try context.fetch(FetchDescriptor<SnippetItem>()) {
            graph.items[item.title] = ExpectedItem(folder: item.folder?.name, tags: item.tags.map(\.name))
        }
        for tag in try context.fetch(FetchDescriptor<SnippetTag>()) {
            graph.tagMembers[tag.name] = tag.snippets.map(\.title)
        }
        return graph
    }

    /// One random run: `steps` edits, with saves, rollbacks, fresh contexts and reopened containers among them.
    private func run(seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)

        let url = self.folder.appendingPathComponent("graph-\(seed).store")
        func open() throws -> ModelContainer {
            try ModelContainer(for: SnippetFolder.self, SnippetItem.self, SnippetTag.self, configurations: ModelConfiguration(url: url))
        }
        var container = try open()
        var context = ModelContext(container)
        let otherProcess = try open()
        var now = Graph()
        var saved = Graph()
        var nextName = 0
        // The models this context has handed out; anything else is looked up by name, so that many
        // sides stay unloaded and edits reach them as waiting changes.
        var liveFolders: [String: SnippetFolder] = [:]
        var liveItems: [String: SnippetItem] = [:]
        var liveTags: [String: SnippetTag] = [:]
        var log: [String] = []
        func saveAndSettle() throws {
            try context.save()
            saved = now
        }

        func folder(_ name: String) throws -> SnippetFolder {
            if let folder = liveFolders[name] { return folder }
            let found = try XCTUnwrap(context.fetch(FetchDescriptor<SnippetFolder>(predicate: #Predicate { $0.name == name })).first, "folder \(name)")
            liveFolders[name] = found
            return found
        }
        func item(_ title: String) throws -> SnippetItem {
            if let item = liveItems[title] { return item }
            let found = try XCTUnwrap(context.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == title })).first, "item \(title)")
            liveItems[title] = found
            return found
        }
        func tag(_ name: String) throws -> SnippetTag {
            if let tag = liveTags[name] { return tag }
            let found = try XCTUnwrap(context.fetch(FetchDescriptor<SnippetTag>(predicate: #Predicate { $0.name == name })).first, "tag \(name)")
            liveTags[name] = found
            return found
        }
        func forgetLiveModels() {
            liveFolders = [:]
            liveItems = [:]
            liveTags = [:]
        }
        func randomTags(upTo limit: Int) -> [String] {
            Array(now.tagMembers.keys.sorted().shuffled(using: &random).prefix(Int.random(in: 0...limit, using: &random)))
        }

        func check(_ moment: String) throws {
            var expected = now
            expected.deriveFolderMembers()
            let trail = log.suffix(Int(ProcessInfo.processInfo.environment["RANDOM_GRAPH_TRAIL"] ?? "30") ?? 30).joined(separator: "\n")
            func compare(_ seen: Graph, _ reader: String) throws {
                guard seen != expected else { return }
                XCTFail("seed \(seed), \(moment), \(reader) (seen vs expected):\n\(seen.difference(from: expected))\nlast steps:\n\(trail)")
                throw RandomRunDiverged()
            }
            try compare(try observed(in: ModelContext(container)), "a fresh context")
            try compare(try observed(in: ModelContext(otherProcess)), "another container")
            // Reading every side loads it, which would leave no unloaded side for later edits: the live
            // context is read at a third of the checks.
            if random.chance(33) {
                try compare(try observed(in: context), "the live context")
            }
            // Kept counts, brought up to date by the saves or recounted.
            func same<Value: Equatable>(_ counted: Value, _ expected: Value, _ what: String) throws {
                guard counted != expected else { return }
                XCTFail("seed \(seed), \(moment), \(what): counted \(counted), expected \(expected)\nlast steps:\n\(trail)")
                throw RandomRunDiverged()
            }
            let counting = ModelContext(container)
            if let name = random.pick(expected.folders) {
                let count = try counting.fetchCount(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.folder?.name == name }))
                try same(count, expected.folderMembers[name]?.count, "snippets in \(name)")
            }
            if let name = random.pick(expected.tagMembers.keys) {
                let count = try counting.fetchCount(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.tags.contains { $0.name == name } }))
                try same(count, expected.tagMembers[name]?.count, "snippets with \(name)")
            }
            // Fetches through each relationship, whose kept rows a save must drop when it changes them.
            func titles(_ predicate: Predicate<SnippetItem>) throws -> Set<String> {
                Set(try counting.fetch(FetchDescriptor(predicate: predicate)).map(\.title))
            }
            if let name = random.pick(expected.folders) {
                try same(try titles(#Predicate { $0.folder?.name == name }), expected.folderMembers[name] ?? [], "snippets fetched in \(name)")
            }
            if let name = random.pick(expected.tagMembers.keys) {
                try same(try titles(#Predicate { $0.tags.contains { $0.name == name } }), Set(expected.tagMembers[name] ?? []), "snippets fetched with \(name)")
            }
            try same(try titles(#Predicate { $0.folder == nil }), Set(expected.items.filter { $0.value.folder == nil }.keys), "unfiled snippets fetched")
            try same(try titles(#Predicate { $0.tags.isEmpty }), Set(expected.items.filter { $0.value.tags.isEmpty }.keys), "untagged snippets fetched")
            let perTag = try counting.counts(ofEach: \SnippetItem.tags)
            let tagsByID = Dictionary(uniqueKeysWithValues: try counting.fetch(FetchDescriptor<SnippetTag>()).map { ($0.persistentModelID, $0.name) })
            var countedTags: [String: Int] = [:]
            for (id, count) in perTag where count > 0 { countedTags[tagsByID[id] ?? "?"] = count }
            try same(countedTags, expected.tagMembers.filter { !$0.value.isEmpty }.mapValues(\.count), "counts of each tag")
            let perFolder = try counting.counts(of: \SnippetItem.folder)
            let foldersByID = Dictionary(uniqueKeysWithValues: try counting.fetch(FetchDescriptor<SnippetFolder>()).map { ($0.persistentModelID, $0.name) })
            var countedFolders: [String: Int] = [:]
            for (id, count) in perFolder where count > 0 { countedFolders[id.map { foldersByID[$0] ?? "?" } ?? "(none)"] = count }
            var expectedFolders = expected.folderMembers.filter { !$0.value.isEmpty }.mapValues(\.count)
            let unfiled = expected.items.values.filter { $0.folder == nil }.count
            if unfiled > 0 { expectedFolders["(none)"] = unfiled }
            try same(countedFolders, expectedFolders, "counts of each folder")
        }

        for step in 0..<steps {
            let roll = Int.random(in: 0..<100, using: &random)
            switch roll {
            case 0..<6:
                let name = "f\(nextName)"
                nextName += 1
                let made = SnippetFolder(name: name)
                context.insert(made)
                liveFolders[name] = made
                now.folders.insert(name)
                log.append("new folder \(name)")
            case 6..<12:
                let name = "t\(nextName)"
                nextName += 1
                let made = SnippetTag(name: name)
                context.insert(made)
                liveTags[name] = made
                now.tagMembers[name] = []
                log.append("new tag \(name)")
            case 12..<26:
                // A new snippet, related before or after its insert, through either side.
                let title = "i\(nextName)"
                nextName += 1
                let made = SnippetItem(title: title)
                let insertFirst = random.chance(50)
                if insertFirst { context.insert(made) }
                let folderName = random.chance(70) ? random.pick(now.folders) : nil
                if let folderName {
                    if random.chance(50) { made.folder = try folder(folderName) } else { try folder(folderName).snippets.append(made) }
                }
                let tags = randomTags(upTo: 3)
                let throughTags = random.chance(50)
                if throughTags {
                    for name in tags { try tag(name).snippets.append(made) }
                } else {
                    made.tags = try tags.map(tag)
                }
                // Unless inserted first, the snippet is inserted as soon as it is related to a model of the
                // context (as SwiftData does: a snippet let go of later stays), or by itself when nothing relates it.
                if !insertFirst, folderName == nil, tags.isEmpty || random.chance(50) { context.insert(made) }
                liveItems[title] = made
                now.items[title] = ExpectedItem(folder: folderName, tags: [])
                now.setTags(of: title, to: tags)
                log.append("new item \(title) in \(folderName ?? "-") tags \(tags) \(insertFirst ? "inserted first" : "") \(throughTags ? "through tags" : "")")
            case 26..<40:
                guard let title = random.pick(now.items.keys) else { continue }
                let target = random.chance(80) ? random.pick(now.folders) : nil
                let snippet = try item(title)
                switch (target, random.chance(50)) {
                case (let name?, true): snippet.folder = try folder(name)
                case (let name?, false): try folder(name).snippets.append(snippet)
                case (nil, true): snippet.folder = nil
                case (nil, false):
                    if let old = now.items[title]?.folder { try folder(old).snippets.removeAll { $0.title == title } } else { snippet.folder = nil }
                }
                now.items[title]?.folder = target
                log.append("move \(title) to \(target ?? "-")")
            case 40..<54:
                guard let title = random.pick(now.items.keys) else { continue }
                let tags = randomTags(upTo: 4)
                try item(title).tags = try tags.map(tag)
                now.setTags(of: title, to: tags)
                log.append("tags of \(title) = \(tags)")
            case 54..<64:
                // Through the tag's side: join, leave, or reorder.
                guard let name = random.pick(now.tagMembers.keys), let members = now.tagMembers[name] else { continue }
                let outside = now.items.keys.filter { !members.contains($0) }
                if random.chance(40), let title = random.pick(outside) {
                    try tag(name).snippets.append(try item(title))
                    now.tagMembers[name]?.append(title)
                    now.items[title]?.tags.append(name)
                    log.append("\(name) gains \(title)")
                } else if random.chance(50), let title = random.pick(members) {
                    try tag(name).snippets.removeAll { $0.title == title }
                    now.tagMembers[name]?.removeAll { $0 == title }
                    now.items[title]?.tags.removeAll { $0 == name }
                    log.append("\(name) loses \(title)")
                } else {
                    let order = members.shuffled(using: &random)
                    try tag(name).snippets = try order.map(item)
                    now.tagMembers[name] = order
                    log.append("\(name) reordered \(order)")
                }
            case 64..<70:
                guard let title = random.pick(now.items.keys) else { continue }
                context.delete(try item(title))
                liveItems[title] = nil
                now.deleteItem(title)
                log.append("delete item \(title)")
            case 70..<73:
                guard let name = random.pick(now.folders) else { continue }
                context.delete(try folder(name))
                liveFolders[name] = nil
                now.folders.remove(name)
                for (title, item) in now.items where item.folder == name {
                    now.deleteItem(title)
                    liveItems[title] = nil
                }
                log.append("delete folder \(name)")
            case 73..<76:
                guard let name = random.pick(now.tagMembers.keys) else { continue }
                context.delete(try tag(name))
                liveTags[name] = nil
                for title in now.tagMembers[name] ?? [] { now.items[title]?.tags.removeAll { $0 == name } }
                now.tagMembers[name] = nil
                log.append("delete tag \(name)")
            case 76..<92:
                try saveAndSettle()
                log.append("save")
                try check("step \(step), after a save")
                // Another context from here on, with nothing loaded, or the same; now and then the
                // container is opened again, as after a restart.
                if random.chance(30) {
                    context = ModelContext(container)
                    forgetLiveModels()
                    log.append("fresh context")
                } else if random.chance(10) {
                    container = try open()
                    context = ModelContext(container)
                    forgetLiveModels()
                    log.append("container reopened")
                }
            default:
                context.rollback()
                now = saved
                forgetLiveModels()
                log.append("rollback")
                try check("step \(step), after a rollback")
            }
        }
        try saveAndSettle()
        try check("the end")
    }


    func testRandomEditsThroughEitherSideMatchThePlainModel() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_GRAPH", seeds: [20_261_127, 7, 1_000_003], steps: 400) { try run(seed: $0, steps: $1) }
    }
}
