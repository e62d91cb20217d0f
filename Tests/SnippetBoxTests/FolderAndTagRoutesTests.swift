import Foundation
import ObjectGraph
@testable import SnippetBox
import Vapor
import XCTVapor
import XCTest

final class FolderRoutesTests: AppTestCase {
    private func createFolder(_ name: String) async throws -> HTTPStatus {
        var status = HTTPStatus.ok
        try await send(.POST, "/folders", beforeRequest: { req async throws in try req.content.encode(["name": name], as: .urlEncodedForm) }) { response async throws in
            status = response.status
        }
        return status
    }

    private func folderID(_ name: String) throws -> String {
        try withContext { context in
            try XCTUnwrap(context.fetch(FetchDescriptor<Folder>()).first { $0.name == name }).uuid.uuidString
        }
    }

    func testCreateRenameAndRefuseDuplicates() async throws {
        try await expectStatus(.seeOther, createFolder("Work"))
        try await expectPage("/folders", shows: "Work")
        try await expectStatus(.unprocessableEntity, createFolder("work"))
        try await expectStatus(.unprocessableEntity, createFolder(""))
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Folder>()) }, 1)

        let id = try folderID("Work")
        try await send(.POST, "/folders/\(id)", beforeRequest: { req async throws in try req.content.encode(["name": "Job"], as: .urlEncodedForm) }) { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        }
        try await expectPage("/folders", shows: "Job")
    }

    /// The snippet form's "new folder" field finds a folder named the same but for case or Unicode
    /// normalization, as the folders page refuses a second one (it made "docs" beside "Docs").
    func testANewFolderNamedInTheSnippetFormInAnotherCaseIsTheSameFolder() async throws {
        try await expectStatus(.seeOther, createFolder("Docs"))
        try await createSnippet(SnippetUpload(title: "One", newFolder: "docs"))
        try await createSnippet(SnippetUpload(title: "Two", newFolder: "DOCS"))
        try await createSnippet(SnippetUpload(title: "Three", newFolder: "Caf\u{E9}"))
        try await createSnippet(SnippetUpload(title: "Four", newFolder: "cafe\u{301}"))
        try await expectStatus(.unprocessableEntity, createFolder("CAFE\u{301}"))
        try withContext { context in
            XCTAssertEqual(try context.fetch(FetchDescriptor<Folder>()).map(\.name).sorted(), ["Caf\u{E9}", "Docs"])
            let snippets = try context.fetch(FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.title)]))
            XCTAssertEqual(snippets.map { $0.folder?.name }, ["Caf\u{E9}", "Docs", "Caf\u{E9}", "Docs"])
        }
    }

    func testDeletingANonEmptyFolderAsksAndCanKeepTheSnippets() async throws {
        try await createSnippet(SnippetUpload(title: "Kept", newFolder: "Old"))
        let id = try folderID("Old")
        let confirm = try await page("/folders/\(id)/delete")
        XCTAssertTrue(confirm.contains("It holds 1 snippet"))
        XCTAssertTrue(confirm.contains("moved to Unfiled"))
        try await send(.POST, "/folders/\(id)/delete", beforeRequest: { req async throws in try req.content.encode(["snippets": "move"], as: .urlEncodedForm) }) { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        }
        try withContext { context in
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<Folder>()), 0)
            let snippet = try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>()).first)
            XCTAssertNil(snippet.folder)
        }
        try await expectPage("/snippets?folder=unfiled", shows: "Kept")
    }

    func testDeletingAFolderWithItsSnippetsPutsThemInTheTrash() async throws {
        try await createSnippet(SnippetUpload(title: "Gone 1", newFolder: "Old"))
        try await createSnippet(SnippetUpload(title: "Gone 2", newFolder: "Old"))
        try await createSnippet(SnippetUpload(title: "Elsewhere"))
        let id = try folderID("Old")
        try await send(.POST, "/folders/\(id)/delete", beforeRequest: { req async throws in
            try req.content.encode(["snippets": "delete"], as: .urlEncodedForm)
        }, afterResponse: { response async throws in
            XCTAssertEqual(response.status, .seeOther)
        })
        XCTAssertEqual(try withContext { try $0.fetch(FetchDescriptor<Snippet>(predicate: Snippet.inLibrary)).map(\.title) }, ["Elsewhere"])
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Folder>()) }, 0)
        try await expectPage("/trash", shows: "Gone 1")
        try await expectPage("/trash", shows: "Gone 2")
        try await expectPage("/snippets", hides: "Gone 1")
    }
}

