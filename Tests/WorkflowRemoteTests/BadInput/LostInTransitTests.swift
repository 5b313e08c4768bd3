import Foundation
import RemoteTestSupport
import Testing
import WireProtocol
@testable import WorkflowRemote

/// Messages lost in transit (a connection that broke while libzmq reconnected by itself) against
/// a real worker over real sockets, a raw ROUTER standing in for its parent.
@Suite struct LostInTransitTests {
    let codec = BinaryWireCodec()

    func events(_ first: UInt64, count: Int) throws -> Envelope {
        var packed = PackedValues()
        for _ in 0..<count { packed.append([0]) }
        let header = EventsPayload(tokens: ["no-such-sink"], tokenIndexes: Array(repeating: 0, count: count), lengths: packed.lengths)
        return Envelope(
            kind: .event, correlationID: 1, sequence: first, epoch: 1, nodePath: "/counter", payloads: [try codec.encode(header), packed.bytes])
    }

    @Test("a worker sent events after a gap applies none of them: it stops the child and joins again; its OUTPUTS are numbered")
    func eventsAfterAGapMakeTheWorkerJoinAgain() async throws {
        let parent = try BadInputTests.RawParent("lost-events")
        let worker = try makeWorker("lost-events-worker", parent: parent.endpoint, registry: remoteTestRegistry)
        #expect(try parent.receive().kind == .hello)
        let firstWorkerID = parent.workerID
        try parent.send(Envelope(
            kind: .start, correlationID: 1, sequence: 1, epoch: 1, nodePath: "/counter",
            payloads: [try codec.encode(StartPayloadMirror(typeName: CounterWorkflow.workflowTypeName)), try codec.encode(CounterWorkflow())]))
        #expect(try parent.receive().kind == .rendering)
        // Events 1 and 2 arrive (their sink is unknown: applied as nothing, acknowledged).
        try parent.send(events(1, count: 2))
        let flush = try parent.receive()
        #expect(flush.kind == .outputs && flush.acknowledged == 2 && flush.sequence == 1)
        // Events 3 and 4 were lost; 5 arrives.
        try parent.send(events(5, count: 1))
        let hello = try parent.receive()
        #expect(hello.kind == .hello)
        #expect(parent.workerID != firstWorkerID, "the worker joins again on a fresh socket")
        #expect(worker.workerCounters.stopped == 1)
        await worker.shutdown()
    }
}
