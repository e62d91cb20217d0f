/// A number a page shows, handed to Leaf as text. Leaf turns any value that is not already text
/// into text through a table of converters it rebuilds on every use, and that rebuilding was a
/// fifth of rendering the list page, with its hundred counts; Swift code still sees an `Int`.
@propertyWrapper
struct EncodedAsText: Encodable, Sendable {
    var wrappedValue: Int

    init(wrappedValue: Int) {
        self.wrappedValue = wrappedValue
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(String(wrappedValue))
    }
}