final class TagRoutesTests: AppTestCase {
    private func post(_ path: String, _ fields: [String: String]) async throws -> HTTPStatus {
        var status = HTTPStatus.ok
        try await send(.POST, path, beforeRequest: { req async throws in try req.content.encode(fields, as: .urlEncodedForm) }) { response async throws in status = response.status }
        return status
    }

    private func tagID(_ name: String) throws -> String {
        try withContext { context in try XCTUnwrap(Lookup.tag(named: name, in: context)).uuid.uuidString }
    }

    func testCreateRecolourRenameAndRefuseDuplicatesInAnyCase() async throws {
        try await expectStatus(.seeOther, post("/tags", ["name": "Swift", "color": "#ff0000"]))
        let duplicate = try await post("/tags", ["name": "SWIFT", "color": "#00ff00"])
        XCTAssertEqual(duplicate, .unprocessableEntity)
        try await expectStatus(.unprocessableEntity, post("/tags", ["name": "x", "color": "red"]))
        XCTAssertEqual(try withContext { try $0.fetchCount(FetchDescriptor<Tag>()) }, 1)

        let id = try tagID("swift")
        try await expectStatus(.seeOther, post("/tags/\(id)", ["name": "swift-lang", "color": "#00ff00"]))
        try withContext { context in
            let tag = try XCTUnwrap(context.fetch(FetchDescriptor<Tag>()).first)
            XCTAssertEqual(tag.name, "swift-lang")
            XCTAssertEqual(tag.color.hex, "#00ff00")
        }
    }

    func testATagNamedInTheSnippetFormInAnotherCaseIsTheSameTag() async throws {
        try await expectStatus(.seeOther, post("/tags", ["name": "Swift", "color": "#ff0000"]))
        try await createSnippet(SnippetUpload(title: "Uses it", newTags: "swift, SWIFT"))
        try withContext { context in
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<Tag>()), 1)
            XCTAssertEqual(try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>()).first).tags.map(\.name), ["Swift"])
        }
    }

    /// A name typed with a combining accent is the tag typed with a precomposed one: the store
    /// compares bytes, and made two tags "Résumé" (on the tags page and in the snippet form).
    func testATagNameInAnotherUnicodeFormIsTheSameTag() async throws {
        try await expectStatus(.seeOther, post("/tags", ["name": "R\u{E9}sum\u{E9}", "color": "#ff0000"]))
        try await expectStatus(.unprocessableEntity, post("/tags", ["name": "Re\u{301}sume\u{301}", "color": "#00ff00"]))
        try await createSnippet(SnippetUpload(title: "Uses it", newTags: "re\u{301}sume\u{301}"))
        try withContext { context in
            XCTAssertEqual(try context.fetch(FetchDescriptor<Tag>()).map(\.name), ["R\u{E9}sum\u{E9}"])
            XCTAssertEqual(try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>()).first).tags.map(\.name), ["R\u{E9}sum\u{E9}"])
        }
    }

    func testDeletingATagKeepsItsSnippets() async throws {
        try await createSnippet(SnippetUpload(title: "Tagged", newTags: "temp"))
        let id = try tagID("temp")
        try await expectPage("/tags/\(id)/delete", shows: "1 snippet loses this tag")
        try await expectStatus(.seeOther, post("/tags/\(id)/delete", [:]))
        try withContext { context in
            XCTAssertEqual(try context.fetchCount(FetchDescriptor<Tag>()), 0)
            XCTAssertEqual(try XCTUnwrap(context.fetch(FetchDescriptor<Snippet>()).first).tags.count, 0)
        }
    }

    func testMergingOneTagIntoAnother() async throws {
        try await createSnippet(SnippetUpload(title: "Alpha snippet", newTags: "js"))
        try await createSnippet(SnippetUpload(title: "Beta snippet", newTags: "javascript, js"))
        let from = try tagID("js"), into = try tagID("javascript")
        try await expectStatus(.seeOther, post("/tags/\(from)/merge", ["into": into]))
        try withContext { context in
            XCTAssertEqual(try context.fetch(FetchDescriptor<Tag>()).map(\.name), ["javascript"])
            let snippets = try context.fetch(FetchDescriptor<Snippet>(sortBy: [SortDescriptor(\.title)]))
            XCTAssertEqual(snippets.map { $0.tags.map(\.name) }, [["javascript"], ["javascript"]])
        }
        let tagged = try await page("/snippets?tag=\(into)")
        XCTAssertTrue(tagged.contains("Alpha snippet") && tagged.contains("Beta snippet"))
    }
}

