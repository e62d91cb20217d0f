import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTest

/// The main journeys of a user, in a real headless Chromium, with JavaScript on and off.
/// Screenshots of the main pages are kept in `.build/browser-screenshots/`.
class BrowserJourneyTestCase: XCTestCase {
    var app: Application!
    var browser: WebDriver!
    var baseURL = ""
    var dataDirectory: URL!
    var javaScript: Bool { true }

    static let screenshots = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/browser-screenshots")

    override func setUp() async throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("snippetbox-browser-\(UUID().uuidString)")
        app = try await Application.make(.testing)
        try configure(app, settings: AppSettings(host: "127.0.0.1", port: 0, dataDirectory: dataDirectory, maxUploadMegabytes: 2,
                                                passwordHashCost: 4))
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        guard let port = app.http.server.shared.localAddress?.port else { throw WebDriver.Failure(description: "no port") }
        baseURL = "http://127.0.0.1:\(port)"
        browser = try await WebDriver(javaScript: javaScript, client: app.client)
    }

    override func tearDown() async throws {
        await browser?.quit()
        await app?.server.shutdown()
        try await app?.asyncShutdown()
        try? FileManager.default.removeItem(at: dataDirectory)
    }

    func go(_ path: String) async throws {
        try await browser.open(baseURL + path)
    }

    func keep(_ name: String) async throws {
        try await browser.screenshot(to: Self.screenshots.appendingPathComponent("\(javaScript ? "js" : "nojs")-\(name).png"))
    }

    /// Waits (up to ten seconds) for the page to show a text: a click that submits a form can return
    /// before the next page has loaded.
    func assertPage(contains text: String, file: StaticString = #filePath, line: UInt = #line) async throws {
        for _ in 0..<100 {
            if try await browser.pageSource.contains(text) { return }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        let shown = (try? await browser.text(of: "main")) ?? ""
        XCTFail("the page does not show “\(text)”; it shows: \(shown.prefix(400))", file: file, line: line)
    }

    /// The first visit asks for the administrator's account, then logs it in.
    func createFirstAccount() async throws {
        try await go("/snippets")
        try await assertPage(contains: "Welcome to SnippetBox")
        try await browser.type("ada", into: "#username")
        try await browser.type("a long passphrase", into: "#password")
        try await browser.type("a long passphrase", into: "#confirmation")
        try await keep("setup")
        try await browser.click("form button[type=submit]")
        try await assertPage(contains: "Welcome, ada.")
    }

    /// The whole journey: folders and tags, a snippet with an image, highlighting, editing, favourites,
    /// filters, and deleting a folder both ways.
    func runJourney() async throws {
        try await createFirstAccount()
        try await assertPage(contains: "Add example snippets")
        try await keep("empty")

        // Folders and tags.
        try await go("/folders")
        try await browser.type("Work", into: "#folder-name")
        try await browser.click("form.inline-form button[type=submit]")
        try await assertPage(contains: "Folder “\u{2068}Work\u{2069}” created.")
        try await go("/tags")
        try await browser.type("swift", into: "#tag-name")
        try await browser.click("form.inline-form button[type=submit]")
        try await assertPage(contains: "Tag “\u{2068}swift\u{2069}” created.")
        try await browser.type("SWIFT", into: "#tag-name")
        try await browser.click("form.inline-form button[type=submit]")
        try await assertPage(contains: "There is already a tag named")
        try await keep("tags")

        // A snippet with an image.
        let imagePath = dataDirectory.appendingPathComponent("shot.png")
        try tinyPNG.write(to: imagePath)
        try await go("/snippets/new")
        try await browser.type("Fetch with a predicate", into: "#title")
        try await browser.select("Swift", in: "#language")
        try await browser.select("Work", in: "#folder")
        try await browser.click("input[name='tags[]']")
        try await browser.type("database", into: "#newTags")
        try await browser.type("let recent = try context.fetch(descriptor) // newest first", into: "#code")
        try await browser.type("Needs a **context**.", into: "#notes")
        try await browser.attach(imagePath.path, to: "#image")
        try await keep("form")
        try await browser.click("form.snippet-form button[type=submit]")
        try await assertPage(contains: "Snippet created.")
        try await assertPage(contains: #"<span class="tok-keyword">let</span>"#)
        try await assertPage(contains: "<strong>context</strong>")
        let imageShown = try await browser.isDisplayed(".screenshot img")
        XCTAssertTrue(imageShown)
        try await keep("snippet")

        // Edit it.
        try await browser.click(".snippet .actions a[href$='/edit']")
        try await assertPage(contains: "Edit snippet")
        try await browser.type("Fetch recent rows", into: "#title")
        try await browser.click("form.snippet-form button[type=submit]")
        try await assertPage(contains: "Snippet saved.")
        try await assertPage(contains: "Fetch recent rows")

        // Favourite it, then filter by favourites, folder and tag.
        try await browser.click(".snippet .actions form button")
        try await assertPage(contains: "Added to favorites.")
        try await go("/snippets?favorites=1")
        try await assertPage(contains: "Fetch recent rows")
        try await browser.click(".sidebar a[href*='folder=']:not([href*='unfiled'])")
        try await assertPage(contains: "<h1>\u{2068}Work\u{2069}</h1>")
        try await assertPage(contains: "Fetch recent rows")
        try await browser.click(".sidebar .tags a[href*='tag=']")
        try await assertPage(contains: "Fetch recent rows")
        try await keep("filtered")

        // Many at once: select the list's snippets, and unstar the checked one.
        try await go("/snippets")
        try await browser.click(".select-link a")
        try await assertPage(contains: "Select snippets: All snippets")
        try await browser.click("input[name='ids[]']")
        try await browser.select("Remove from favorites", in: "#bulk-action")
        try await keep("select")
        try await browser.click(".bulk-select button.primary")
        try await assertPage(contains: "Removed 1 snippet from favorites.")

        // A second snippet in Scratch, then delete both folders, one each way.
        try await go("/snippets/new")
        try await browser.type("Throwaway", into: "#title")
        try await browser.type("Scratch", into: "#newFolder")
        try await browser.click("form.snippet-form button[type=submit]")
        try await assertPage(contains: "Snippet created.")
        try await go("/folders")
        try await browser.click("a[href$='/delete']")
        try await assertPage(contains: "It holds 1 snippet")
        try await keep("folder-delete")
        try await browser.click("input[value=delete]")
        try await browser.click("form button.danger")
        try await assertPage(contains: "its 1 snippet is in the trash")
        try await go("/folders")
        try await browser.click("a[href$='/delete']")
        try await assertPage(contains: "Delete the folder")
        try await browser.click("input[value=move]")
        try await browser.click("form button.danger")
        try await assertPage(contains: "its 1 snippet moved to Unfiled")
        try await go("/snippets?folder=unfiled")
        try await assertPage(contains: "Fetch recent rows")
        let account = try XCTUnwrap(app.accounts.account(username: "ada"))
        let titles = try ModelContext(app.libraries.store(for: account).container)
            .fetch(FetchDescriptor<Snippet>(predicate: Snippet.inLibrary)).map(\.title)
        XCTAssertEqual(titles, ["Fetch recent rows"])

        // Delete the snippet, with confirmation.
        try await go("/snippets")
        try await browser.click(".snippet-list a")
        try await assertPage(contains: "<article class=\"snippet\">")
        try await browser.click(".snippet .actions a.danger")
        try await assertPage(contains: "restored for 30 days")
        try await browser.click("form.actions button.danger")
        try await assertPage(contains: "Moved “\u{2068}Fetch recent rows\u{2069}” to the trash.")

        // Restore it from the trash, then log out.
        try await go("/trash")
        try await assertPage(contains: "Throwaway")
        try await keep("trash")
        try await browser.click("form[action$='/restore'] button")
        try await assertPage(contains: "Restored “\u{2068}")
        try await browser.click("form[action$='/logout'] button")
        try await assertPage(contains: "Log in")
        try await go("/snippets")
        try await assertPage(contains: "Log in")
    }
}

final class BrowserJourneyWithJavaScriptTests: BrowserJourneyTestCase {
    func testTheMainJourney() async throws {
        try await runJourney()
    }

    func testTheCopyButtonAppearsOnlyWithJavaScript() async throws {
        try await createFirstAccount()
        try await go("/snippets/new")
        try await browser.type("Copy me", into: "#title")
        try await browser.click("form.snippet-form button[type=submit]")
        try await assertPage(contains: "Snippet created.")
        let copyButtonShown = try await browser.isDisplayed(".copy-button")
        XCTAssertTrue(copyButtonShown)
    }
}

final class BrowserJourneyWithoutJavaScriptTests: BrowserJourneyTestCase {
    override var javaScript: Bool { false }

    func testTheMainJourney() async throws {
        try await runJourney()
    }
}
