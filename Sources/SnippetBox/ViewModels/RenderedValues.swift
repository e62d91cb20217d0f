import LeafKit

// Leaf turns a page's `Encodable` context into `LeafData` through its own encoder, which makes an
// encoder object and a container for every value: a tenth of rendering the list page, whose rows,
// choices and sidebar links come by the dozen. The encoder takes a shortcut for values that are
// `LeafDataRepresentable`, so those repeated types describe themselves directly, each with the same
// keys as its `Encodable` conformance (`LeafRenderingTests` checks that they stay the same).

/// A number a page shows, handed to Leaf as text. Leaf turns any value that is not already text
/// into text through a table of converters it rebuilds on every use, and that rebuilding was a
/// fifth of rendering the list page, with its hundred counts; Swift code still sees an `Int`.
@propertyWrapper
struct EncodedAsText: Encodable, Hashable, Sendable, LeafDataRepresentable {
    var wrappedValue: Int

    init(wrappedValue: Int) {
        self.wrappedValue = wrappedValue
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(wrappedValue))
    }

    var leafData: LeafData { .string(String(wrappedValue)) }
}

extension Option: LeafDataRepresentable {
    var leafData: LeafData {
        .dictionary(["value": .string(value), "label": .string(label), "isSelected": .bool(isSelected)])
    }
}

extension ListForm.Choice: LeafDataRepresentable {
    var leafData: LeafData {
        .dictionary([
            "value": .string(value), "label": .string(label), "count": .string(String(count)),
            "isSelected": .bool(isSelected), "color": .string(color),
        ])
    }
}

extension TagChip: LeafDataRepresentable {
    var leafData: LeafData {
        .dictionary([
            "id": .string(id), "name": .string(name), "color": .string(color), "textColor": .string(textColor), "style": .string(style),
        ])
    }
}

extension Sidebar.FolderLink: LeafDataRepresentable {
    var leafData: LeafData {
        .dictionary(["id": .string(id), "name": .string(name), "count": .string(String(count)), "isCurrent": .bool(isCurrent)])
    }
}

extension Sidebar.TagLink: LeafDataRepresentable {
    var leafData: LeafData {
        .dictionary([
            "id": .string(id), "name": .string(name), "count": .string(String(count)), "color": .string(color),
            "textColor": .string(textColor), "isCurrent": .bool(isCurrent),
        ])
    }
}

extension SnippetRow: LeafDataRepresentable {
    var leafData: LeafData {
        .dictionary([
            "id": .string(id), "title": .string(title), "titleHTML": .string(titleHTML), "matchHTML": .string(matchHTML),
            "meta": .string(meta), "tags": .array(tags.map(\.leafData)),
            "isFavorite": .bool(isFavorite), "isSelected": .bool(isSelected), "excerpt": .string(excerpt),
            "hasTags": .bool(hasTags), "hasMatch": .bool(hasMatch), "hasExcerpt": .bool(hasExcerpt),
        ])
    }
}
