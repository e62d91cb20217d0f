import Foundation
@testable import ObjectGraph
import XCTest

/// A closed context lets its models go: related models point at each other (a post at its author,
/// the author at its posts), and the context turns loaded relationships back into faults when it
/// closes, so that those cycles do not outlive it. It skips that when none of its models ever held a
/// related model; these tests load relationships by every path (reading either side, prefetching,
/// inserting, linking an inverse, a relationship set before the insert) and check that nothing of
/// the graph is left once the test drops its own references.
final class ContextLifetimeTests: StoreTestCase {
    private var container: ModelContainer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        container = try ModelContainer(
            for: Schema([SocialUser.self, UserPost.self, Recipe.self, Ingredient.self, Book.self, ISBN.self]),
            configurations: ModelConfiguration(url: storeURL))
        let context = ModelContext(container)
        let ana = SocialUser(handle: "ana")
        context.insert(ana)
        for text in ["one", "two"] { context.insert(UserPost(text: text, author: ana)) }
        let soup = Recipe(name: "soup")
        context.insert(soup)
        soup.ingredients = [Ingredient(name: "leek"), Ingredient(name: "salt")]
        let book = Book(title: "Dune")
        context.insert(book)
        book.isbn = ISBN(code: "111")
        try context.save()
    }

    /// Weak references to what `body` returns (models it made or read in `context`), checked after
    /// `body`, the context and the returned array are gone.
    private func assertFreed(
        _ body: (ModelContext) throws -> [AnyObject], file: StaticString = #filePath, line: UInt = #line
    ) throws {
        final class WeakBox { weak var object: AnyObject? }
        var boxes: [WeakBox] = []
        try autoreleasepoolIfAvailable {
            let context = ModelContext(container)
            for object in try body(context) {
                let box = WeakBox()
                box.object = object
                boxes.append(box)
            }
        }
        XCTAssertFalse(boxes.isEmpty, "nothing was checked", file: file, line: line)
        let alive = boxes.compactMap(\.object).map { String(describing: type(of: $0)) }
        XCTAssertEqual(alive, [], "models that outlived their context", file: file, line: line)
    }

    private func autoreleasepoolIfAvailable(_ body: () throws -> Void) rethrows {
        #if canImport(ObjectiveC)
        try autoreleasepool { try body() }
        #else
        try body()
        #endif
    }

    func testModelsWhoseRelationshipsWereNeverReadAreFreed() throws {
        try assertFreed { context in
            try context.fetch(FetchDescriptor<UserPost>()) + context.fetch(FetchDescriptor<SocialUser>())
        }
    }

    func testAToOneReadFromOneSideAndTheToManyFromTheOtherAreFreed() throws {
        try assertFreed { context in
            let posts = try context.fetch(FetchDescriptor<UserPost>())
            let author = try XCTUnwrap(posts.first?.author)
            XCTAssertEqual(author.posts.count, 2)
            return posts + [author]
        }
    }

    func testAToManyReadFirstIsFreed() throws {
        try assertFreed { context in
            let user = try XCTUnwrap(context.fetch(FetchDescriptor<SocialUser>()).first)
            let posts = user.posts
            XCTAssertTrue(posts.allSatisfy { $0.author === user })
            return [user] + posts
        }
    }

    func testPrefetchedRelationshipsAreFreed() throws {
        try assertFreed { context in
            var descriptor = FetchDescriptor<UserPost>()
            descriptor.relationshipKeyPathsForPrefetching = [\.author]
            let posts = try context.fetch(descriptor)
            let authors = posts.compactMap(\.author)
            XCTAssertEqual(authors.count, 2)
            return posts + authors.flatMap(\.posts) + authors
        }
    }

    func testBothSidesOfAManyToManyAreFreed() throws {
        try assertFreed { context in
            let recipes = try context.fetch(FetchDescriptor<Recipe>())
            let ingredients = recipes.flatMap(\.ingredients)
            XCTAssertEqual(ingredients.map(\.name).sorted(), ["leek", "salt"])
            return recipes + ingredients + ingredients.flatMap(\.recipes)
        }
    }

    func testAOneToOneIsFreed() throws {
        try assertFreed { context in
            let book = try XCTUnwrap(context.fetch(FetchDescriptor<Book>()).first)
            let isbn = try XCTUnwrap(book.isbn)
            XCTAssertTrue(isbn.book === book)
            return [book, isbn]
        }
    }

    /// Relating a fetched model to a new one: the new model's side is loaded, the fetched one's
    /// waits as a fault with the change pending; both are saved.
    func testAGraphSavedThroughAFetchedModelIsFreed() throws {
        try assertFreed { context in
            let user = try XCTUnwrap(context.fetch(FetchDescriptor<SocialUser>()).first)
            let post = UserPost(text: "three")
            post.author = user
            context.insert(post)
            try context.save()
            return [user, post]
        }
    }

    /// A graph built before it was inserted (the relationships set while the models belonged to no
    /// context), then inserted and saved.
    func testAGraphBuiltBeforeItsInsertIsFreedAfterItsSave() throws {
        try assertFreed { context in
            let bo = SocialUser(handle: "bo")
            let posts = ["a", "b"].map { UserPost(text: $0, author: bo) }
            XCTAssertEqual(bo.posts.count, 2)
            context.insert(bo)
            try context.save()
            return [bo] + posts
        }
    }

    /// A new post related to a fetched author and never saved: the author's posts, not loaded, hold
    /// the post as a change waiting for the save, and the post holds its author. Closing the context
    /// drops the unsaved change, as it drops every change it did not save.
    func testAnUnsavedPostOfAFetchedAuthorIsFreed() throws {
        try assertFreed { context in
            let user = try XCTUnwrap(context.fetch(FetchDescriptor<SocialUser>()).first)
            let post = UserPost(text: "draft")
            context.insert(post)
            post.author = user
            return [user, post]
        }
    }

    /// The same link made by a post that never joined the context, in its initializer.
    func testAPostNeverInsertedThatNamesAFetchedAuthorIsFreed() throws {
        try assertFreed { context in
            let user = try XCTUnwrap(context.fetch(FetchDescriptor<SocialUser>()).first)
            let post = UserPost(text: "draft", author: user)
            return [user, post]
        }
    }

    /// What a closed context dropped is not in the store: the author, read again, has its two posts.
    func testTheUnsavedPostIsNotInTheStoreOnceTheContextClosed() throws {
        do {
            let context = ModelContext(container)
            let user = try XCTUnwrap(context.fetch(FetchDescriptor<SocialUser>()).first)
            context.insert(UserPost(text: "draft", author: user))
        }
        let context = ModelContext(container)
        let user = try XCTUnwrap(context.fetch(FetchDescriptor<SocialUser>()).first)
        XCTAssertEqual(user.posts.map(\.text).sorted(), ["one", "two"])
    }
}
