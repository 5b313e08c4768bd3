import Workflow

/// Payload of HELLO (worker → parent): who the worker is and what it can host.
struct HelloPayload: Codable, Sendable {
    var name: String
    var pool: String
    var hostedTypes: [String]
    var capacity: Int
    /// The highest remote protocol version the worker speaks.
    var protocolVersion: Int
    /// Every version it speaks (`RemoteProtocol.negotiate`); optional, so a worker of protocol 4
    /// that predates negotiation, which sends `protocolVersion` alone, still joins.
    var protocolVersions: [Int]?
    /// Random per runtime (process): tells a worker reconnecting on a fresh socket, which may take
    /// its own place, from another live worker using the same name, which may not.
    var instance: String
    /// The worker's process id and host name, for operators (the inspector shows where each
    /// child runs). Optional: a peer may leave them out, and nothing depends on them.
    var processID: Int32?
    var hostName: String?
    /// The state version (`StablyNamedWorkflow.stateVersion`) of each hosted type this build
    /// reads and writes: the parent never starts a child here from a snapshot of a newer
    /// version. Optional and ignored by parents that predate it (any protocol version); a type
    /// missing from it, or a HELLO without it, counts as version 1.
    var stateVersions: [String: Int]? = nil
}

/// Payload of WELCOME (parent → worker).
struct WelcomePayload: Codable, Sendable {
    var parentName: String
    var heartbeatIntervalMilliseconds: Int
    /// Whether the parent understands DRAIN (a planned handover of the worker's children).
    /// Optional, so parents that predate it say nothing and a worker leaves them as before, with
    /// GOODBYE only: a DRAIN would be an unknown kind to them.
    var drains: Bool?
    /// The protocol version the parent chose from the worker's HELLO (optional: parents that
    /// predate negotiation speak only `protocolVersion`).
    var protocolVersion: Int?
    /// Whether every START's acknowledgement says the last event its snapshot includes (0: none),
    /// so that the placement's first event is exactly the next one. Optional: parents that predate
    /// it sometimes sent 0 for "not said", and a worker then takes any first event of a placement
    /// whose START says 0 (a lost first message goes unnoticed there).
    var startsCarryBase: Bool?
}

/// First payload of START (parent → worker); the second payload is the encoded props.
struct StartPayload: Codable, Sendable {
    var typeName: String
    var snapshot: TreeSnapshot?
}

/// First payload of OUTPUTS (worker → parent): one flush of a child, or a share of it.
///
/// The outputs follow in one frame, back to back (`lengths[i]` bytes each; no frame when there
/// are none), then (when `renderingSequence` is set) the rendering after exactly those outputs
/// as the last frame. A flush with more outputs than one message carries
/// (`PackedValues.maxOutputsPerMessage`, or the frame size limit) is split over consecutive
/// messages; all but the last say `continues`, and only the
/// last carries the rendering and the acknowledgement. The parent applies the whole flush as
/// one step (docs/ARCHITECTURE.md, "One flush, one step").
///
/// `causes[i]` is the sequence of the event whose action emitted output `i` (0 when no event
/// caused it) and `ordinals[i]` its position among that event's outputs, so a parent replaying
/// events after a failover drops outputs it has already seen. The header's `acknowledged` field
/// is the cumulative ack: every event up to it has been applied, and `snapshot` (when present)
/// is the child's state right after that event.
struct OutputsPayload: Codable, Sendable {
    var causes: [UInt64]
    var ordinals: [UInt32]
    /// The size of each output in the packed outputs frame, in order.
    var lengths: [UInt32]
    var snapshot: TreeSnapshot?
    /// More messages of this flush follow.
    var continues: Bool
    /// The props sequence of the rendering in the last frame; `nil` when there is none.
    var renderingSequence: UInt64?
    /// Set on the last message of the flush a worker sends in answer to RELEASE: the worker has
    /// stopped this copy of the child, and `snapshot` (when present) is its final state, after
    /// every event it was sent (docs/ARCHITECTURE.md, "Draining a worker").
    var released: Bool?
    /// Protocol 5: the W3C `traceparent` of the worker's flush span, when the flush
    /// acknowledges a traced event (the last one), so the parent's span continues that trace.
    /// Absent otherwise, and never sent to a parent of protocol 4. Encoded here, never decoded
    /// with the rest (`TraceContextFields` reads it, only where tracing is on).
    var traceparent: String? = nil

    enum CodingKeys: String, CodingKey {
        case causes, ordinals, lengths, snapshot, continues, renderingSequence, released, traceparent
    }
}

