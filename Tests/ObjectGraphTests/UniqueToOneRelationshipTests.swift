import Foundation
import GRDB
@testable import ObjectGraph
import XCTest

/// A member of a club; nothing of hers points back at her card.
@Model final class ClubMember {
    var name: String
    init(name: String) { self.name = name }
}

/// One card per member: a unique to-one relationship without an inverse.
@Model final class MembershipCard {
    @Relationship(.unique) var member: ClubMember?
    var tier: Int
    init(member: ClubMember?, tier: Int) {
        self.member = member
        self.tier = tier
    }
}

/// An account with profiles, of which the unique to-one relationship allows one.
@Model final class ForumAccount {
    var handle: String
    @Relationship(deleteRule: .cascade, inverse: \ForumProfile.account) var profiles: [ForumProfile] = []
    init(handle: String) { self.handle = handle }
}

@Model final class ForumProfile {
    @Relationship(.unique) var account: ForumAccount?
    var bio: String
    init(bio: String) { self.bio = bio }
}

/// `@Relationship(.unique)` on a to-one relationship, which SwiftData allows as it allows unique
/// attributes: the key column gets a unique index, an insert that refers to the model a saved row
/// refers to takes that row over, and an edit that would make two rows refer to one model throws.
final class UniqueToOneRelationshipTests: StoreTestCase {
    private func savedMembers(_ names: [String], in container: ModelContainer) throws -> [ClubMember] {
        let context = ModelContext(container)
        let members = names.map { ClubMember(name: $0) }
        for member in members { context.insert(member) }
        try context.save()
        return members
    }

