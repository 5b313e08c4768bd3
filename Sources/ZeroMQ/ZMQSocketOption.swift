import CZeroMQ

/// A typed key for a libzmq socket option, passed to ``ZMQSocket``'s `set(_:_:)` and
/// `get(_:)`.
///
/// The value type is part of the key, so `socket.set(.routerMandatory, true)` and
/// `socket.set(.linger, 0)` type-check while passing a string to an integer option does
/// not compile. Only options the runtime uses are listed; durations are in milliseconds
/// exactly as libzmq defines them (with `-1` meaning "infinite" where libzmq allows it).
public struct ZMQSocketOption<Value>: Sendable, Hashable {
    /// The `ZMQ_*` option number.
    let code: Int32
}

// MARK: - Int32 options

extension ZMQSocketOption where Value == Int32 {
    /// `ZMQ_LINGER` (ms): how long close/context-termination waits to flush pending
    /// outgoing messages. `-1` waits forever (libzmq's default), `0` discards at once.
    public static var linger: Self { Self(code: ZMQ_LINGER) }
    /// `ZMQ_SNDHWM`: max queued outgoing messages per peer before sends block or drop.
    public static var sendHighWaterMark: Self { Self(code: ZMQ_SNDHWM) }
    /// `ZMQ_RCVHWM`: max queued incoming messages per peer before backpressure applies.
    public static var receiveHighWaterMark: Self { Self(code: ZMQ_RCVHWM) }
    /// `ZMQ_RCVTIMEO` (ms): how long a blocking receive waits before reporting "nothing";
    /// `-1` (default) waits forever.
    public static var receiveTimeout: Self { Self(code: ZMQ_RCVTIMEO) }
    /// `ZMQ_SNDTIMEO` (ms): how long a blocking send waits before failing with `EAGAIN`.
    public static var sendTimeout: Self { Self(code: ZMQ_SNDTIMEO) }
    /// `ZMQ_HEARTBEAT_IVL` (ms): interval of ZMTP PINGs, so dead peers are detected even
    /// on idle connections. `0` disables heartbeats.
    public static var heartbeatInterval: Self { Self(code: ZMQ_HEARTBEAT_IVL) }
    /// `ZMQ_HEARTBEAT_TTL` (ms): how long the remote peer should wait for traffic before
    /// considering this side dead (sent inside the PING).
    public static var heartbeatTTL: Self { Self(code: ZMQ_HEARTBEAT_TTL) }
    /// `ZMQ_HEARTBEAT_TIMEOUT` (ms): how long to wait for a PONG before dropping the
    /// connection (which surfaces as a `disconnected` monitor event).
    public static var heartbeatTimeout: Self { Self(code: ZMQ_HEARTBEAT_TIMEOUT) }
    /// `ZMQ_RECONNECT_IVL` (ms): delay before a connecting socket retries a lost peer.
    public static var reconnectInterval: Self { Self(code: ZMQ_RECONNECT_IVL) }
    /// `ZMQ_HANDSHAKE_IVL` (ms): max time for the ZMTP (and CURVE) handshake.
    public static var handshakeInterval: Self { Self(code: ZMQ_HANDSHAKE_IVL) }
    /// `ZMQ_CONNECT_TIMEOUT` (ms): how long one TCP connect attempt may take before libzmq
    /// abandons it and tries again (0, the default: the kernel's own timeout, which backs off to
    /// minutes when SYNs go unanswered, e.g. across a partition).
    public static var connectTimeout: Self { Self(code: ZMQ_CONNECT_TIMEOUT) }
}

// MARK: - Int64 options

extension ZMQSocketOption where Value == Int64 {
    /// `ZMQ_MAXMSGSIZE` (bytes): peers sending a larger message are disconnected, which
    /// bounds the memory an untrusted or buggy peer can make this process allocate.
    /// `-1` (default) means no limit.
    public static var maxMessageSize: Self { Self(code: ZMQ_MAXMSGSIZE) }
}

// MARK: - Bool options

extension ZMQSocketOption where Value == Bool {
    /// `ZMQ_ROUTER_MANDATORY`: make a ROUTER fail with `EHOSTUNREACH` when the routing id
    /// is unknown, instead of silently dropping the message — the runtime needs to know
    /// when a child process is gone.
    public static var routerMandatory: Self { Self(code: ZMQ_ROUTER_MANDATORY) }
    /// `ZMQ_ROUTER_HANDOVER`: let a reconnecting peer with the same routing id take over
    /// the old connection (e.g. a restarted worker) instead of being rejected.
    public static var routerHandover: Self { Self(code: ZMQ_ROUTER_HANDOVER) }
    /// `ZMQ_PROBE_ROUTER`: send an empty message on connect so a ROUTER learns the peer's
    /// routing id before the peer says anything.
    public static var probeRouter: Self { Self(code: ZMQ_PROBE_ROUTER) }
    /// `ZMQ_IMMEDIATE`: queue messages only to completed connections, so sends fail fast
    /// (or block) rather than piling up for a peer that never arrives.
    public static var immediate: Self { Self(code: ZMQ_IMMEDIATE) }
    /// `ZMQ_CURVE_SERVER`: act as the CURVE server (requires ``curveSecretKey``).
    public static var curveServer: Self { Self(code: ZMQ_CURVE_SERVER) }
    /// `ZMQ_IPV6`: allow IPv6 addresses on tcp endpoints.
    public static var ipv6: Self { Self(code: ZMQ_IPV6) }
}

// MARK: - Binary options

extension ZMQSocketOption where Value == [UInt8] {
    /// `ZMQ_ROUTING_ID`: the identity a ROUTER peer sees for this socket (1–255 bytes, not
    /// starting with a zero byte). Set before connecting.
    public static var routingID: Self { Self(code: ZMQ_ROUTING_ID) }
    /// `ZMQ_SUBSCRIBE` (SUB only, write-only): receive messages whose first frame starts
    /// with this prefix; an empty prefix subscribes to everything.
    public static var subscribe: Self { Self(code: ZMQ_SUBSCRIBE) }
    /// `ZMQ_UNSUBSCRIBE` (SUB only, write-only): remove a prior subscription.
    public static var unsubscribe: Self { Self(code: ZMQ_UNSUBSCRIBE) }
}

// MARK: - String options

extension ZMQSocketOption where Value == String {
    /// `ZMQ_ZAP_DOMAIN`: the authentication domain passed to the ZAP handler bound at
    /// `inproc://zeromq.zap.01`; setting it makes libzmq consult that handler.
    public static var zapDomain: Self { Self(code: ZMQ_ZAP_DOMAIN) }
    /// `ZMQ_LAST_ENDPOINT` (read-only): the endpoint most recently bound, with the real
    /// port substituted for `*`. See also ``ZMQSocket/lastEndpoint``.
    public static var lastEndpoint: Self { Self(code: ZMQ_LAST_ENDPOINT) }
}

// MARK: - CURVE key options

extension ZMQSocketOption where Value == CurveKey {
    /// `ZMQ_CURVE_PUBLICKEY`: this socket's long-term public key.
    public static var curvePublicKey: Self { Self(code: ZMQ_CURVE_PUBLICKEY) }
    /// `ZMQ_CURVE_SECRETKEY`: this socket's long-term secret key.
    public static var curveSecretKey: Self { Self(code: ZMQ_CURVE_SECRETKEY) }
    /// `ZMQ_CURVE_SERVERKEY` (clients): the server public key the client expects; a
    /// mismatch makes the handshake fail, which is how clients authenticate the server.
    public static var curveServerKey: Self { Self(code: ZMQ_CURVE_SERVERKEY) }
}