/// Names and titles are the user's text, in any script: each is isolated (`<bdi>`) from the text
/// around it, so that a name written right to left keeps its count after it, and a direction
/// override inside one (U+202E) cannot reorder the page's own words.
final class IsolatedNamesTests: AppTestCase {
    func testEveryNameAndTitleIsIsolatedFromTheTextAroundIt() async throws {
        let title = "Notes \u{202E}txt.exe", folder = "\u{05E2}\u{05D1}\u{05D5}\u{05D3}\u{05D4}", tag = "x\u{202E}yz"
        let id = try await createSnippet(SnippetUpload(title: title, newFolder: folder, newTags: tag))
        let (folderID, tagID) = try withContext { context in
            (try XCTUnwrap(context.fetch(FetchDescriptor<Folder>()).first).uuid.uuidString,
             try XCTUnwrap(context.fetch(FetchDescriptor<Tag>()).first).uuid.uuidString)
        }
        let expected: [(path: String, fragments: [String])] = [
            ("/snippets/\(id)", [
                "<bdi>\(folder)</bdi> <span class=\"count\">1</span>", "<bdi>\(tag)</bdi> <span class=\"count\">1</span>",
                "<h1><bdi>\(title)</bdi></h1>", "><bdi>\(folder)</bdi></a>", "><bdi>\(tag)</bdi></a>",
                "<span class=\"row-title\"><bdi>\(title)</bdi></span>", "><bdi>\(tag)</bdi></span>",
                "<span class=\"row-meta\">Swift · \u{2068}\(folder)\u{2069} · ",
            ]),
            ("/folders", ["><bdi>\(folder)</bdi></a>"]),
            ("/tags", ["><bdi>\(tag)</bdi></a>"]),
            ("/folders/\(folderID)/delete", ["“<bdi>\(folder)</bdi>”?"]),
            ("/tags/\(tagID)/delete", ["“<bdi>\(tag)</bdi>”?"]),
            ("/snippets/\(id)/delete", ["“<bdi>\(title)</bdi>”?"]),
            ("/snippets/\(id)/edit", ["</span><bdi>\(tag)</bdi></label>", "<title>Edit “\u{2068}\(title)\u{2069}” · "]),
            ("/snippets/select", ["<span class=\"row-title\"><bdi>\(title)</bdi></span>"]),
            // Names inside a sentence the page shows as one string: headings, page titles, messages.
            ("/snippets?tag=\(tagID)", ["Tagged “\u{2068}\(tag)\u{2069}”"]),
            ("/snippets?folder=\(folderID)", ["<title>\u{2068}\(folder)\u{2069} · "]),
            ("/snippets/\(id)?folder=\(folderID)", ["<title>\u{2068}\(title)\u{2069} · "]),
            ("/snippets?q=Notes+%E2%80%AEtxt", ["for “\u{2068}Notes \u{202E}txt\u{2069}”"]),
            ("/folders/\(folderID)/delete", ["<title>Delete folder “\u{2068}\(folder)\u{2069}”? · "]),
            ("/tags/\(tagID)/delete", ["<title>Delete tag “\u{2068}\(tag)\u{2069}”? · "]),
            ("/snippets/\(id)/delete", ["<title>Delete “\u{2068}\(title)\u{2069}”? · "]),
        ]
        for (path, fragments) in expected {
            let body = try await page(path)
            for fragment in fragments {
                XCTAssertTrue(body.contains(fragment), "\(path) lacks \(fragment)")
            }
        }
        try await send(.POST, "/snippets/\(id)/move", beforeRequest: { req async throws in
            try req.content.encode(["folder": folderID], as: .urlEncodedForm)
        }, afterResponse: { response async throws in XCTAssertEqual(response.status, .seeOther) })
        try await expectPage("/snippets/\(id)", shows: "Moved to “\u{2068}\(folder)\u{2069}”.")
        try await send(.POST, "/snippets/\(id)/move", beforeRequest: { req async throws in
            try req.content.encode(["folder": ""], as: .urlEncodedForm)
        }, afterResponse: { response async throws in XCTAssertEqual(response.status, .seeOther) })
        try await expectPage("/snippets/\(id)", shows: "Moved to Unfiled.")
        try await send(.POST, "/snippets/\(id)/delete") { response async throws in XCTAssertEqual(response.status, .seeOther) }
        try await expectPage("/trash", shows: "Moved “\u{2068}\(title)\u{2069}” to the trash.")
        try await expectPage("/trash", shows: "<td><bdi>\(title)</bdi></td>")
        try await expectPage("/trash/\(id)/delete", shows: "<h1>Delete “\u{2068}\(title)\u{2069}” for good?</h1>")
        try await send(.POST, "/tags/\(tagID)/delete") { response async throws in XCTAssertEqual(response.status, .seeOther) }
        try await expectPage("/tags", shows: "Deleted the tag “\u{2068}\(tag)\u{2069}”; its snippets stay.")
    }
}

