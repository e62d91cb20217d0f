import Foundation

/// How one relationship is stored, and its inverse.
///
/// - A to-one relationship is a column of its entity's table holding the related row's key.
/// - A to-many relationship whose inverse is to-one is read through that inverse's column.
/// - A many-to-many pair, or a to-many relationship without an inverse, is a join table with a
///   `position` column, so that arrays come back in the order they were built. One side of a pair,
///   the *writer*, writes the table; the other side only reads it.
final class RelationshipMapping: @unchecked Sendable {
    struct JoinTable {
        let name: String
        /// The column holding this side's key, and the one holding the other side's.
        let ownColumn: String
        let otherColumn: String
        /// True for the side that writes the table (and whose arrays keep their order in `position`).
        let isWriter: Bool
    }

    enum Storage {
        case foreignKey
        case inverseForeignKey(column: String)
        case joinTable(JoinTable)
    }

    let slot: PropertySlot
    let owner: EntityLayout
    let destination: EntityLayout
    let inverse: PropertySlot?
    let storage: Storage
    let error: SwiftDataError?

    init(slot: PropertySlot, in owner: EntityLayout) {
        self.slot = slot
        self.owner = owner
        let relationship = slot.relationship ?? Schema.Relationship()
        let destination = relationship.destinationType.map { EntityLayout.of($0) } ?? owner
        self.destination = destination
        var error: SwiftDataError?
        let inverse = Self.findInverse(of: slot, in: owner, destination: destination, error: &error)
        self.inverse = inverse
        self.error = error
        relationship.inverseName = inverse?.name

        if relationship.isToOneRelationship {
            storage = .foreignKey
        } else if let inverse, inverse.isForeignKey {
            storage = .inverseForeignKey(column: inverse.name)
        } else if let inverse {
            // The pair's writer is the side whose "Entity.property" sorts first, the same from both sides.
            let mine = "\(owner.name).\(slot.name)"
            let theirs = "\(destination.name).\(inverse.name)"
            let isWriter = mine < theirs
            let writerName = isWriter ? mine : theirs
            storage = .joinTable(JoinTable(
                name: "_" + writerName.replacingOccurrences(of: ".", with: "_"),
                ownColumn: isWriter ? "source" : "destination",
                otherColumn: isWriter ? "destination" : "source",
                isWriter: isWriter))
        } else {
            storage = .joinTable(JoinTable(
                name: "_\(owner.name)_\(slot.name)", ownColumn: "source", otherColumn: "destination", isWriter: true))
        }
    }

    var isToMany: Bool { slot.isToMany }

    /// Whether the owner's row version follows this relationship (see `bumpVersionsOfRelationshipOwners`):
    /// true for the to-one column and the writer side of a join table; a to-many read through the
    /// inverse's column, or the other side of a join table, changes in other rows.
    var isVersionedByOwner: Bool {
        switch storage {
        case .foreignKey: true
        case .inverseForeignKey: false
        case .joinTable(let table): table.isWriter
        }
    }

    /// The join table this side writes, if any.
    var writtenJoinTable: JoinTable? {
        if case .joinTable(let table) = storage, table.isWriter { return table }
        return nil
    }

    var joinTable: JoinTable? {
        if case .joinTable(let table) = storage { return table }
        return nil
    }

    /// An inverse named with `@Relationship(inverse:)` on either side, or else the one relationship of the
    /// destination that points back, when there is exactly one each way.
    private static func findInverse(
        of slot: PropertySlot, in owner: EntityLayout, destination: EntityLayout, error: inout SwiftDataError?
    ) -> PropertySlot? {
        let relationships = destination.slots.filter { $0.relationship != nil }
        let pointingBack = relationships.filter { $0.relationship?.destination == owner.name }
        let declaredHere = slot.relationship?.inverseKeyPath
        let declaringThis = pointingBack.filter { candidate in
            guard let keyPath = candidate.relationship?.inverseKeyPath else { return false }
            return owner.slot(for: keyPath) === slot
        }
        if let declaredHere {
            guard let inverse = destination.slot(for: declaredHere), inverse.relationship?.destination == owner.name else {
                error = SwiftDataError(
                    .modelValidationFailure,
                    "\(owner.name).\(slot.name) names an inverse that is not a relationship of \(destination.name) to \(owner.name)",
                    entity: owner.name, property: slot.name)
                return nil
            }
            if let keyPath = inverse.relationship?.inverseKeyPath, owner.slot(for: keyPath) === slot {
                error = SwiftDataError(
                    .modelValidationFailure,
                    "\(owner.name).\(slot.name) and \(destination.name).\(inverse.name) both declare each other as inverse: "
                        + "write @Relationship(inverse:) on one side only",
                    entity: owner.name, property: slot.name)
            }
            return inverse
        }
        if let declared = declaringThis.first { return declared }
        let candidates = pointingBack.filter { $0 !== slot && $0.relationship?.inverseKeyPath == nil }
        let mirrors = owner.slots.filter {
            $0.relationship?.destination == destination.name && $0.relationship?.inverseKeyPath == nil && $0 !== candidates.first
        }
        if candidates.count == 1, mirrors.count == 1, mirrors.first === slot {
            // A candidate that another relationship claims explicitly is not free to pair with this one.
            let claimed = owner.slots.contains { other in
                guard other !== slot, let keyPath = other.relationship?.inverseKeyPath else { return false }
                return destination.slot(for: keyPath) === candidates[0]
            }
            return claimed ? nil : candidates[0]
        }
        return nil
    }
}
