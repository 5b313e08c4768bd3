import Foundation
import RemoteTestSupport
import Testing
@_spi(WorkflowRuntime) import Workflow
import WorkflowRemote
import WorkflowClusterTesting

/// Each event is applied once through a tree of three processes when the *middle* fails over,
/// while the root keeps sending through the sinks of the leaf's first rendering (decoded before
/// the failover and never refreshed, as a screen a client still shows would).
///
/// Two kinds of event are in flight when the middle is declared dead:
/// - events the middle applied and acknowledged to the root, but whose leaf never acknowledged
///   them to the middle (the leaf was stopped first): they are in the middle's snapshot, so the
///   restored middle sends them to the leaf again;
/// - events the root sent while the middle was stopped: the root replays them when the same
///   middle process rejoins and takes the child again, before the leaf is back, so the restored
///   middle has no sink of the leaf's yet: it passes them on by the forwarding prefix their
///   tokens carry, which is the same as before the failover.
@Suite struct NestedFailoverTests {
    @Test func eventsThroughAMiddleThatFailedOverAreAppliedOnce() async throws {
        let parent = try makeParent("nested-fo", requestTimeout: .seconds(30))
        let middleEndpoint = uniqueEndpoint("nested-fo-middle")
        let middle = try WorkerProcess(name: "nested-fo-middle", connect: parent.listenEndpoint!, listen: middleEndpoint)
        let leaf = try WorkerProcess(name: "nested-fo-leaf", connect: middleEndpoint)
        defer {
            for worker in [leaf, middle] {
                worker.resume()
                worker.stop()
            }
        }
        await parent.waitForWorkers(count: 1)

        let host = WorkflowHost(workflow: NestedCountingRoot(middlePlacement: .worker("nested-fo-middle")), loop: parent)
        let screen = try await rendering(of: host, "the leaf's counter") { $0.middle.counter.count == 0 }
        let send = { (count: Int) in
            for _ in 0..<count { #expect(screen.middle.counter.onIncrement.send(1)) }
        }

        send(100)
        try await rendering(of: host, "the first 100 events at every level") { $0.rootSeen == 100 }

        // The leaf stops: the middle forwards the next events, acknowledges them to the root,
        // and keeps them for the leaf, which never acknowledges them.
        leaf.suspend()
        try await eventually("the leaf stopped") { leaf.isSuspended }
        send(100)
        try await middleAcknowledgedEverything(parent, "the middle acknowledged 200 events to the root")

        // The middle stops past its liveness window: the root declares it dead and keeps what
        // it sends meanwhile for the middle's next placement.
        middle.suspend()
        try await eventually("the middle stopped") { middle.isSuspended }
        _ = try await status(of: parent, pathSuffix: "[middle]") { if case .unavailable = $0 { true } else { false } }
        send(100)

        // The middle runs again and gets its child back, without a leaf: the root's replay
        // reaches a middle whose grandchild has not rendered (no sink of it is known there).
        middle.resume()
        _ = try await status(of: parent, pathSuffix: "[middle]") { if case .running = $0 { true } else { false } }
        try await middleAcknowledgedEverything(parent, "the middle acknowledged the replayed events")
        leaf.resume()
        let final = try await rendering(of: host, "300 events at every level") {
            $0.middle.counter.count >= 300 && $0.rootSeen >= 300
        }
        #expect(final.middle.counter.count == 300, "the leaf applied \(final.middle.counter.count) events, expected 300")
        #expect(final.middle.outputsSeen == 300)
        #expect(final.rootSeen == 300)

        await host.stop()
        await parent.shutdown()
    }

    /// The middle is SIGKILLed at a random moment of a stream of 2,000 events and its child
    /// moves to the other middle of the pool, which places the leaf's counter on its own leaf
    /// from the middle's last snapshot (the leaf's acknowledged state and the events the leaf
    /// had not acknowledged), while the root replays what the dead middle had not
    /// acknowledged. Every level ends at exactly 2,000 and no published frame is torn.
    @Test(arguments: 1...3)
    func middleKilledMidStreamLosesAndRepeatsNothing(seed: Int) async throws {
        let parent = try makeParent("nested-kill-\(seed)", requestTimeout: .seconds(30))
        var processes: [WorkerProcess] = []
        defer { for process in processes.reversed() { process.stop() } }
        for name in ["a", "b"] {
            let endpoint = uniqueEndpoint("nested-kill-\(name)")
            processes.append(try WorkerProcess(name: "nested-kill-\(name)", connect: parent.listenEndpoint!, listen: endpoint, pool: "middles"))
            processes.append(try WorkerProcess(name: "nested-kill-\(name)-leaf", connect: endpoint))
        }
        await parent.waitForWorkers(count: 2)

        let frames = FrameLog<NestedCountingRoot.Screen>()
        let host = WorkflowHost(
            workflow: NestedCountingRoot(middlePlacement: .pool("middles")), loop: parent,
            listener: HostListener(onRendering: { frames.record($0, inStep: $0.isInStep) }, onOutput: { _ in }))
        let screen = try await rendering(of: host, "the leaf's counter") { $0.middle.counter.count == 0 }
        guard case .running(let first) = try await status(of: parent, pathSuffix: "[middle]", where: { if case .running = $0 { true } else { false } })
        else { return }
        let victim = processes.first { $0.name == first }!

        let total = 2_000
        let killAt = [300, 900, 1_500][seed - 1]
        for sent in 1...total {
            while !screen.middle.counter.onIncrement.send(1) { try await Task.sleep(for: .milliseconds(1)) }
            if sent == killAt { victim.kill() }
        }
        let final = try await rendering(of: host, "2,000 events at every level") {
            $0.middle.counter.count >= total && $0.rootSeen >= total
        }
        #expect(final.middle.counter.count == total, "the leaf applied \(final.middle.counter.count) events, expected \(total)")
        #expect(final.middle.outputsSeen == total)
        #expect(final.rootSeen == total)
        let log = frames.snapshot()
        #expect(log.tornCount == 0, "\(log.tornCount) of \(log.count) frames out of step, e.g. \(log.torn)")
        let other = first == "nested-kill-a" ? "nested-kill-b" : "nested-kill-a"
        #expect(parent.statuses.first { $0.key.hasSuffix("[middle]") }?.value == .running(worker: other), "the child moved to the other middle")

        await host.stop()
        await parent.shutdown()
    }

    /// Waits until the root has no event for the middle that the middle has not acknowledged.
    private func middleAcknowledgedEverything(_ parent: RemoteRuntime, _ what: String) async throws {
        try await withSafetyTimeout(what) {
            while await parent.inspect().children.first(where: { $0.path.hasSuffix("[middle]") })?.eventsOutstanding != 0 {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
    }
}
