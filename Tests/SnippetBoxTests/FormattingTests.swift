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

    /// The byte-by-byte excerpt of ASCII text is the excerpt found by scalars and cut by Characters,
    /// and it gives way to that one as soon as it reads a byte that is not ASCII.
    func testAnASCIIExcerptIsTheExcerptByScalars() {
        // Mostly ASCII: letters, spaces, tabs and every ASCII line break, with now and then a combining
        // mark, a no-break space, a line separator or an emoji, which the byte path must leave alone.
        let ascii: [String] = ["a", "b", "x", "1", " ", " ", "\t", "\n", "\r", "\r\n", "\u{0B}", "\u{0C}", ";", "-"]
        let other: [String] = ["\u{301}", "\u{A0}", "\u{2028}", "\u{85}", "👍🏽", "ß", "é"]
        var generator = SystemRandomNumberGenerator()
        var fastPathTaken = 0
        for round in 0..<4_000 {
            let length = Int.random(in: 0...60, using: &generator) * (round % 10 == 0 ? 8 : 1)
            let text = (0..<length).map { _ in
                Int.random(in: 0..<40, using: &generator) == 0 ? other.randomElement(using: &generator)! : ascii.randomElement(using: &generator)!
            }.joined()
            for limit in [0, 1, 3, 10, 140] {
                let expected = Formatting.excerptByScalars(text, limit: limit)
                XCTAssertEqual(Formatting.excerpt(text, limit: limit), expected, "\(text.debugDescription), limit \(limit)")
                if let byBytes = Formatting.asciiExcerpt(text, limit: limit) {
                    XCTAssertEqual(byBytes, expected, "\(text.debugDescription), limit \(limit)")
                    fastPathTaken += 1
                }
            }
        }
        XCTAssertGreaterThan(fastPathTaken, 5_000, "ASCII texts are excerpted byte by byte")
        // A mark right after the cut belongs to the last Character kept: the byte path hands over.
        XCTAssertNil(Formatting.asciiExcerpt("abc\u{301}d", limit: 3))
        XCTAssertEqual(Formatting.excerpt("abc\u{301}d", limit: 3), "abc\u{301}…")
        // Trailing whitespace past the limit is trimmed, not a reason to cut.
        XCTAssertEqual(Formatting.excerpt("abc   \t", limit: 3), "abc")
        XCTAssertEqual(Formatting.excerpt("abc\n  \n", limit: 3), "abc")
        XCTAssertEqual(Formatting.excerpt("abc\nd", limit: 3), "abc…")
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