final class MarkdownAndImageTests: XCTestCase {
    func testMarkdownIsRenderedAndSanitized() {
        let renderer = MarkdownRenderer()
        XCTAssertEqual(renderer.render("Hello **world**"), "<p>Hello <strong>world</strong></p>")
        let hostile = renderer.render("<script>alert(1)</script>\n\n[x](javascript:alert(1)) [y](https://example.com)\n\n<img src=x onerror=alert(1)>")
        XCTAssertFalse(hostile.contains("<script"))
        XCTAssertFalse(hostile.contains("javascript:"))
        XCTAssertFalse(hostile.contains("<img src=x onerror"))
        XCTAssertTrue(hostile.contains("href=\"https://example.com\""))
        XCTAssertEqual(renderer.render("   "), "")
    }

    /// Raw HTML in a note left an element open, which then spread over the page after the notes:
    /// the screenshot became a link to the other site, or sat in the note's table.
    func testEveryElementANoteOpensIsClosedWithinIt() {
        let sanitizer = HTMLSanitizer()
        XCTAssertEqual(sanitizer.sanitize(#"<p>See <a href="https://example.com/">this</p>"#),
                       #"<p>See <a href="https://example.com/" rel="nofollow noopener noreferrer">this</a></p>"#)
        XCTAssertEqual(sanitizer.sanitize("<p>cell <table><tr><td>x</p>"), "<p>cell <table><tr><td>x</td></tr></table></p>")
        XCTAssertEqual(sanitizer.sanitize("<p>a</em> b<br> c</p></strong>"), "<p>a b<br> c</p>", "a closing tag that closes nothing is dropped")
        XCTAssertEqual(sanitizer.sanitize("<ul><li>one<li>two</ul>"), "<ul><li>one<li>two</li></li></ul>")
        // Many stray closing tags after many open ones are dropped one by one, not searched for.
        let stray = sanitizer.sanitize(String(repeating: "<em>", count: 20_000) + String(repeating: "</strong>", count: 20_000))
        XCTAssertEqual(stray, String(repeating: "<em>", count: 20_000) + String(repeating: "</em>", count: 20_000))
        let rendered = MarkdownRenderer().render(#"See <a href="https://example.com/">this"#)
        XCTAssertTrue(rendered.hasSuffix("</a></p>"), rendered)
    }

    func testImagesAreRecognisedByTheirBytes() {
        XCTAssertEqual(ImageKind(sniffing: tinyPNG), .png)
        XCTAssertEqual(ImageKind(sniffing: Data([0xFF, 0xD8, 0xFF, 0xE0])), .jpeg)
        XCTAssertEqual(ImageKind(sniffing: Data("GIF89a....".utf8)), .gif)
        XCTAssertEqual(ImageKind(sniffing: Data("RIFF\u{0}\u{0}\u{0}\u{0}WEBPVP8 ".utf8)), .webp)
        XCTAssertNil(ImageKind(sniffing: Data("<svg xmlns=…>".utf8)))
        XCTAssertNil(ImageKind(sniffing: Data()))
    }

    func testColorsReadAndWriteHex() throws {
        XCTAssertEqual(ColorData(hex: "#3e63dd")?.hex, "#3e63dd")
        XCTAssertNil(ColorData(hex: "blue"))
        XCTAssertNil(ColorData(hex: "+12345"), "a sign is not a digit")
        XCTAssertNil(ColorData(hex: "#+abcde"))
        XCTAssertEqual(ColorData(red: 2, green: -1, blue: .nan).hex, "#ff0000")
        for value in 0...255 {
            let hex = "#" + [value, 255 - value, value / 3].map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            XCTAssertEqual(ColorData(hex: hex)?.hex, hex)
        }
        // A colour decoded from stored JSON skips `init`'s clamping: it still writes a CSS colour.
        let decoded = try JSONDecoder().decode(ColorData.self, from: Data(#"{"red":2,"green":-0.5,"blue":0.5,"alpha":1}"#.utf8))
        XCTAssertEqual(decoded.hex, "#ff0080")
    }
}
