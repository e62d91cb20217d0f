import Foundation

/// What a stretch of code is, as far as colouring goes. The class names in the tags are the
/// contract with `Public/css/app.css`.
enum TokenKind: Int, CaseIterable, Sendable {
    case keyword, string, comment, number, type, tag, attr, property, builtin

    /// The span that opens a token of this kind, as a static string so that writing it is a copy.
    var openingTag: StaticString {
        switch self {
        case .keyword: "<span class=\"tok-keyword\">"
        case .string: "<span class=\"tok-string\">"
        case .comment: "<span class=\"tok-comment\">"
        case .number: "<span class=\"tok-number\">"
        case .type: "<span class=\"tok-type\">"
        case .tag: "<span class=\"tok-tag\">"
        case .attr: "<span class=\"tok-attr\">"
        case .property: "<span class=\"tok-property\">"
        case .builtin: "<span class=\"tok-builtin\">"
        }
    }
}
