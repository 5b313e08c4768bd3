import Synchronization
import Testing
@testable import WorkflowRemote

/// The parent's bookkeeping of render passes waiting for remote renderings, as a value: what a
/// settle in place waits for, what a session's pending settle claims, and when each is resumed.
@Suite("Settle waits")
struct SettleWaitsTests {
    static let now = ContinuousClock.now

    /// Records what a resume was told.
    final class Resumed: Sendable {
        private let told = Mutex<[Bool]>([])
        var values: [Bool] { told.withLock { $0 } }
        var resume: @Sendable (Bool) -> Void { { value in self.told.withLock { $0.append(value) } } }
    }

    static func resumeAll(_ settle: SettleWaits.Pending?) {
        guard let settle else { return }
        for resume in settle.resumes { resume(settle.changed) }
    }

    @Test("a session's pass claims only its own tree's children; the last answer completes it, changed if an answer changed the tree")
    func claimAndComplete() {
        var waits = SettleWaits()
        let resumed = Resumed()
        waits.asked(1, tree: "/~a")
        waits.asked(2, tree: "/~a")
        waits.asked(3, tree: "/~b")
        waits.asked(4, tree: "")
        let claimed = waits.claim(tree: "/~a", deadline: Self.now + .seconds(5), resume: resumed.resume)
        #expect(claimed)
        // A settle in place waits for what no session claimed.
        #expect(waits.unclaimed == [3, 4])
        let firstAnswer = waits.answered(1)
        #expect(firstAnswer.awaited && firstAnswer.completed == nil)
        waits.changed(2)
        let (awaited, completed) = waits.answered(2)
        #expect(awaited && completed?.changed == true)
        Self.resumeAll(completed)
        #expect(resumed.values == [true])
        #expect(waits.pendingCount == 0)
        // Nothing left for a: its next pass is settled at once.
        let again = waits.claim(tree: "/~a", deadline: Self.now, resume: resumed.resume)
        let late = waits.answered(1)
        #expect(!again && !late.awaited, "an answer nobody waits for")
    }

    @Test("a child asked again while its settle is pending stays with that settle: its answer ends the wait")
    func askedAgainWhilePending() {
        var waits = SettleWaits()
        waits.asked(7, tree: "/~a")
        let claimed = waits.claim(tree: "/~a", deadline: Self.now + .seconds(5), resume: Resumed().resume)
        waits.asked(7, tree: "/~a")
        #expect(claimed && !waits.hasUnclaimed)
        let answer = waits.answered(7)
        #expect(answer.completed != nil)
    }

    @Test("a pending settle past its deadline is given up with its children; a stale deadline of an earlier claim is ignored")
    func deadlines() {
        var waits = SettleWaits()
        waits.asked(1, tree: "/~a")
        _ = waits.claim(tree: "/~a", deadline: Self.now + .seconds(1), resume: Resumed().resume)
        let first = waits.answered(1)
        #expect(first.completed != nil)
        waits.asked(2, tree: "/~a")
        waits.asked(3, tree: "/~a")
        _ = waits.claim(tree: "/~a", deadline: Self.now + .seconds(3), resume: Resumed().resume)
        let stale = waits.expired(now: Self.now + .seconds(2))
        #expect(stale.isEmpty, "the first claim's deadline is stale")
        let expired = waits.expired(now: Self.now + .seconds(3))
        #expect(expired.map(\.waiting) == [[2, 3]])
        let late = waits.answered(2)
        #expect(!late.awaited, "given up: no longer waited for")
    }

    @Test("the loop's end hands back every pending settle; a settle in place gives up on what is unclaimed")
    func endings() {
        var waits = SettleWaits()
        waits.asked(1, tree: "/~a")
        waits.asked(2, tree: "")
        _ = waits.claim(tree: "/~a", deadline: Self.now + .seconds(1), resume: Resumed().resume)
        let unclaimed = waits.takeUnclaimed()
        #expect(unclaimed == [2] && !waits.hasUnclaimed)
        let pending = waits.removeAll()
        #expect(pending.count == 1 && waits.pendingCount == 0)
    }
}
