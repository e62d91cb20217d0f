import Foundation
import ObjectGraph

// Successive versions of the same entities, as an app's history would have them.

enum ItemsV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Item.self, Box.self] }

    @Model final class Item {
        var name: String
        var size: Int
        var note: String?
        var legacy: String = "old"
        var photo: Data?
        var box: Box?
        init(name: String, size: Int) {
            self.name = name
            self.size = size
        }
    }

    @Model final class Box {
        var label: String
        @Relationship(deleteRule: .nullify, inverse: \Item.box) var items: [Item] = []
        init(label: String) { self.label = label }
    }
}

/// Every lightweight change at once: a new optional and a new defaulted attribute, one removed,
/// two renamed, one made required with a default, a relationship renamed, a delete rule changed,
/// `.unique` and `.externalStorage` added.
enum ItemsV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Item.self, Box.self] }

    @Model final class Item {
        @Attribute(.unique) var name: String
        @Attribute(originalName: "size") var weight: Int
        var note: String = "none"
        var rating: Int?
        var color: String = "grey"
        @Attribute(.externalStorage) var photo: Data?
        @Relationship(originalName: "box") var container: Box?
        /// A relationship added in V2 (and removed again in V3).
        var spare: Box?
        init(name: String, weight: Int) {
            self.name = name
            self.weight = weight
        }
    }

    @Model final class Box {
        var label: String
        @Relationship(deleteRule: .cascade, inverse: \Item.container) var items: [Item] = []
        init(label: String) { self.label = label }
    }
}

/// An unsafe change: an attribute's type.
enum ItemsTypeChange: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Item.self, Box.self] }

    @Model final class Item {
        var name: String
        var size: String
        init(name: String, size: String) {
            self.name = name
            self.size = size
        }
    }

    @Model final class Box {
        var label: String
        init(label: String) { self.label = label }
    }
}

/// An unsafe change: a new required attribute without a default.
enum ItemsRequiredWithoutDefault: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Item.self] }

    @Model final class Item {
        var name: String
        var size: Int
        var owner: String
        init(name: String, size: Int, owner: String) {
            self.name = name
            self.size = size
            self.owner = owner
        }
    }
}

/// `.externalStorage` removed again.
enum ItemsV3: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] { [Item.self, Box.self] }

    @Model final class Item {
        @Attribute(.unique) var name: String
        var weight: Int
        var note: String = "none"
        var rating: Int?
        var color: String = "grey"
        var photo: Data?
        var container: Box?
        init(name: String, weight: Int) {
            self.name = name
            self.weight = weight
        }
    }

    @Model final class Box {
        var label: String
        @Relationship(deleteRule: .cascade, inverse: \Item.container) var items: [Item] = []
        init(label: String) { self.label = label }
    }
}

// The seed's notes app: V1 allowed duplicate titles, V2 makes them unique, V3 adds a priority.

enum NoteSchemaV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Memo.self] }

    @Model final class Memo {
        var title: String
        var text: String
        init(title: String, text: String) {
            self.title = title
            self.text = text
        }
    }
}

enum NoteSchemaV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Memo.self] }

    @Model final class Memo {
        @Attribute(.unique) var title: String
        var text: String
        init(title: String, text: String) {
            self.title = title
            self.text = text
        }
    }
}

enum NoteSchemaV3: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] { [Memo.self] }

    @Model final class Memo {
        @Attribute(.unique) var title: String
        var text: String
        var priority: Int = 0
        init(title: String, text: String) {
            self.title = title
            self.text = text
        }
    }
}

enum NoteMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [NoteSchemaV1.self, NoteSchemaV2.self, NoteSchemaV3.self] }
    static var stages: [MigrationStage] { [dedupeTitles, addPriority] }

    /// Titles must be unique from V2 on: duplicates get a number before the unique index is made.
    static let dedupeTitles = MigrationStage.custom(
        fromVersion: NoteSchemaV1.self,
        toVersion: NoteSchemaV2.self,
        willMigrate: { context in
            var seen: [String: Int] = [:]
            for memo in try context.fetch(FetchDescriptor<NoteSchemaV1.Memo>(sortBy: [SortDescriptor(\.title)])) {
                let count = seen[memo.title, default: 0]
                seen[memo.title] = count + 1
                if count > 0 { memo.title = "\(memo.title) (\(count + 1))" }
            }
            try context.save()
        },
        didMigrate: nil)

    static let addPriority = MigrationStage.lightweight(fromVersion: NoteSchemaV2.self, toVersion: NoteSchemaV3.self)
}

/// A plan whose second stage fails half-way, after the first has changed the copy.
enum FailingMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [NoteSchemaV1.self, NoteSchemaV2.self, NoteSchemaV3.self] }
    static var stages: [MigrationStage] {
        [NoteMigrationPlan.dedupeTitles,
         .custom(fromVersion: NoteSchemaV2.self, toVersion: NoteSchemaV3.self, willMigrate: nil, didMigrate: { context in
             for memo in try context.fetch(FetchDescriptor<NoteSchemaV3.Memo>()) { memo.priority = 9 }
             try context.save()
             throw MigrationTestError.stageFailed
         })]
    }
}

enum MigrationTestError: Error { case stageFailed }

/// NoteSchemaV1's `Memo`, renamed.
enum RenamedNoteSchema: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Jotting.self] }

    @Model final class Jotting {
        var title: String
        @Attribute(originalName: "text") var body: String
        init(title: String, body: String) {
            self.title = title
            self.body = body
        }
    }
}

extension RenamedNoteSchema.Jotting: OriginallyNamedModel {
    static var originalEntityName: String { "Memo" }
}

// A trip log that gains `#Unique` on a pair of properties, and then loses it.

enum VisitsV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [Visit.self] }

    @Model final class Visit {
        var city: String
        var day: Int
        var note: String = ""
        init(city: String, day: Int, note: String = "") {
            self.city = city
            self.day = day
            self.note = note
        }
    }
}

enum VisitsV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [Visit.self] }

    @Model final class Visit {
        #Unique<Visit>([\.city, \.day])
        var city: String
        var day: Int
        var note: String = ""
        init(city: String, day: Int, note: String = "") {
            self.city = city
            self.day = day
            self.note = note
        }
    }
}

/// Version 1's shape again, under a later version: the constraint is dropped going forwards.
enum VisitsV3: VersionedSchema {
    typealias Visit = VisitsV1.Visit
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] { [Visit.self] }
}
