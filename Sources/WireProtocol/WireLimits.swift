/// Upper bounds a receiver enforces on untrusted input.
///
/// A length or count read off the wire is never trusted to allocate: it is checked against the
/// bytes actually present *and* against these limits first, so a hostile or corrupted peer cannot
/// make a process reserve gigabytes or recurse until the stack overflows. Both peers should use
/// the same limits; a sender that exceeds them finds out from its own encoder.
public struct WireLimits: Sendable, Equatable {
    /// Largest frame (header or payload) accepted, in bytes.
    public var maxFrameBytes: Int
    /// Most payload frames one message may carry.
    public var maxPayloadFrames: Int
    /// Longest node path accepted in a header, in UTF-8 bytes (the field itself allows 65 535).
    public var maxNodePathBytes: Int
    /// Most elements (or key/value entries) one container may declare.
    public var maxCollectionCount: Int
    /// Deepest nesting of containers a binary payload may have.
    public var maxDepth: Int

    /// Creates limits; the defaults suit renderings and snapshots of ordinary workflow trees.
    public init(
        maxFrameBytes: Int = 16 << 20,
        maxPayloadFrames: Int = 64,
        maxNodePathBytes: Int = 4096,
        maxCollectionCount: Int = 1 << 20,
        maxDepth: Int = 64
    ) {
        self.maxFrameBytes = maxFrameBytes
        self.maxPayloadFrames = maxPayloadFrames
        self.maxNodePathBytes = maxNodePathBytes
        self.maxCollectionCount = maxCollectionCount
        self.maxDepth = maxDepth
    }

    /// The limits used when none are given.
    public static let `default` = WireLimits()
}