    private func member(_ name: String, in context: ModelContext) throws -> ClubMember {
        try XCTUnwrap(context.fetch(FetchDescriptor<ClubMember>(predicate: #Predicate { $0.name == name })).first)
    }

    /// Each stored card: its member's name (or "-") and tier, sorted.
    private func storedCards() throws -> [String] {
        try rawRows("""
            SELECT "ClubMember"."name" AS "name", "MembershipCard"."tier" AS "tier" FROM "MembershipCard"
            LEFT JOIN "ClubMember" ON "ClubMember"."_pk" = "MembershipCard"."member"
            """).map { "\(($0["name"] as String?) ?? "-")=\($0["tier"] as Int)" }.sorted()
    }

    func testTheKeyColumnHasAUniqueIndexAndTheSchemaListsTheConstraint() throws {
        let container = try makeContainer(ClubMember.self, MembershipCard.self)
        let indexes = try rawRows("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'MembershipCard'")
        XCTAssertTrue(indexes.contains { ($0["sql"] as String?)?.contains("UNIQUE INDEX") == true && ($0["sql"] as String?)?.contains("\"member\"") == true },
                      "\(indexes.map { $0["sql"] as String? })")
        let entity = try XCTUnwrap(container.schema.entities.first { $0.name == "MembershipCard" })
        XCTAssertEqual(entity.uniquenessConstraints, [["member"]])
        XCTAssertEqual(container.schema.entities.first { $0.name == "ClubMember" }?.uniquenessConstraints, [])
    }

    func testASecondCardForAMemberTakesOverTheSavedCard() throws {
        let container = try makeContainer(ClubMember.self, MembershipCard.self)
        _ = try savedMembers(["ada", "alan"], in: container)
        let saved: PersistentIdentifier
        do {
            let context = ModelContext(container)
            let card = MembershipCard(member: try member("ada", in: context), tier: 1)
            context.insert(card)
            context.insert(MembershipCard(member: try member("alan", in: context), tier: 1))
            try context.save()
            saved = card.persistentModelID
        }
        let context = ModelContext(container)
        let upgrade = MembershipCard(member: try member("ada", in: context), tier: 3)
        context.insert(upgrade)
        try context.save()

        XCTAssertEqual(try storedCards(), ["ada=3", "alan=1"])
        XCTAssertEqual(upgrade.persistentModelID, saved, "the insert stands for the row it took over")
        let fresh = ModelContext(container)
        XCTAssertEqual(try fresh.fetchCount(FetchDescriptor<MembershipCard>()), 2)
    }

    func testTwoPendingCardsForOneMemberBecomeOneRowWhetherTheMemberIsSavedOrNew() throws {
        let container = try makeContainer(ClubMember.self, MembershipCard.self)
        _ = try savedMembers(["ada"], in: container)
        let context = ModelContext(container)
        let ada = try member("ada", in: context)
        let grace = ClubMember(name: "grace")
        let cards = [MembershipCard(member: ada, tier: 1), MembershipCard(member: grace, tier: 1),
                     MembershipCard(member: ada, tier: 2), MembershipCard(member: grace, tier: 5)]
        for card in cards { context.insert(card) }
        try context.save()

        XCTAssertEqual(try storedCards(), ["ada=2", "grace=5"])
        XCTAssertEqual(cards[0].persistentModelID, cards[2].persistentModelID)
        XCTAssertEqual(cards[1].persistentModelID, cards[3].persistentModelID)
        XCTAssertEqual(cards[0].tier, 2)
    }

    func testCardsWithoutAMemberDoNotCollide() throws {
        let container = try makeContainer(ClubMember.self, MembershipCard.self)
        let context = ModelContext(container)
        for tier in 1...3 { context.insert(MembershipCard(member: nil, tier: tier)) }
        try context.save()
        context.insert(MembershipCard(member: nil, tier: 4))
        try context.save()
        XCTAssertEqual(try storedCards(), ["-=1", "-=2", "-=3", "-=4"])
    }

    func testGivingACardAMemberAnotherCardHasThrowsNamingTheRelationshipAndRollbackRecovers() throws {
        let container = try makeContainer(ClubMember.self, MembershipCard.self)
        _ = try savedMembers(["ada", "alan"], in: container)
        let context = ModelContext(container)
        let alansCard = MembershipCard(member: try member("alan", in: context), tier: 1)
        context.insert(MembershipCard(member: try member("ada", in: context), tier: 1))
        context.insert(alansCard)
        try context.save()

        alansCard.member = try member("ada", in: context)
        XCTAssertThrowsError(try context.save()) { error in
            let error = error as? SwiftDataError
            XCTAssertEqual(error?.code, .uniqueConstraintViolation)
            XCTAssertEqual(error?.entityName, "MembershipCard")
            XCTAssertEqual(error?.propertyName, "member")
        }
        context.rollback()
        XCTAssertEqual(alansCard.member?.name, "alan")
        XCTAssertEqual(try storedCards(), ["ada=1", "alan=1"])
        alansCard.tier = 2
        try context.save()
        XCTAssertEqual(try storedCards(), ["ada=1", "alan=2"])
    }

    func testTwoCardsSwappingMembersSave() throws {
        let container = try makeContainer(ClubMember.self, MembershipCard.self)
        _ = try savedMembers(["ada", "alan"], in: container)
        let context = ModelContext(container)
        let ada = try member("ada", in: context), alan = try member("alan", in: context)
        let first = MembershipCard(member: ada, tier: 1), second = MembershipCard(member: alan, tier: 2)
        context.insert(first)
        context.insert(second)
        try context.save()

        first.member = alan
        second.member = ada
        try context.save()
        XCTAssertEqual(try storedCards(), ["ada=2", "alan=1"])
    }

    func testAnUpsertedProfileIsTheAccountsOnlyProfile() throws {
        let container = try makeContainer(ForumAccount.self, ForumProfile.self)
        let context = ModelContext(container)
        let account = ForumAccount(handle: "ada")
        context.insert(account)
        let first = ForumProfile(bio: "first")
        first.account = account
        try context.save()
        XCTAssertEqual(account.profiles.map(\.bio), ["first"])

        let other = ModelContext(container)
        let held = try XCTUnwrap(other.fetch(FetchDescriptor<ForumAccount>()).first)
        XCTAssertEqual(held.profiles.count, 1)
        let second = ForumProfile(bio: "second")
        other.insert(second)
        second.account = held
        XCTAssertEqual(held.profiles.count, 2, "until the save, two profiles refer to the account")
        try other.save()

        XCTAssertEqual(held.profiles.map(\.bio), ["second"])
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<ForumProfile>()).map(\.bio), ["second"])
        XCTAssertEqual(try ModelContext(container).fetch(FetchDescriptor<ForumAccount>()).first?.profiles.map(\.bio), ["second"])
    }

    /// A saved profile moved to a new account, and a new profile for that account, in one save: the
    /// edit comes first, so the insert takes the moved profile's row over, as it would had the
    /// account been saved. The move's reference waited for the account's key until every insert
    /// was written, and then broke the unique index the insert had not met.
    func testANewProfileForANewAccountTakesOverTheProfileMovedToItInTheSameSave() throws {
        for profileFirst in [false, true] {
            let container = try ModelContainer(
                for: Schema([ForumAccount.self, ForumProfile.self]),
                configurations: ModelConfiguration(url: folder.appendingPathComponent("profile-first-\(profileFirst).store")))
            let context = ModelContext(container)
            let moved = ForumProfile(bio: "moved")
            context.insert(moved)
            try context.save()

            let account = ForumAccount(handle: "new")
            let fresh = ForumProfile(bio: "fresh")
            if profileFirst {
                fresh.account = account
                context.insert(fresh)
            } else {
                context.insert(account)
                context.insert(fresh)
                fresh.account = account
            }
            moved.account = account
            try context.save()

            XCTAssertEqual(account.profiles.map(\.bio), ["fresh"], "profile inserted first: \(profileFirst)")
            XCTAssertEqual(moved.bio, "fresh")
            let stored = try ModelContext(container).fetch(FetchDescriptor<ForumProfile>())
            XCTAssertEqual(stored.map(\.bio), ["fresh"])
            XCTAssertEqual(stored.first?.account?.handle, "new")
        }
    }
}

// A pass's holder, not unique at V1, unique from V2, not unique again at V3.
enum PassesV1: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(1, 0, 0) }
    static var models: [any PersistentModel.Type] { [PassHolder.self, Pass.self] }

    @Model final class PassHolder {
        var name: String
        init(name: String) { self.name = name }
    }

    @Model final class Pass {
        var holder: PassHolder?
        var zone: Int
        init(holder: PassHolder?, zone: Int) {
            self.holder = holder
            self.zone = zone
        }
    }
}

