/// One protocol message: a header frame and zero or more payload frames, as sent in a single
/// ZeroMQ multipart message.
///
/// Multipart delivery is atomic in ZeroMQ, which is why related payloads (an `outputs` batch and
/// the snapshot taken after it) travel as frames of one envelope rather than as separate
/// messages. Any ROUTER routing-id frame belongs to the transport and is not part of this.
package struct Envelope: Sendable, Equatable {
    /// Frame 0.
    package var header: EnvelopeHeader
    /// Frames 1…n, each encoded with `header.codec` (payload schemas belong to the runtime).
    package var payloads: [[UInt8]]

    /// Creates an envelope from a header and payload frames.
    package init(header: EnvelopeHeader, payloads: [[UInt8]] = []) {
        self.header = header
        self.payloads = payloads
    }

    /// Creates an envelope from its fields.
    package init(
        kind: MessageKind,
        codec: CodecID = .default,
        correlationID: UInt64 = 0,
        sequence: UInt64 = 0,
        acknowledged: UInt64 = 0,
        epoch: UInt64 = 0,
        nodePath: String = "",
        payloads: [[UInt8]] = []
    ) {
        self.init(
            header: EnvelopeHeader(
                kind: kind, codec: codec, correlationID: correlationID, sequence: sequence,
                acknowledged: acknowledged, epoch: epoch, nodePath: nodePath),
            payloads: payloads)
    }

    /// What the message means.
    package var kind: MessageKind {
        get { header.kind }
        set { header.kind = newValue }
    }
    /// How the payload frames are encoded.
    package var codec: CodecID {
        get { header.codec }
        set { header.codec = newValue }
    }
    /// Ties a reply to its request (0 = uncorrelated).
    package var correlationID: UInt64 {
        get { header.correlationID }
        set { header.correlationID = newValue }
    }
    /// The sender's sequence number on this link.
    package var sequence: UInt64 {
        get { header.sequence }
        set { header.sequence = newValue }
    }
    /// Cumulative acknowledgement of the peer's messages (0 = none).
    package var acknowledged: UInt64 {
        get { header.acknowledged }
        set { header.acknowledged = newValue }
    }
    /// The fencing token of the addressed node's placement (0 = none).
    package var epoch: UInt64 {
        get { header.epoch }
        set { header.epoch = newValue }
    }
    /// The addressed node's path from the root.
    package var nodePath: String {
        get { header.nodePath }
        set { header.nodePath = newValue }
    }

    /// The frames to send, header first. Throws when the envelope exceeds `limits` (a peer with
    /// the same limits would reject it anyway).
    package func encodeFrames(limits: WireLimits = .default) throws(WireError) -> [[UInt8]] {
        guard payloads.count <= limits.maxPayloadFrames else {
            throw .lengthTooLarge(
                declared: UInt64(payloads.count), limit: limits.maxPayloadFrames, context: "payload frame count")
        }
        for payload in payloads where payload.count > limits.maxFrameBytes {
            throw .lengthTooLarge(
                declared: UInt64(payload.count), limit: limits.maxFrameBytes, context: "payload frame")
        }
        var frames: [[UInt8]] = []
        frames.reserveCapacity(payloads.count + 1)
        frames.append(try header.encode(limits: limits))
        frames.append(contentsOf: payloads)
        return frames
    }

    /// Decodes a message from borrowed frames, the zero-copy-friendly path: the transport hands
    /// over raw message bytes and only the payloads are copied out (after validation).
    package init(frames: [UnsafeRawBufferPointer], limits: WireLimits = .default) throws(WireError) {
        self.init(header: EnvelopeHeader(kind: .heartbeat))
        try decode(frames: frames, limits: limits)
    }

    /// Decodes a message from borrowed frames into this envelope, reusing what it holds: the
    /// payload array's storage, and its node path when the new message names the same node.
    /// For a loop that decodes message after message (its last envelope handled before the next
    /// arrives): only the payloads are allocated. Throws as `init(frames:limits:)` does, leaving
    /// no payloads.
    package mutating func decode(frames: [UnsafeRawBufferPointer], limits: WireLimits = .default) throws(WireError) {
        var payloads = self.payloads
        self.payloads = []
        payloads.removeAll(keepingCapacity: true)
        guard let first = frames.first else { throw .missingHeader }
        header = try EnvelopeHeader(decoding: first, limits: limits, reusingPath: header.nodePath)
        let payloadCount = frames.count - 1
        guard payloadCount <= limits.maxPayloadFrames else {
            throw .lengthTooLarge(
                declared: UInt64(payloadCount), limit: limits.maxPayloadFrames, context: "payload frame count")
        }
        payloads.reserveCapacity(payloadCount)
        for frame in frames.dropFirst() {
            guard frame.count <= limits.maxFrameBytes else {
                throw .lengthTooLarge(
                    declared: UInt64(frame.count), limit: limits.maxFrameBytes, context: "payload frame")
            }
            payloads.append(Array(frame))
        }
        self.payloads = payloads
    }

    /// Decodes a message from owned frames (header first).
    package init(frames: [[UInt8]], limits: WireLimits = .default) throws(WireError) {
        guard let first = frames.first else { throw .missingHeader }
        let header = try first.withUnsafeBytes { raw in
            Result { () throws(WireError) in try EnvelopeHeader(decoding: raw, limits: limits) }
        }.get()
        let payloads = Array(frames.dropFirst())
        guard payloads.count <= limits.maxPayloadFrames else {
            throw .lengthTooLarge(
                declared: UInt64(payloads.count), limit: limits.maxPayloadFrames, context: "payload frame count")
        }
        for payload in payloads where payload.count > limits.maxFrameBytes {
            throw .lengthTooLarge(
                declared: UInt64(payload.count), limit: limits.maxFrameBytes, context: "payload frame")
        }
        self.init(header: header, payloads: payloads)
    }
}
