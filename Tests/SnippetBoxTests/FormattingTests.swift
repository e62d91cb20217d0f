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

    /// The fields worked out from a date's seconds are Foundation's calendar's, from 1583 to 9999: leap
    /// days, century years, the seconds before 1970 and fractions of a second; outside those years
    /// the calendar answers.
    func testDisplayDateFieldsAreTheCalendarsFrom1583To9999() {
        func same(_ interval: TimeInterval, _ label: String) {
            let date = Date(timeIntervalSince1970: interval)
            guard let fields = Formatting.utcFields(date) else { return XCTFail("no fields for \(label)") }
            let calendar = Formatting.calendarFields(date)
            XCTAssertTrue(fields == calendar, "\(label): \(fields) against \(calendar)")
        }
        let edges: [TimeInterval] = [
            0, -0.5, -1, 0.999, 59.9, -60, 86_399.5, -86_400, -86_400.25,
            951_782_399, 951_782_400, 951_868_800, // 28 Feb, 29 Feb, 1 Mar 2000
            -2_203_977_600, -2_203_891_200, // 28 Feb and 1 Mar 1900
            -12_212_553_600, 253_402_300_799, // 1 Jan 1583, the last second of 9999
            4_107_542_400, 4_107_628_800, // 28 Feb and 1 Mar 2100
        ]
        for interval in edges { same(interval, "\(interval)") }
        for _ in 0..<5_000 {
            // Each failure names its date's seconds, to be replayed among the edges above.
            let interval = Double.random(in: -12_212_553_600..<253_402_300_800)
            same(interval, "random \(interval)")
        }
        for outside in [-12_212_553_601.0, 253_402_300_800, Date.distantPast.timeIntervalSince1970, .infinity, -.infinity, .nan] {
            XCTAssertNil(Formatting.utcFields(Date(timeIntervalSince1970: outside)), "\(outside)")
        }
        // Outside those years the calendar's fields are shown, and nothing traps.
        XCTAssertFalse(Formatting.displayDate(Date.distantPast).isEmpty)
        XCTAssertFalse(Formatting.displayDate(Date.distantFuture).isEmpty)
    }

    /// ASCII whitespace is trimmed from an excerpt's lines as Unicode's White_Space property has it.
    func testAnExcerptTrimsASCIIWhitespaceAsUnicodeDoes() {
        for value in UInt8(0)..<0x80 {
            let scalar = Unicode.Scalar(value)
            if (0x0A...0x0D).contains(value) { continue } // line breaks, which split lines
            let text = "\(scalar)x\(scalar)"
            XCTAssertEqual(Formatting.excerpt(text), scalar.properties.isWhitespace ? "x" : text, "U+\(String(value, radix: 16))")
        }
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

    func testAnExcerptBreaksLinesAtEveryNewlineAndCutsWholeCharacters() {
        XCTAssertEqual(Formatting.excerpt("a\u{2028}b\u{2029}c\u{85}d"), "a b c")
        XCTAssertEqual(Formatting.excerpt("\u{0B}\u{0C} x \u{A0}\r\r\ny"), "x y")
        XCTAssertEqual(Formatting.excerpt("caf\u{65}\u{301}s", limit: 4), "caf\u{65}\u{301}…")
        XCTAssertEqual(Formatting.excerpt("👩‍👩‍👧‍👦👍🏽x", limit: 2), "👩‍👩‍👧‍👦👍🏽…")
        XCTAssertEqual(Formatting.excerpt("exactly", limit: 7), "exactly")
        for text in ["  one\n\n two \r\n\tthree\nfour", "é\u{301}\n \nz", "\u{2003}lead\u{3000}\nend  "] {
            let byCharacters = text.split(whereSeparator: \.isNewline)
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.prefix(3).joined(separator: " ")
            XCTAssertEqual(Formatting.excerpt(text), byCharacters)
        }
    }

    func testAnIDStringIsTheUUIDStringFoundationWrites() {
        let edges = [
            UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)),
            UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)),
            UUID(uuid: (0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xF0, 0x0F, 0x10, 0x9A, 0xA9, 0x5C, 0xC5, 0x7E)),
        ]
        for id in edges + (0..<1_000).map({ _ in UUID() }) {
            XCTAssertEqual(id.idString, id.uuidString)
        }
        XCTAssertEqual(edges[2].idString, "01234567-89AB-CDEF-F00F-109AA95CC57E")
    }
}
