/// Upper bounds a receiver enforces on untrusted input.
///
/// A length or count read off the wire is never trusted to allocate: it is checked against the
/// bytes actually present *and* against these limits first, so a hostile or corrupted peer cannot
/// make a process reserve gigabytes or recurse until the stack overflows. Both peers should use
/// the same limits; a sender that exceeds them finds out from its own encoder.
package struct WireLimits: Sendable, Equatable {
    /// Largest frame (header or payload) accepted, in bytes.
    package var maxFrameBytes: Int
    /// Most payload frames one message may carry.
    package var maxPayloadFrames: Int
    /// Longest node path accepted in a header, in UTF-8 bytes (the field itself allows 65 535).
    package var maxNodePathBytes: Int
    /// Most elements (or key/value entries) one container may declare.
    package var maxCollectionCount: Int
    /// Deepest nesting of containers a binary payload may have.
    package var maxDepth: Int

    /// Creates limits; the defaults suit renderings and snapshots of ordinary workflow trees.
    package init(
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
    package static let `default` = WireLimits()
}
