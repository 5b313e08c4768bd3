import Foundation

/// A read-only picture of a runtime's parent role at one moment: its remote children and the
/// workers connected to it.
///
/// Taken on the loop thread (`RemoteRuntime.inspect()`), so every field belongs to the same
/// moment; an inspector or `cluster.sh status` reads it instead of scraping logs.
public struct RemoteRuntimeInspection: Sendable {
    /// One remote child as its parent knows it.
    public struct Child: Sendable {
        /// The child's node path in the parent's tree (it ends with its type and key).
        public var path: String
        /// The child's module-qualified type name.
        public var typeName: String
        /// Its placement, as resolved (`worker(worker-1)`, `pool(p)`, …).
        public var placement: String
        /// Starting, running on a worker, or unavailable and why.
        public var status: RemoteChildStatus
        /// The worker hosting it now, if any.
        public var worker: String?
        /// The props sequence last sent (START = 1, each UPDATE + 1).
        public var propsSequence: UInt64
        /// The size of the props last sent, encoded.
        public var propsBytes: Int
        /// The size of the last rendering received, encoded (`nil`: none yet).
        public var renderingBytes: Int?
        /// Events sent to it through its sinks since it was placed here.
        public var eventsSent: UInt64
        /// Of those, how many its worker acknowledged (applied).
        public var eventsAcknowledged: UInt64
        /// Events kept for replay until acknowledged (back-pressure refuses beyond the limit).
        public var eventsOutstanding: Int
        /// The last START/UPDATE → rendering round trip, in seconds.
        public var lastRoundTripSeconds: Double?
        /// The current placement's fencing token, raised by every START: the worker applies only
        /// messages of its copy's epoch, and the parent only accepts its copy's renderings. Two
        /// workers claiming one child differ here (0: never placed).
        public var epoch: UInt64 = 0
        /// When the current placement began (its START to `worker`); `nil` while unplaced.
        public var placedAt: Date?
    }

    /// One worker connected to this parent.
    public struct Worker: Sendable {
        /// Its unique name.
        public var name: String
        /// Its pool.
        public var pool: String
        /// How many children it accepts.
        public var capacity: Int
        /// How many children it hosts for this parent.
        public var load: Int
        /// The types it announced it can host.
        public var hostedTypes: [String]
        /// Seconds since anything (a heartbeat included) arrived from it.
        public var secondsSinceHeard: Double
        /// When it joined (this connection).
        public var joinedAt: Date
        /// Its process id, as it announced it (`nil` if it did not).
        public var processID: Int32?
        /// The host it runs on, as it announced it (`nil` if it did not).
        public var hostName: String?
        /// Whether it is draining: leaving in order, its children moving to other workers, nothing
        /// new placed on it.
        public var isDraining = false
    }

    /// The runtime's name (`coordinator`).
    public var name: String
    /// The remote children, by path.
    public var children: [Child]
    /// The workers, by name.
    public var workers: [Worker]
}
