import Foundation
import Ink

/// Renders a snippet's notes from Markdown with Ink, then passes the HTML through `HTMLSanitizer`,
/// because Markdown lets raw HTML through and a note must never run script in a visitor's browser.
struct MarkdownRenderer: Sendable {
    func render(_ markdown: String) -> String {
        guard !markdown.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return "" }
        let html = MarkdownParser().html(from: markdown)
        return HTMLSanitizer().sanitize(html)
    }
}
