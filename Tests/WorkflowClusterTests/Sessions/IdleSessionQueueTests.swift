import Foundation
import Testing
@testable import WorkflowCluster

/// The idle passivation's queue and the directory's counts, as values: what a passivation round
/// looks at is what came due, never every session.
@Suite struct IdleSessionQueueTests {
    let start = ContinuousClock.now
    let a = SessionID.random()
    let b = SessionID.random()

    @Test("sessions come due in the order they became idle, once the timeout has passed since; the rest wait")
    func dueInOrder() {
        var queue = IdleSessionQueue()
        queue.becameIdle(a, since: start)
        queue.becameIdle(b, since: start + .seconds(5))
        #expect(queue.takeDue(now: start + .seconds(9), timeout: .seconds(10)).isEmpty)
        #expect(queue.takeDue(now: start + .seconds(10), timeout: .seconds(10)).map(\.id) == [a])
        #expect(queue.count == 1)
        #expect(queue.takeDue(now: start + .seconds(20), timeout: .seconds(10)).map(\.id) == [b])
        #expect(queue.count == 0)
    }

    @Test("a session idle again later is queued again; each entry keeps the moment it was queued with, so the earlier one is told stale")
    func idleAgainIsQueuedAgain() {
        var queue = IdleSessionQueue()
        queue.becameIdle(a, since: start)
        queue.becameIdle(a, since: start + .seconds(3))
        let due = queue.takeDue(now: start + .seconds(13), timeout: .seconds(10))
        #expect(due.map(\.id) == [a, a])
        #expect(due.map(\.since) == [start, start + .seconds(3)], "the directory passivates only the entry whose moment is the session's last use")
    }

    @Test("a queue taken from thousands of times keeps only what waits")
    func storageIsGivenBack() {
        var queue = IdleSessionQueue()
        for second in 0..<5_000 {
            queue.becameIdle(SessionID.random(), since: start + .seconds(second))
            _ = queue.takeDue(now: start + .seconds(second), timeout: .seconds(100))
        }
        #expect(queue.count == 100)
    }

    @Test("counts follow each session's changes: created, passivated, reactivated, removed")
    func countsFollowChanges() {
        var counts = SessionCounts()
        counts.changed(from: nil, to: true)
        counts.changed(from: nil, to: true)
        counts.changed(from: true, to: false)
        #expect((counts.active, counts.passivated) == (1, 1))
        counts.changed(from: false, to: true)
        counts.changed(from: true, to: nil)
        #expect((counts.active, counts.passivated) == (1, 0))
    }
}
