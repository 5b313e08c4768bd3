/// How the gateway's rendering stream paces each client, so that a slow client or a fast tree
/// costs the coordinator a bounded amount per client.
///
/// Read from the configuration file's `gateway` section (`stream_window`, `stream_tick_ms`), the
/// environment and the coordinator's flags.
public struct GatewayStreamPacing: Sendable, Equatable {
    /// The most messages a delta client may have unacknowledged (then it is sent nothing until
    /// it acknowledges, and then one message to the latest); also how many recent frames each
    /// stream keeps for a client resuming with a delta.
    public var window: Int
    /// The shortest time between two messages to one client: renderings faster than this reach
    /// it as one message to the latest (`.zero`: every rendering the client keeps up with).
    public var tick: Duration

    /// Creates pacing; the defaults suit a page drawing at 60 frames a second.
    public init(window: Int = 16, tick: Duration = .milliseconds(16)) {
        self.window = window
        self.tick = tick
    }
}
