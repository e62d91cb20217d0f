/// The names a schema's store gives its tables and indexes, checked for collisions before the store
/// is touched.
///
/// SQLite keeps every table and index of a database in one namespace, and ObjectGraph builds names by
/// joining entity and property names with underscores, so two different owners can get one name: the
/// `#Index` of an entity `Crate_lid` on `label` and that of `Crate` on `lid_label` are both
/// `Crate_lid_label_index`. `CREATE INDEX IF NOT EXISTS` under a taken name does nothing, so the
/// second index would have been missing without a word; a table under a taken name fails at open.
enum StoreNames {
    /// One error per name that two owners would share.
    static func collisions(in entities: [Schema.Entity]) -> [SwiftDataError] {
        var owners: [String: String] = [
            StoreSchemaWriter.metadataTable.lowercased(): "ObjectGraph's metadata table",
            HistoryLog.table.lowercased(): "ObjectGraph's history table",
        ]
        var errors: [SwiftDataError] = []
        func claim(_ name: String, for owner: String, entity: String) {
            // SQLite compares names without regard to ASCII case.
            let key = name.lowercased()
            guard let holder = owners[key] else {
                owners[key] = owner
                return
            }
            guard holder != owner else { return }
            errors.append(SwiftDataError(
                .loadIssueModelContainer,
                "\(owner) and \(holder) would both be named \(name) in the store, where tables and indexes share "
                    + "one set of names: rename an entity or property so that the underscores joining them differ",
                entity: entity))
        }
        for entity in entities {
            let layout = entity.layout
            claim(layout.name, for: "the table of \(layout.name)", entity: layout.name)
            if let fullText = FullTextIndex.of(layout) {
                claim(fullText.tableName, for: "the full-text index of \(layout.name)", entity: layout.name)
            }
            for constraint in layout.uniquenessConstraints {
                let list = constraint.slots.map(\.name).joined(separator: ", ")
                claim(constraint.indexName, for: "the unique index of \(layout.name) on \(list)", entity: layout.name)
            }
            for slot in layout.foreignKeySlots {
                claim(EntityLayout.foreignKeyIndexName(entity: layout.name, slot: slot),
                      for: "the index of \(layout.name).\(slot.name)", entity: layout.name)
            }
            for columns in layout.indexes {
                let list = columns.map(\.propertyName).joined(separator: ", ")
                claim(EntityLayout.indexName(entity: layout.name, columns: columns),
                      for: "the #Index of \(layout.name) on \(list)", entity: layout.name)
            }
            for slot in layout.toManySlots {
                guard let joinTable = layout.mapping(for: slot).writtenJoinTable else { continue }
                let owner = "the join table of \(layout.name).\(slot.name)"
                claim(joinTable.name, for: owner, entity: layout.name)
                claim(EntityLayout.joinTableIndexName(table: joinTable.name), for: "the index of " + owner, entity: layout.name)
            }
        }
        return errors
    }
}
