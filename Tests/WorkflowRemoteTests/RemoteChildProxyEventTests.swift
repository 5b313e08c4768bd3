import Foundation
import Logging
import RemoteTestSupport
import Testing
import WireProtocol
import Workflow
@testable import WorkflowRemote

/// A remote child's proxy without an engine: the events it continues from, the acknowledgement a
/// flush applied by its node carries, and its handover to the proxy that replaces it, with its
/// back-pressure account kept in step (`ChildEventLedgerTests` checks the ledger's rules alone).
@Suite struct RemoteChildProxyEventTests {
    /// What the proxy asks of the parent role (START, UPDATE, STOP), recorded.
    final class Requests: RemoteChildRequests {
        var stops: [Bool] = []
        func propsRendered(proxy: any AnyRemoteChildProxy, changed: Bool) -> ParentStateMachine.PropsAction { .nothing }
        func start(proxy: any AnyRemoteChildProxy, props: [UInt8]) {}
        func update(proxy: any AnyRemoteChildProxy, props: [UInt8], on worker: WorkerID?) {}
        func stop(proxy: any AnyRemoteChildProxy, sendingDueEvents: Bool) { stops.append(sendingDueEvents) }
    }

    let state = TreeSnapshot(workflowType: "Counter", state: Data("{\"count\":2}".utf8))
    let pending = (1...3).map { PendingRemoteEvent(token: "t", bytes: Data([UInt8($0)])) }

    func makeProxy(
        continuing events: [PendingRemoteEvent], outstanding: OutstandingEvents, counting unacknowledged: UnacknowledgedEventCount = .init()
    ) -> RemoteChildProxy<CounterWorkflow> {
        let logger = Logger(label: "proxy-events")
        let codec = BinaryWireCodec()
        let environment = RemoteChildProxyEnvironment(
            codec: codec, importingCodec: codec, codingScratch: WireCodingScratch(), logger: logger,
            status: RemoteChildStatusReporter(shared: RuntimeSharedState(), logger: logger), unacknowledged: unacknowledged)
        return RemoteChildProxy<CounterWorkflow>(
            childID: 1, path: "/counter", forwardingPrefix: "f1", placement: .anyWorker, outstanding: outstanding,
            environment: environment, snapshot: nil, pendingEvents: events)
    }

    func flush(acknowledging sequence: UInt64, snapshot: TreeSnapshot?) -> ProxyFlush<CounterScreen, Int> {
        ProxyFlush(childID: 1, outputs: [], rendering: nil, acknowledgement: Acknowledgement(sequence: sequence, snapshot: snapshot))
    }

    @Test("events a proxy continues from are numbered anew and take their slots past the limit; an applied acknowledgement frees exactly its own")
    func acknowledgementFreesItsSlots() {
        let outstanding = OutstandingEvents(limit: 2, path: "/counter", logger: Logger(label: "proxy-events"))
        let proxy = makeProxy(continuing: pending, outstanding: outstanding)
        #expect(proxy.hasRestoredEvents)
        #expect(outstanding.current == 3, "accepted before: not refused again")
        #expect(proxy.unacknowledgedCount == 3)
        #expect(proxy.events(after: 0).map(\.sequence) == [1, 2, 3])
        #expect(proxy.record(event: "t", bytes: [4]) == 4)

        proxy.apply(flush(acknowledging: 2, snapshot: state))
        #expect(outstanding.current == 1)
        #expect(proxy.snapshotThrough == 2)
        #expect(proxy.snapshot == state)
        #expect(proxy.pendingEvents == [pending[2], PendingRemoteEvent(token: "t", bytes: Data([4]))])

        // An older acknowledgement (a flush of the placement before) frees nothing more.
        proxy.apply(flush(acknowledging: 1, snapshot: nil))
        #expect(outstanding.current == 1)
        #expect(proxy.events(after: 0).map(\.sequence) == [3, 4])
        #expect(proxy.snapshot == state)
    }

    @Test("a handover gives the next proxy the last acknowledged snapshot and every event not acknowledged, and stops without sending them")
    func handOverGivesTheUnacknowledged() {
        let outstanding = OutstandingEvents(limit: 10, path: "/counter", logger: Logger(label: "proxy-events"))
        let proxy = makeProxy(continuing: pending, outstanding: outstanding)
        proxy.apply(flush(acknowledging: 1, snapshot: state))
        let requests = Requests()
        let handed = proxy.handOver(requests: requests)
        #expect(handed.snapshot == state)
        #expect(handed.events == Array(pending.dropFirst()))
        #expect(requests.stops == [false], "the events go to the next placement, not to the old worker first")
        _ = proxy.handOver(requests: requests)
        #expect(requests.stops == [false], "stopped once")
    }

    @Test("the parent's count of unacknowledged events follows each proxy's ledger: events continued and recorded add, acknowledgements and a stop take away")
    func unacknowledgedCountFollowsTheLedgers() {
        let count = UnacknowledgedEventCount()
        let outstanding = OutstandingEvents(limit: 10, path: "/counter", logger: Logger(label: "proxy-events"))
        let first = makeProxy(continuing: pending, outstanding: outstanding, counting: count)
        #expect(count.total == 3)
        _ = first.record(event: "t", bytes: [4])
        #expect(count.total == 4)
        first.apply(flush(acknowledging: 2, snapshot: state))
        #expect(count.total == 2)
        // A new placement's proxy takes the unacknowledged events over: they are counted once.
        let handed = first.handOver(requests: Requests())
        #expect(count.total == 0)
        let second = makeProxy(continuing: handed.events, outstanding: outstanding, counting: count)
        #expect(count.total == 2)
        first.apply(flush(acknowledging: 4, snapshot: state))
        #expect(count.total == 2, "a stopped proxy's late acknowledgement changes nothing")
        second.stop(requests: Requests())
        #expect(count.total == 0)
    }
}
