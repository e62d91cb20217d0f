import Foundation
import ObjectGraph

@Model final class Recipe {
    var name: String
    @Relationship(inverse: \Ingredient.recipes) var ingredients: [Ingredient] = []

    init(name: String) { self.name = name }
}

@Model final class Ingredient {
    var name: String
    var recipes: [Recipe] = []

    init(name: String) { self.name = name }
}

/// One-to-one, inferred inverse.
@Model final class Book {
    var title: String
    var isbn: ISBN?

    init(title: String) { self.title = title }
}

@Model final class ISBN {
    var code: String
    var book: Book?

    init(code: String) { self.code = code }
}

/// One-to-many with the default nullify rule.
@Model final class SocialUser {
    var handle: String
    @Relationship(inverse: \UserPost.author) var posts: [UserPost] = []

    init(handle: String) { self.handle = handle }
}

@Model final class UserPost {
    var text: String
    var author: SocialUser?

    init(text: String, author: SocialUser? = nil) {
        self.text = text
        self.author = author
    }
}

/// A to-many relationship with no inverse, and `.deny`.
@Model final class Diary {
    var title: String
    var tags: [DiaryTag] = []
    @Relationship(deleteRule: .deny) var pages: [DiaryPage] = []

    init(title: String) { self.title = title }
}

@Model final class DiaryTag {
    var name: String
    init(name: String) { self.name = name }
}

@Model final class DiaryPage {
    var number: Int
    var diary: Diary?

    init(number: Int) { self.number = number }
}

/// Three levels of cascade: Library → Shelf → Volume.
@Model final class Library {
    var name: String
    @Relationship(deleteRule: .cascade) var shelves: [Shelf] = []
    init(name: String) { self.name = name }
}

@Model final class Shelf {
    var label: String
    var library: Library?
    @Relationship(deleteRule: .cascade) var volumes: [Volume] = []
    init(label: String) { self.label = label }
}

@Model final class Volume {
    var title: String
    var shelf: Shelf?
    init(title: String) { self.title = title }
}

/// A cascade cycle: each node deletes its successor.
@Model final class Ring {
    var name: String
    @Relationship(deleteRule: .cascade) var next: Ring?
    var previous: Ring?

    init(name: String) { self.name = name }
}

/// The snippet box's own graph: folders own snippets, snippets and tags are many-to-many.
@Model final class SnippetFolder {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \SnippetItem.folder) var snippets: [SnippetItem] = []
    init(name: String) { self.name = name }
}

@Model final class SnippetItem {
    var title: String
    var folder: SnippetFolder?
    @Relationship(inverse: \SnippetTag.snippets) var tags: [SnippetTag] = []
    init(title: String) { self.title = title }
}

@Model final class SnippetTag {
    @Attribute(.unique) var name: String
    var snippets: [SnippetItem] = []
    init(name: String) { self.name = name }
}

/// Counts that the relationship must respect.
@Model final class Team {
    var name: String
    @Relationship(minimumModelCount: 1, maximumModelCount: 2) var members: [Player]? = nil
    init(name: String) { self.name = name }
}

@Model final class Player {
    var name: String
    var team: Team?
    init(name: String) { self.name = name }
}

/// Both sides name each other as inverse. `@Relationship(inverse:)` on both sides does not compile
/// (the compiler reports a circular reference, as with SwiftData), so these models are written by hand,
/// the way a schema could be declared without the macros, to check that the container refuses them.
final class HandWrittenLeft: PersistentModel {
    var persistentBackingData: any BackingData<HandWrittenLeft>
    init(backingData: any BackingData<HandWrittenLeft>) { persistentBackingData = backingData }
    static var schemaMetadata: [Schema.PropertyMetadata] {
        [Schema.PropertyMetadata(name: "right", keypath: \HandWrittenLeft.right, defaultValue: nil,
                                 metadata: Schema.Relationship(inverse: \HandWrittenRight.left))]
    }
    var right: HandWrittenRight? {
        get { getValue(forKey: \.right) }
        set { setValue(forKey: \.right, to: newValue) }
    }
}

final class HandWrittenRight: PersistentModel {
    var persistentBackingData: any BackingData<HandWrittenRight>
    init(backingData: any BackingData<HandWrittenRight>) { persistentBackingData = backingData }
    static var schemaMetadata: [Schema.PropertyMetadata] {
        [Schema.PropertyMetadata(name: "left", keypath: \HandWrittenRight.left, defaultValue: nil,
                                 metadata: Schema.Relationship(inverse: \HandWrittenLeft.right))]
    }
    var left: HandWrittenLeft? {
        get { getValue(forKey: \.left) }
        set { setValue(forKey: \.left, to: newValue) }
    }
}

/// Random data for the property-style predicate test.
@Model final class Specimen {
    var label: String
    var number: Int
    var ratio: Double
    var maybe: Int?
    var genre: Genre
    var seen: Date
    var group: SpecimenGroup?
    @Relationship(inverse: \SpecimenMark.specimens) var marks: [SpecimenMark] = []
    /// Stored as JSON text, for predicates over an array's elements and a dictionary's keys.
    var scores: [Int] = []
    var tally: [String: Int] = [:]

    init(label: String, number: Int, ratio: Double, maybe: Int?, genre: Genre, seen: Date) {
        self.label = label
        self.number = number
        self.ratio = ratio
        self.maybe = maybe
        self.genre = genre
        self.seen = seen
    }
}

@Model final class SpecimenGroup {
    var name: String
    var rank: Int
    var specimens: [Specimen] = []
    init(name: String, rank: Int) {
        self.name = name
        self.rank = rank
    }
}

@Model final class SpecimenMark {
    var name: String
    var specimens: [Specimen] = []
    init(name: String) { self.name = name }
}

/// Searchable text, weighted by attribute.
@Model final class Article {
    @Attribute(.spotlight) var title: String
    @Attribute(.spotlight) var body: String
    var category: String
    var rating: Int = 0

    init(title: String, body: String, category: String = "general") {
        self.title = title
        self.body = body
        self.category = category
    }
}

/// A unique term with searchable text: an insert with a saved term takes over that row, and its
/// full-text entry with it.
@Model final class GlossaryEntry {
    @Attribute(.unique) var term: String
    @Attribute(.spotlight) var definition: String

    init(term: String, definition: String) {
        self.term = term
        self.definition = definition
    }
}

/// An entity related to itself: a condition on an item's parent reads other rows of its own table.
@Model final class OutlineItem {
    var title: String
    var parent: OutlineItem?
    @Relationship(inverse: \OutlineItem.parent) var children: [OutlineItem] = []

    init(title: String) { self.title = title }
}
