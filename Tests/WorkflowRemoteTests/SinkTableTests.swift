import Synchronization
import Testing
import WireProtocol
@testable import WorkflowRemote

/// The worker's sink table without a worker: which exported sink a token reaches.
@Suite struct SinkTableTests {
    /// Records which export each delivered event reached, and the event.
    final class Deliveries: Sendable {
        let seen = Mutex<[(String, Int)]>([])
        func handler(_ name: String) -> @Sendable (any Decoder) throws -> Void {
            { decoder in
                let value = try Int(from: decoder)
                self.seen.withLock { $0.append((name, value)) }
            }
        }
        var names: [String] { seen.withLock { $0.map(\.0) } }
    }

    let codec = BinaryWireCodec()
    /// Reused by every delivery, as the worker's loop reuses its own.
    let scratch = WireCodingScratch()

    func send(_ value: Int, to token: String, in table: SinkTable) throws -> Bool {
        let bytes = try codec.encode(value)
        return bytes.withUnsafeBytes { table.deliver(token: token, bytes: $0, codec: codec, reusing: scratch) }
    }

    @Test("a token reaches the sink its own render pass exported, not a later one in the same slot")
    func tokenReachesItsOwnPass() throws {
        let table = SinkTable()
        let deliveries = Deliveries()
        table.export(token: "n1:0@a.1", deliver: deliveries.handler("pass 1"))
        table.export(token: "n1:0@a.2", deliver: deliveries.handler("pass 2"))
        #expect(try send(5, to: "n1:0@a.1", in: table))
        #expect(try send(6, to: "n1:0@a.2", in: table))
        #expect(deliveries.names == ["pass 1", "pass 2"])
        #expect(deliveries.seen.withLock { $0.map(\.1) } == [5, 6])
    }

    @Test("beyond its capacity the table forgets the oldest exports; their tokens are refused, not re-routed")
    func oldestAreForgotten() throws {
        let table = SinkTable(capacity: 2)
        let deliveries = Deliveries()
        for pass in 1...3 { table.export(token: "n1:0@a.\(pass)", deliver: deliveries.handler("pass \(pass)")) }
        #expect(try !send(1, to: "n1:0@a.1", in: table))
        #expect(try send(1, to: "n1:0@a.2", in: table))
        #expect(try !send(1, to: "unknown@a.1", in: table))
        #expect(deliveries.names == ["pass 2"])
    }

    @Test("a token of another incarnation (replayed after a failover) reaches this host's latest sink in its slot")
    func otherIncarnationGoesToTheLatestInItsSlot() throws {
        let table = SinkTable()
        let deliveries = Deliveries()
        table.export(token: "n1:0@b.1", deliver: deliveries.handler("restored, pass 1"))
        table.export(token: "n1:0@b.2", deliver: deliveries.handler("restored, pass 2"))
        table.export(token: "n1:1@b.2", deliver: deliveries.handler("another slot"))
        #expect(try send(9, to: "n1:0@a.7", in: table), "a sink the parent decoded from the lost worker")
        #expect(try !send(9, to: "n9:0@a.7", in: table), "a slot this host never exported")
        #expect(deliveries.names == ["restored, pass 2"])
    }

    @Test("an event that does not decode as the sink's type is refused")
    func undecodableIsRefused() throws {
        let table = SinkTable()
        let deliveries = Deliveries()
        table.export(token: "n1:0@a.1", deliver: deliveries.handler("pass 1"))
        let bytes = try codec.encode("not a number")
        #expect(!bytes.withUnsafeBytes { table.deliver(token: "n1:0@a.1", bytes: $0, codec: codec, reusing: scratch) })
        #expect(deliveries.names.isEmpty)
    }
}
