import Foundation
import Testing
import ZeroMQ

/// The poller reports readiness across several sockets and can be woken from other threads.
@Suite struct PollerTests {
    /// What the event-loop thread observed, reduced to Sendable facts.
    struct Observation: Sendable {
        var wokenByWakeup: Bool
        var socketReported: Bool
        var laterPollWasEmpty: Bool
    }

    @Test func blockedPollIsWokenFromAnotherThread() async throws {
        let context = try ZMQContext()
        let wakeup = try ZMQWakeup()
        let aboutToPoll = DispatchSemaphore(value: 0)

        let observation: Observation = try await withCheckedThrowingContinuation { continuation in
            // The "event loop" thread creates and owns its socket, as the design requires.
            let loop = Thread {
                do {
                    let socket = try makeSocket(.dealer, context)
                    try socket.bind(TestEndpoint.inproc())
                    let poller = ZMQPoller()
                    let socketToken = poller.add(socket)
                    let wakeupToken = poller.add(wakeup)
                    aboutToPoll.signal()
                    // A long timeout: only the wake-up can end this poll in a passing run.
                    let ready = try poller.poll(timeout: .seconds(120))
                    // The wake-up was drained, so an immediate re-poll finds nothing.
                    let again = try poller.poll(timeout: .zero)
                    continuation.resume(returning: Observation(
                        wokenByWakeup: ready[wakeupToken] == .readable,
                        socketReported: ready[socketToken] != nil,
                        laterPollWasEmpty: again.isEmpty
                    ))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            loop.start()
            // Wake from yet another thread once the loop is (about to be) blocked.
            Thread {
                aboutToPoll.wait()
                wakeup.wake()
            }.start()
        }

        #expect(observation.wokenByWakeup)
        #expect(!observation.socketReported)
        #expect(observation.laterPollWasEmpty)
    }

    @Test func wakeFromTaskBeforePollIsNotLost() async throws {
        let wakeup = try ZMQWakeup()
        await Task.detached { wakeup.wake(); wakeup.wake() }.value
        let poller = ZMQPoller()
        let token = poller.add(wakeup)
        let ready = try poller.poll(timeout: .seconds(120))
        #expect(ready[token] == .readable)
        #expect(try poller.poll(timeout: .zero).isEmpty, "coalesced wakes are drained together")
    }

    @Test func reportsWhichSocketIsReadable() throws {
        let context = try ZMQContext()
        let (a, peerA) = try makeConnectedPair(context)
        defer { withExtendedLifetime(peerA) {} }  // connected, silent: a must not report readable
        let (b, peerB) = try makeConnectedPair(context)

        let poller = ZMQPoller()
        let tokenA = poller.add(a)
        let tokenB = poller.add(b, events: [.readable, .writable])
        try peerB.send([[UInt8].utf8("for b")])

        let ready = try poller.poll(timeout: .seconds(10))
        #expect(ready[tokenA] == nil)
        #expect(ready[tokenB]?.contains(.readable) == true)
        #expect(try b.receiveMultipart(.dontWait) == [.utf8("for b")])

        poller.setEvents(.readable, for: tokenB)
        #expect(try poller.poll(timeout: .zero).isEmpty)
    }

    @Test func waitKeepsWhatEachRegistrationIsReadyForUntilTheNextWait() throws {
        let context = try ZMQContext()
        let (a, peerA) = try makeConnectedPair(context)
        let (b, peerB) = try makeConnectedPair(context)
        let wakeup = try ZMQWakeup()

        let poller = ZMQPoller()
        let tokenA = poller.add(a)
        let tokenB = poller.add(b)
        let tokenWakeup = poller.add(wakeup)
        try peerB.send([[UInt8].utf8("for b")])

        #expect(try poller.wait(timeout: .seconds(10)) == 1)
        #expect(poller.readyEvents(for: tokenA).isEmpty)
        #expect(poller.readyEvents(for: tokenB) == .readable)
        #expect(poller.readyEvents(for: tokenWakeup).isEmpty)
        // Still what the last wait found, until the next one.
        #expect(poller.readyEvents(for: tokenB) == .readable)

        #expect(try b.receiveMultipart(.dontWait) == [.utf8("for b")])
        wakeup.wake()
        #expect(try poller.wait(timeout: .seconds(10)) == 1)
        #expect(poller.readyEvents(for: tokenWakeup) == .readable)
        #expect(poller.readyEvents(for: tokenB).isEmpty, "b's earlier readiness is cleared")
        #expect(try poller.wait(timeout: .zero) == 0, "the wait drained the wakeup")
        #expect(poller.readyEvents(for: tokenWakeup).isEmpty)

        try peerA.send([[UInt8].utf8("for a")])
        // `wait` blocks until something is ready; only a can be.
        while poller.readyEvents(for: tokenA).isEmpty { _ = try poller.wait(timeout: .seconds(10)) }
        #expect(poller.readyEvents(for: tokenB).isEmpty)
        #expect(try a.receiveMultipart(.dontWait) == [.utf8("for a")])
        #expect(try poller.wait(timeout: .zero) == 0)
        #expect(poller.readyEvents(for: tokenA).isEmpty)
    }

    @Test func pollingAClosedSocketThrowsInsteadOfCrashing() throws {
        let context = try ZMQContext()
        let socket = try makeSocket(.pair, context)
        let poller = ZMQPoller()
        poller.add(socket)
        socket.close()
        let error = #expect(throws: ZMQError.self) { try poller.poll(timeout: .zero) }
        #expect(error?.isClosedSocket == true)
    }
}
