import Foundation

/// One settled rendering of a cluster's root, encoded as JSON, with sinks as token strings.
///
/// This is what an outside client sees of the root without knowing its Swift types: the bytes
/// to serve (`GET /api/rendering`, a WebSocket message) and a sequence number that grows with
/// every settled rendering, so a client can tell new from seen.
public struct RootRenderingJSON: Sendable, Equatable {
    /// Counts settled renderings of this session from 1.
    public var sequence: UInt64
    /// The rendering as UTF-8 JSON (keys sorted, so equal renderings give equal bytes). A sink
    /// appears as its token string; a sink nothing can send to (a placeholder's) as `null`.
    public var json: Data

    /// Creates a value.
    public init(sequence: UInt64, json: Data) {
        self.sequence = sequence
        self.json = json
    }
}
