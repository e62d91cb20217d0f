import Foundation
@testable import ObjectGraph
import XCTest

/// Two long-lived contexts of one container (two tabs) tagging and untagging snippets through the
/// snippets' tags, fetching, saving and rolling back in random turns, between requests of their own
/// (a fresh context each) that tag and untag from the tags' side, leaving the snippets' tags unloaded,
/// against a plain model of each snippet's stored tags. What README promises: a save either throws
/// `.saveConflict` and writes nothing, or writes its context's changes and loses none of another's:
/// a tag added or removed since the tab read the snippet is never undone by the tab's save.
///
/// A save over a snippet that another context changed since this tab read it may conflict (it does
/// when it writes that snippet's tags); any other save must succeed. After every save and rollback the
/// store, read through another container, must hold the model's tags, and a fetch must show them in
/// an unchanged tab, from both sides.
///
/// `RANDOM_TAGGING_SEED` and `RANDOM_TAGGING_STEPS` run other sequences, for hunting.
final class RandomTaggingTests: StoreTestCase {
    private static let snippetTitles = ["a", "b", "c"]
    private static let tagNames = ["sql", "swift", "shell", "go"]

    /// What one tab holds, in the plain model.
    struct Tab {
        let context: ModelContext
        /// Tagging and untagging since its last save or rollback, in order.
        var toggles: [(snippet: String, tag: String, joins: Bool)] = []
        /// For each snippet, how many saves of the other tab had changed its tags when this tab last
        /// read them (or the snippet); a save of a snippet read before a later change may conflict.
        var readAt: [String: Int] = [:]
    }

