import Synchronization
import Testing
@testable import WorkflowRemote

/// The rules of a session capture's wait for acknowledgements (`AcknowledgementWaits`), without
/// sockets: a wait follows the events it named, not whatever is outstanding when checked.
@Suite("Acknowledgement waits")
struct AcknowledgementWaitsTests {
    @Test("a wait is due once the events it named are acknowledged, however many were sent after them, or at its deadline; none is due twice")
    func waitsFollowTheEventsTheyNamed() {
        let start = ContinuousClock.now
        let fired = Mutex<[Int]>([])
        var waits = AcknowledgementWaits()
        waits.add([(child: 1, through: 5)], deadline: start + .seconds(10)) { fired.withLock { $0.append(1) } }
        waits.add([(child: 1, through: 7), (child: 2, through: 1)], deadline: start + .seconds(20)) { fired.withLock { $0.append(2) } }
        #expect(waits.earliestDeadline == start + .seconds(10))
        // Each child's acknowledged events, as its worker answers.
        var acknowledged: [UInt64: UInt64] = [1: 4, 2: 0]
        func run(at now: ContinuousClock.Instant) {
            for body in waits.takeDue(now: now, isAcknowledged: { child, through in acknowledged[child, default: .max] >= through }) { body() }
        }

        run(at: start)
        #expect(fired.withLock { $0 }.isEmpty)
        // Child 1 acknowledged up to 6: the first wait is due, though its event 7 is still out.
        acknowledged[1] = 6
        run(at: start)
        #expect(fired.withLock { $0 } == [1])
        // All of child 1's, none of child 2's: the second still waits, until its deadline.
        acknowledged[1] = 9
        run(at: start + .seconds(19))
        #expect(fired.withLock { $0 } == [1])
        run(at: start + .seconds(20))
        #expect(fired.withLock { $0 } == [1, 2])
        run(at: start + .seconds(30))
        #expect(fired.withLock { $0 } == [1, 2] && waits.count == 0 && waits.earliestDeadline == nil)
    }

    @Test("when the loop ends every wait is handed back at once")
    func takeAllEndsEveryWait() {
        let fired = Mutex(0)
        var waits = AcknowledgementWaits()
        for child in 1...3 { waits.add([(child: UInt64(child), through: 1)], deadline: .now + .seconds(60)) { fired.withLock { $0 += 1 } } }
        for body in waits.takeAll() { body() }
        #expect(fired.withLock { $0 } == 3 && waits.count == 0)
    }
}
