import Testing
@testable import WorkflowRemote

/// The limiter behind the parent's warnings about peers: a few lines per window and kind, then
/// one summary with the exact count. Instants are given explicitly, so nothing waits.
@Suite struct LogRateLimiterTests {
    let start = ContinuousClock.now

    @Test func admitsABurstPerWindowThenCountsAndReportsOnce() {
        var limiter = LogRateLimiter(burst: 3, window: .seconds(5))
        let admitted = (0..<10).map { limiter.admit("malformed", at: start + .milliseconds($0)) }
        #expect(admitted == [true, true, true] + Array(repeating: false, count: 7))
        let early = limiter.endedWindows(at: start + .seconds(4))
        #expect(early.isEmpty, "the window is not over yet")

        let ended = limiter.endedWindows(at: start + .seconds(5))
        #expect(ended.map(\.key) == ["malformed"] && ended.map(\.suppressed) == [7])
        let again = limiter.endedWindows(at: start + .seconds(6))
        #expect(again.isEmpty, "each count is reported once")
        let next = limiter.admit("malformed", at: start + .seconds(6))
        #expect(next, "a new window admits again")
    }

    @Test func kindsHaveTheirOwnWindows() {
        var limiter = LogRateLimiter(burst: 1, window: .seconds(5))
        let admitted = [limiter.admit("a", at: start), limiter.admit("a", at: start), limiter.admit("b", at: start)]
        #expect(admitted == [true, false, true])
        let ended = limiter.endedWindows(at: start + .seconds(5))
        #expect(ended.map(\.key) == ["a"] && ended.map(\.suppressed) == [1])
    }

    @Test func warningsAfterTheWindowButBeforeItsReportAreCountedInIt() {
        var limiter = LogRateLimiter(burst: 1, window: .seconds(5))
        // The third is past the window, which is not reported yet: counted in its summary
        // rather than lost or logged.
        let admitted = [limiter.admit("a", at: start), limiter.admit("a", at: start + .seconds(1)), limiter.admit("a", at: start + .seconds(7))]
        #expect(admitted == [true, false, false])
        let ended = limiter.endedWindows(at: start + .seconds(7))
        #expect(ended.map(\.suppressed) == [2])
    }

    @Test func aQuietWindowEndsWithoutASummary() {
        var limiter = LogRateLimiter(burst: 2, window: .seconds(5))
        let first = limiter.admit("a", at: start)
        let ended = limiter.endedWindows(at: start + .seconds(5))
        let later = [limiter.admit("a", at: start + .seconds(5)), limiter.admit("a", at: start + .seconds(5))]
        #expect(first && ended.isEmpty && later == [true, true])
    }
}
