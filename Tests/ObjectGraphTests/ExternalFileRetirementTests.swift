@testable import ObjectGraph
import XCTest

/// The order in which dropped external files are removed: each waits for the transactions that
/// began before its save, and only those.
final class ExternalFileRetirementTests: XCTestCase {
    private let removed = LockedValue<[String]>([])

    private func makeRetirement() -> ExternalFileRetirement {
        let removed = removed
        return ExternalFileRetirement { name in removed.withLock { $0.append(name) } }
    }

    private var removedNames: [String] { removed.withLock { $0 } }

    func testWithNoTransactionOpenAFileGoesAtOnce() {
        let retirement = makeRetirement()
        retirement.saveCommitted(dropping: ["a"])
        XCTAssertEqual(removedNames, ["a"])
        XCTAssertEqual(retirement.waitingCount, 0)
    }

    func testATransactionThatBeganLaterDoesNotHoldAFileBack() {
        let retirement = makeRetirement()
        let first = retirement.transactionBegins()
        retirement.saveCommitted(dropping: ["a"])
        let second = retirement.transactionBegins()
        retirement.saveCommitted(dropping: ["b"])
        XCTAssertEqual(removedNames, [])

        // Under overlapping transactions, files still go once the ones that could see them end.
        retirement.transactionEnded(first)
        XCTAssertEqual(removedNames, ["a"])
        let third = retirement.transactionBegins()
        retirement.transactionEnded(second)
        XCTAssertEqual(removedNames, ["a", "b"])
        retirement.transactionEnded(third)
        XCTAssertEqual(retirement.waitingCount, 0)
    }

    func testTransactionsThatBeganTogetherAllHoldTheFile() {
        let retirement = makeRetirement()
        let one = retirement.transactionBegins()
        let two = retirement.transactionBegins()
        retirement.saveCommitted(dropping: ["a", "b"])
        retirement.transactionEnded(one)
        XCTAssertEqual(removedNames, [])
        retirement.transactionEnded(two)
        XCTAssertEqual(removedNames.sorted(), ["a", "b"])
    }

    func testASaveThatDropsNothingDoesNotMoveTheClock() {
        let retirement = makeRetirement()
        let open = retirement.transactionBegins()
        retirement.saveCommitted(dropping: [])
        XCTAssertEqual(retirement.transactionBegins(), open)
    }
}
