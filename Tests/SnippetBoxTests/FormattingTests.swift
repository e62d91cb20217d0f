import Foundation
@testable import SnippetBox
import XCTest

final class FormattingTests: XCTestCase {
    func testDisplayDatesAreInUTCWithAShortMonth() {
        XCTAssertEqual(Formatting.displayDate(Date(timeIntervalSince1970: 1_795_356_300)), "22 Nov 2026, 14:05")
        XCTAssertEqual(Formatting.displayDate(Date(timeIntervalSince1970: 0)), "1 Jan 1970, 00:00")
        XCTAssertEqual(Formatting.displayDate(Date(timeIntervalSince1970: 951_782_399)), "28 Feb 2000, 23:59")
        XCTAssertEqual(Formatting.isoDate(Date(timeIntervalSince1970: 1_795_356_300)), "2026-11-22T14:05:00Z")
    }

    func testAnExcerptIsTheFirstThreeNonEmptyLinesTrimmed() {
        XCTAssertEqual(Formatting.excerpt("\n  let a = 1  \n\n\tlet b = 2\r\nlet c = 3\nlet d = 4"), "let a = 1 let b = 2 let c = 3")
        XCTAssertEqual(Formatting.excerpt(""), "")
        XCTAssertEqual(Formatting.excerpt("   \n \t "), "")
        XCTAssertEqual(Formatting.excerpt("only"), "only")
        let long = String(repeating: "x", count: 200)
        XCTAssertEqual(Formatting.excerpt(long), String(repeating: "x", count: 140) + "…")
        let manyLines = (1...5_000).map { "line \($0)" }.joined(separator: "\n")
        XCTAssertEqual(Formatting.excerpt(manyLines), "line 1 line 2 line 3")
    }
}
