import Foundation
import LeafKit
@testable import SnippetBox
import XCTest

/// The view models that hand Leaf their `LeafData` directly must describe the same keys and values as
/// their `Encodable` conformance, which every other page and the JSON of a test would see.
final class LeafRenderingTests: XCTestCase {
    func testDirectLeafDataMatchesTheEncodableForm() throws {
        let chip = TagChip(id: "t1", name: "swift", color: "#ff0000", textColor: "#ffffff")
        let row = SnippetRow(
            id: "r1", title: "Fetch rows", titleHTML: "<mark>Fetch</mark> rows",
            matchHTML: "let rows", language: "Swift", folder: "Work",
            tags: [chip], updated: "1 May 2024, 10:00", isFavorite: true, isSelected: false, excerpt: "let rows = fetch()")
        let unfiled = SnippetRow(
            id: "r2", title: "Loose", titleHTML: "Loose", matchHTML: "",
            language: "Shell", folder: nil, tags: [], updated: "2 May 2024, 11:00", isFavorite: false, isSelected: true, excerpt: "")
        try expectSameData(row)
        try expectSameData(unfiled)
        try expectSameData(chip)
        try expectSameData(Option(value: "asc", label: "Ascending", isSelected: true))
        try expectSameData(ListForm.Choice(value: "v", label: "Work", count: 1_234, isSelected: false, color: "#00ff00"))
        try expectSameData(Sidebar.FolderLink(id: "f", name: "Work", count: 7, isCurrent: true))
        try expectSameData(Sidebar.TagLink(id: "t", name: "sql", count: 0, color: "#123456", textColor: "#000000", isCurrent: false))
        XCTAssertEqual(EncodedAsText(wrappedValue: 42).leafData.string, "42")
    }

    private func expectSameData<T: Encodable & LeafDataRepresentable>(_ value: T, file: StaticString = #filePath, line: UInt = #line) throws {
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value))
        compare(json, value.leafData, path: String(describing: T.self), file: file, line: line)
    }

    private func compare(_ json: Any, _ leaf: LeafData, path: String, file: StaticString, line: UInt) {
        if let object = json as? [String: Any] {
            guard let dictionary = leaf.dictionary else { return XCTFail("\(path) is not a dictionary", file: file, line: line) }
            // Leaf holds a nil optional as a key with no value; Encodable leaves the key out.
            let present = Set(dictionary.filter { !$0.value.isNil }.keys)
            XCTAssertEqual(present, Set(object.keys), "\(path): keys", file: file, line: line)
            for (key, value) in object {
                compare(value, dictionary[key] ?? .trueNil, path: "\(path).\(key)", file: file, line: line)
            }
        } else if let array = json as? [Any] {
            guard let items = leaf.array, items.count == array.count else {
                return XCTFail("\(path): not an array of \(array.count)", file: file, line: line)
            }
            for (index, item) in array.enumerated() {
                compare(item, items[index], path: "\(path)[\(index)]", file: file, line: line)
            }
        } else if let text = json as? String {
            XCTAssertEqual(leaf.string, text, path, file: file, line: line)
        } else if let flag = json as? Bool {
            XCTAssertEqual(leaf.bool, flag, path, file: file, line: line)
        } else {
            XCTFail("\(path): unexpected \(json)", file: file, line: line)
        }
    }
}
