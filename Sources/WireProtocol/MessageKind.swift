/// What a message means; the header's kind byte.
///
/// Payload schemas belong to the remote runtime; this module only frames them. Each case notes
/// its direction and payload (see docs/WIRE-PROTOCOL.md §5 for the full table).
package enum MessageKind: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    /// Worker → coordinator: joins the cluster. Payload: name, hosted type names, capacity,
    /// protocol version and preferred codec.
    case hello = 1
    /// Coordinator → worker: answers `hello`. Payload: accepted or not, heartbeat settings.
    case welcome = 2
    /// Parent → worker: runs a child workflow. Payload: type name, props, optional snapshot.
    case start = 3
    /// Parent → worker: the child's props changed. Payload: new props.
    case update = 4
    /// Parent → worker: the child left the parent's render; tear it down. No payload required.
    case stop = 5
    /// Worker → parent: the child's rendering, tagged with the props sequence it was computed for.
    case rendering = 6
    /// Worker → parent: a batch of outputs, the cumulative ack and an optional state snapshot, as
    /// one atomic multipart message.
    case outputs = 7
    /// Parent → worker: an event sent into a sink the remote child put in its rendering.
    case event = 8
    /// Either direction: a typed error code and message, correlated to the request it answers.
    case error = 9
    /// Either direction: liveness signal when there is no other traffic.
    case heartbeat = 10
    /// Either direction: orderly leave; the receiver forgets the peer without waiting for timeouts.
    case goodbye = 11
    /// Coordinator → a peer it does not know (e.g. after a coordinator restart): say `hello` again.
    case reconnect = 12
    /// Worker → parent: the worker is leaving in order and asks for its children to be moved.
    /// Parent → worker: the answer; every `release` for the worker's children was sent before it.
    /// Sent only between peers whose `hello`/`welcome` agreed on draining. No payload.
    case drain = 13
    /// Parent → a draining worker: send the child's final flush (marked released) and stop it.
    /// No payload.
    case release = 14
    /// Either direction: several messages for one peer in one atomic multipart message (a
    /// frame-count layout, then each message's header and payload frames), so a render pass that
    /// starts or updates many children on a worker costs one send, not one per child.
    case batch = 15
    /// Either direction, between peers that agreed on remote protocol 6 or later: like `batch`,
    /// with every message's frames packed back to back in one frame after the layout (which
    /// gives each frame's length), so a render pass that starts or updates a thousand children
    /// on a worker is one message, not one per 63 frames, and its receiver reads the messages
    /// out of one buffer.
    case packedBatch = 16

    package var description: String {
        switch self {
        case .hello: "hello"
        case .welcome: "welcome"
        case .start: "start"
        case .update: "update"
        case .stop: "stop"
        case .rendering: "rendering"
        case .outputs: "outputs"
        case .event: "event"
        case .error: "error"
        case .heartbeat: "heartbeat"
        case .goodbye: "goodbye"
        case .reconnect: "reconnect"
        case .drain: "drain"
        case .release: "release"
        case .batch: "batch"
        case .packedBatch: "packed-batch"
        }
    }
}
