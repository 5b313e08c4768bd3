import Foundation

/// A joined worker's connection, as the parent driver knows it: its routing id and name (for the
/// sends and the log), its capacity, where it runs, and the messages held for it. What the
/// protocol knows of it (its pool, hosted types and state versions, liveness, children,
/// handovers) is recorded once, in the parent state machine (`ParentStateMachine.Worker`).
final class WorkerPeer {
    /// The longest worker or pool name a HELLO may carry, in UTF-8 bytes. Names go into log
    /// lines and placement decisions, so a peer cannot make them as long as a message; a real
    /// worker's routing id, which holds its name, is limited to 255 bytes by ZeroMQ anyway.
    static let maxNameBytes = 255

    let id: WorkerID
    /// The HELLO's name, the same `let` as the machine's `ParentStateMachine.Worker.name` (both
    /// set once at the join from the same HELLO, neither ever changed, so they cannot differ).
    /// A copy for the log and the I/O, not a second record: the driver names the worker where it
    /// holds the peer, not the machine's record, several times per message (trace spans, a
    /// flush's `workerName`, send errors), where looking the record up in the machine's
    /// dictionary would cost a hash per use on the hot path; and in the list of workers shared
    /// with the runtime (`RuntimeSharedState.setWorkers`). No protocol rule reads it.
    let name: String
    let capacity: Int
    /// Where it runs, as its HELLO says (for the inspector; `nil` when it did not say).
    let processID: Int32?
    let hostName: String?
    /// START, UPDATE, STOP and EVENT messages for it, held until the pass settles or the loop
    /// iteration ends, then sent batched (`ParentDriver.sendHeld`).
    var outbox = Outbox()
    /// Whether it is in the parent driver's `workersWithHeld` (listed once however often its outbox
    /// empties and fills again within a pass, as early batches make it).
    var isListedWithHeld = false
    /// An early batch found it gone: nothing more is sent to it until `sendHeld` removes it.
    var isUnreachable = false
    /// Whether the log said it is at capacity (`ParentDriver.refuseForCapacity`): said again only
    /// after it had room once more.
    var saidAtCapacity = false
    /// When it joined (wall clock, for the inspector).
    let joinedAt = Date()
    /// Whether the protocol version negotiated with it carries trace context
    /// (`RemoteProtocol.traceContext`): its EVENTs say their events' `traceparent` only then.
    var carriesTraceContext = false
    /// How its held messages are batched: packed when it speaks protocol 6 or later
    /// (`RemoteProtocol.packedBatches`), framed otherwise.
    var packing = Outbox.Packing.framed

    init(id: WorkerID, name: String, capacity: Int, processID: Int32? = nil, hostName: String? = nil) {
        self.id = id
        self.processID = processID
        self.hostName = hostName.map { String($0.prefix(Self.maxNameBytes)) }
        self.name = name
        self.capacity = capacity
    }
}

/// A worker's ZeroMQ routing id, as the parent's ROUTER socket reports it.
struct WorkerID: Hashable, Sendable, CustomStringConvertible {
    let bytes: [UInt8]
    var description: String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// The bytes hashed as one block: an array's own `hash(into:)` feeds the hasher one element
    /// at a time (five calls per byte of a routing id, looked up on every message from a worker).
    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