enum PassesV2: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(2, 0, 0) }
    static var models: [any PersistentModel.Type] { [PassHolder.self, Pass.self] }

    @Model final class PassHolder {
        var name: String
        init(name: String) { self.name = name }
    }

    @Model final class Pass {
        @Relationship(.unique) var holder: PassHolder?
        var zone: Int
        init(holder: PassHolder?, zone: Int) {
            self.holder = holder
            self.zone = zone
        }
    }
}

enum PassesV3: VersionedSchema {
    static var versionIdentifier: Schema.Version { Schema.Version(3, 0, 0) }
    static var models: [any PersistentModel.Type] { [PassHolder.self, Pass.self] }

    @Model final class PassHolder {
        var name: String
        init(name: String) { self.name = name }
    }

    @Model final class Pass {
        var holder: PassHolder?
        var zone: Int
        init(holder: PassHolder?, zone: Int) {
            self.holder = holder
            self.zone = zone
        }
    }
}

final class UniqueToOneRelationshipMigrationTests: StoreTestCase {
    private func container<V: VersionedSchema>(_ version: V.Type) throws -> ModelContainer {
        try ModelContainer(for: Schema(versionedSchema: version), configurations: ModelConfiguration(url: storeURL))
    }

    private func uniqueIndexes() throws -> [String] {
        try rawRows("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Pass' AND sql LIKE 'CREATE UNIQUE%'")
            .map { $0["sql"] as String }
    }

    func testUniqueAddedToARelationshipAndTakenAwayAgain() throws {
        do {
            let context = ModelContext(try container(PassesV1.self))
            for (name, zone) in [("ada", 1), ("alan", 2)] {
                context.insert(PassesV1.Pass(holder: PassesV1.PassHolder(name: name), zone: zone))
            }
            try context.save()
        }
        XCTAssertEqual(try uniqueIndexes(), [])
        do {
            let context = ModelContext(try container(PassesV2.self))
            XCTAssertEqual(try uniqueIndexes().count, 1)
            let ada = try XCTUnwrap(context.fetch(FetchDescriptor<PassesV2.PassHolder>(predicate: #Predicate { $0.name == "ada" })).first)
            context.insert(PassesV2.Pass(holder: ada, zone: 3))
            try context.save()
            XCTAssertEqual(try context.fetch(FetchDescriptor<PassesV2.Pass>(sortBy: [SortDescriptor(\.zone)])).map(\.zone), [2, 3], "now an upsert")
        }
        let context = ModelContext(try container(PassesV3.self))
        XCTAssertEqual(try uniqueIndexes(), [], "the unique index goes with the option")
        let ada = try XCTUnwrap(context.fetch(FetchDescriptor<PassesV3.PassHolder>(predicate: #Predicate { $0.name == "ada" })).first)
        context.insert(PassesV3.Pass(holder: ada, zone: 4))
        try context.save()
        XCTAssertEqual(try context.fetchCount(FetchDescriptor<PassesV3.Pass>()), 3)
    }

    func testUniqueAddedToARelationshipTwoRowsShareFailsClearlyAndChangesNothing() throws {
        do {
            let context = ModelContext(try container(PassesV1.self))
            let ada = PassesV1.PassHolder(name: "ada")
            context.insert(PassesV1.Pass(holder: ada, zone: 1))
            context.insert(PassesV1.Pass(holder: ada, zone: 2))
            try context.save()
        }
        let before = try Data(contentsOf: storeURL)
        XCTAssertThrowsError(try container(PassesV2.self)) { error in
            XCTAssertEqual((error as? SwiftDataError)?.code, .migrationFailure, "\(error)")
            XCTAssertTrue("\(error)".contains("Pass.holder"), "\(error)")
        }
        XCTAssertEqual(try Data(contentsOf: storeURL), before)
        XCTAssertEqual(try ModelContext(try container(PassesV1.self)).fetchCount(FetchDescriptor<PassesV1.Pass>()), 2)
    }
}