extension OutputsPayload {
    /// Every field but `traceparent` (left `nil`): a parent that does not trace never looks the
    /// key up, so a flush costs it exactly what it did in protocol 4.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        causes = try container.decode([UInt64].self, forKey: .causes)
        ordinals = try container.decode([UInt32].self, forKey: .ordinals)
        lengths = try container.decode([UInt32].self, forKey: .lengths)
        snapshot = try container.decodeIfPresent(TreeSnapshot.self, forKey: .snapshot)
        continues = try container.decode(Bool.self, forKey: .continues)
        renderingSequence = try container.decodeIfPresent(UInt64.self, forKey: .renderingSequence)
        released = try container.decodeIfPresent(Bool.self, forKey: .released)
    }

    /// What the synthesized encoding writes; `traceparent` only when set, asked without a call
    /// through the container (an untraced flush is encoded at protocol 4's cost).
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(causes, forKey: .causes)
        try container.encode(ordinals, forKey: .ordinals)
        try container.encode(lengths, forKey: .lengths)
        try container.encodeIfPresent(snapshot, forKey: .snapshot)
        try container.encode(continues, forKey: .continues)
        try container.encodeIfPresent(renderingSequence, forKey: .renderingSequence)
        try container.encodeIfPresent(released, forKey: .released)
        if let traceparent { try container.encode(traceparent, forKey: .traceparent) }
    }
}

/// First payload of EVENT (parent → worker): one or more events for one child, the encoded
/// events following back to back in one frame (`lengths[i]` bytes each).
///
/// The events of one message have consecutive sequence numbers from the header's `sequence`
/// (the first event's). A parent sends all the events a child got in one loop iteration in as
/// few messages as `PackedValues.maxEventsPerMessage` and the frame size limit allow, and
/// replays unacknowledged events the same way after a failover; where one message ends never changes what the worker applies
/// (each event is applied on its own, and its outputs are tagged with its own sequence).
struct EventsPayload: Codable, Sendable {
    /// The distinct sink tokens of the batch, each once.
    var tokens: [String]
    /// For each event, in order, the index of its token in `tokens`.
    var tokenIndexes: [UInt32]
    /// For each event, in order, its size in the packed events frame.
    var lengths: [UInt32]
    /// Protocol 5: for each event, in order, the W3C `traceparent` of the parent's send span
    /// ("" for an event nobody traced). Absent when no event of the message is traced, so an
    /// untraced EVENT is byte for byte the protocol-4 one; never sent to a worker of protocol 4.
    /// Encoded here, never decoded with the rest (`TraceContextFields` reads it, only where
    /// tracing is on).
    var traceparents: [String]? = nil

    enum CodingKeys: String, CodingKey {
        case tokens, tokenIndexes, lengths, traceparents
    }
}

extension EventsPayload {
    /// Every field but `traceparents` (left `nil`): a worker that does not trace never looks the
    /// key up, so an EVENT costs it exactly what it did in protocol 4.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tokens = try container.decode([String].self, forKey: .tokens)
        tokenIndexes = try container.decode([UInt32].self, forKey: .tokenIndexes)
        lengths = try container.decode([UInt32].self, forKey: .lengths)
    }

    /// What the synthesized encoding writes; `traceparents` only when set, asked without a call
    /// through the container (an untraced EVENT is encoded at protocol 4's cost).
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(tokens, forKey: .tokens)
        try container.encode(tokenIndexes, forKey: .tokenIndexes)
        try container.encode(lengths, forKey: .lengths)
        if let traceparents { try container.encode(traceparents, forKey: .traceparents) }
    }
}

/// The trace context fields of an EVENT's or an OUTPUTS' first payload (protocol 5), read from
/// the same bytes as `EventsPayload` or `OutputsPayload` but only by a runtime that traces: one
/// that does not pays nothing for them.
struct TraceContextFields: Decodable {
    /// `EventsPayload.traceparents`.
    var traceparents: [String]?
    /// `OutputsPayload.traceparent`.
    var traceparent: String?
}

/// Payload of ERROR (either direction).
struct ErrorPayload: Codable, Sendable {
    enum Code: String, Codable, Sendable {
        case unknownType
        case undecodableProps
        /// The child's snapshot holds a state this build cannot read (`RemoteChildError.undecodableSnapshot`).
        case undecodableSnapshot
        case malformedMessage
        case unknownChild
        case refused
        /// A HELLO under the name of another live worker (a different `instance`).
        case nameTaken
    }

    var code: Code
    var message: String
    var typeName: String?
}

/// The remote protocol versions, and how a parent and a worker agree on one.
/// 3: EVENT carries a batch of events (`EventsPayload`), and `batch` messages.
/// 4: EVENT and OUTPUTS carry their events and outputs packed in one frame (`PackedValues`).
/// 5: EVENT and OUTPUTS may carry W3C trace context (`traceparents`, `traceparent`).
package enum RemoteProtocol {
    /// The versions this build speaks. A release that introduces a version keeps the one before
    /// it for at least one release, so a cluster can be upgraded one daemon at a time.
    package static let supported: ClosedRange<Int> = 4...6

    /// The first version whose EVENT and OUTPUTS carry trace context: nothing is traced across
    /// a link negotiated below it, and its peer sees the messages it always did.
    package static let traceContext = 5

    /// The first version whose peers send each other `packedBatch` (a pass's messages for one
    /// peer in one frame): a link negotiated below it carries `batch`es of 63 frames, as before.
    package static let packedBatches = 6

    /// The highest version both sides speak: `offered` (a worker's HELLO) and `supported` (this
    /// parent's); `nil` when they share none and the worker is refused.
    package static func negotiate(offered: [Int], supported: ClosedRange<Int>) -> Int? {
        offered.filter(supported.contains).max()
    }
}