    private func run(seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        let url = folder.appendingPathComponent("tagging-\(seed).store")
        let types: [any PersistentModel.Type] = [SnippetFolder.self, SnippetItem.self, SnippetTag.self]
        let container = try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: url))
        let otherProcess = try ModelContainer(for: Schema(types), configurations: ModelConfiguration(url: url))
        let setup = ModelContext(container)
        for title in Self.snippetTitles { setup.insert(SnippetItem(title: title)) }
        for name in Self.tagNames { setup.insert(SnippetTag(name: name)) }
        try setup.save()

        // The store: each snippet's tags, and how many saves have changed them.
        var stored = Dictionary(uniqueKeysWithValues: Self.snippetTitles.map { ($0, Set<String>()) })
        var changes = Dictionary(uniqueKeysWithValues: Self.snippetTitles.map { ($0, 0) })
        var tabs = [Tab(context: ModelContext(container)), Tab(context: ModelContext(container))]
        var log: [String] = []

        func fail(_ message: String) throws -> Never {
            throw RandomRunDiverged.reported(message, seed: seed, log: log)
        }
        func snippet(_ title: String, in context: ModelContext) throws -> SnippetItem {
            guard let found = try context.fetch(FetchDescriptor<SnippetItem>(predicate: #Predicate { $0.title == title })).first else {
                try fail("no snippet \(title)")
            }
            return found
        }
        func tag(_ name: String, in context: ModelContext) throws -> SnippetTag {
            guard let found = try context.fetch(FetchDescriptor<SnippetTag>(predicate: #Predicate { $0.name == name })).first else {
                try fail("no tag \(name)")
            }
            return found
        }
        func checkStore(_ moment: String) throws {
            let reader = ModelContext(otherProcess)
            for title in Self.snippetTitles {
                let tags = Set(try snippet(title, in: reader).tags.map(\.name))
                if tags != stored[title] { try fail("\(moment), \(title) is stored with \(tags.sorted()) vs \(stored[title]!.sorted())") }
            }
            for name in Self.tagNames {
                let titles = Set(try tag(name, in: reader).snippets.map(\.title))
                let expected = Set(stored.filter { $0.value.contains(name) }.keys)
                if titles != expected { try fail("\(moment), tag \(name) is stored with \(titles.sorted()) vs \(expected.sorted())") }
            }
        }
        /// A fetch by a tab with nothing pending shows what is stored, and its read is as new as the store.
        func refresh(_ tab: inout Tab, _ moment: String) throws {
            for title in Self.snippetTitles {
                let tags = Set(try snippet(title, in: tab.context).tags.map(\.name))
                if tags != stored[title] { try fail("\(moment), after a fetch \(title) shows \(tags.sorted()) vs \(stored[title]!.sorted())") }
                tab.readAt[title] = changes[title]
            }
            // A tag's snippets live in join rows its own row's version does not follow.
            for name in Self.tagNames {
                let titles = Set(try tag(name, in: tab.context).snippets.map(\.title))
                let expected = Set(stored.filter { $0.value.contains(name) }.keys)
                if titles != expected { try fail("\(moment), after a fetch tag \(name) shows \(titles.sorted()) vs \(expected.sorted())") }
            }
        }

        for index in tabs.indices { try refresh(&tabs[index], "start") }
        for step in 0..<steps {
            let which = Int.random(in: 0..<2, using: &random)
            var tab = tabs[which]
            let moment = "step \(step), tab \(which)"
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<45:
                guard let title = random.pick(Self.snippetTitles), let name = random.pick(Self.tagNames) else { continue }
                let item = try snippet(title, in: tab.context)
                // The fetch refreshed the snippet, unless this tab has changed it.
                if !tab.toggles.contains(where: { $0.snippet == title }) { tab.readAt[title] = changes[title] }
                let label = try tag(name, in: tab.context)
                // The tab's own view decides: a tag it shows is taken off, one it does not is put on.
                let joins = !item.tags.contains { $0 === label }
                if joins { item.tags.append(label) } else { item.tags.removeAll { $0 === label } }
                tab.toggles.append((title, name, joins))
                log.append("\(which) \(joins ? "tag" : "untag") \(title) \(name)")
            case 45..<55:
                // A request of its own (a fresh context, as SnippetBox makes for each) tags or untags
                // from the tag's side, leaving the snippet's tags unloaded, and saves at once: it read
                // everything just now, so it cannot conflict.
                guard let title = random.pick(Self.snippetTitles), let name = random.pick(Self.tagNames) else { continue }
                let request = ModelContext(container)
                let item = try snippet(title, in: request)
                let label = try tag(name, in: request)
                let joins = !label.snippets.contains { $0 === item }
                if joins { label.snippets.append(item) } else { label.snippets.removeAll { $0 === item } }
                do {
                    try request.save()
                } catch {
                    try fail("\(moment), a request's save threw \(error)")
                }
                if joins { stored[title]?.insert(name) } else { stored[title]?.remove(name) }
                changes[title, default: 0] += 1
                log.append("request \(joins ? "tags" : "untags") \(title) \(name) from the tag")
                try checkStore(moment)
            case 55..<80:
                let touched = Set(tab.toggles.map(\.snippet))
                let mayConflict = touched.contains { tab.readAt[$0] != changes[$0] }
                do {
                    try tab.context.save()
                    // Tagging and untagging one pair an even number of times changes nothing: the save
                    // writes the snippet's tags as the tab shows them, which it read at the version it
                    // saves over.
                    var net: [String: (snippet: String, tag: String, joins: Bool)] = [:]
                    for toggle in tab.toggles {
                        let pair = "\(toggle.snippet) \(toggle.tag)"
                        net[pair] = net[pair] == nil ? toggle : nil
                    }
                    for toggle in net.values {
                        if toggle.joins { stored[toggle.snippet]?.insert(toggle.tag) } else { stored[toggle.snippet]?.remove(toggle.tag) }
                    }
                    for title in touched {
                        changes[title, default: 0] += 1
                        // This tab's own save does not make its read older.
                        if tab.readAt[title] == changes[title]! - 1 { tab.readAt[title] = changes[title] }
                    }
                    tab.toggles = []
                    log.append("\(which) save \(touched.sorted())")
                } catch let error as SwiftDataError where error.code == .saveConflict {
                    if !mayConflict { try fail("\(moment), the save threw \(error) though no other tab changed its snippets") }
                    tab.context.rollback()
                    tab.toggles = []
                    log.append("\(which) save: conflict, rolled back")
                    try refresh(&tab, moment)
                }
                try checkStore(moment)
            case 80..<90:
                guard tab.toggles.isEmpty else { continue }
                try refresh(&tab, moment)
                log.append("\(which) fetch")
            default:
                tab.context.rollback()
                tab.toggles = []
                log.append("\(which) rollback")
                try refresh(&tab, moment)
            }
            tabs[which] = tab
        }
        try checkStore("the end")
    }

    func testTwoTabsTaggingInTurnLoseNothing() throws {
        try forEachRandomRun(environmentPrefix: "RANDOM_TAGGING", seeds: [20_261_128, 5, 9], steps: 400) { try run(seed: $0, steps: $1) }
    }
}
