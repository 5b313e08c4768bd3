import WireProtocol

/// Messages for one peer held until the end of a render pass or loop iteration, then sent in as
/// few ZeroMQ messages as the frame limit allows (`batch`, docs/WIRE-PROTOCOL.md), or, to a peer
/// of protocol 6 or later, in as few `packedBatch` messages as one frame holds.
///
/// Each `zmq_send` wakes libzmq's I/O thread, which on a small machine preempts the loop: a pass
/// that updates a hundred children on a worker paid a hundred of those. A batch is one atomic
/// multipart message whose messages the receiver handles in order, exactly as if they had come
/// one by one, so nothing about ordering or exactly-once changes. A `batch` holds 63 frames (31
/// children's updates); a packed batch holds a whole pass's (`Packing`), so the worker applies
/// them in one slice and answers with one flush.
struct Outbox {
    /// How a batch is bounded and framed: `batch` (`framed`, any peer) or `packedBatch`
    /// (`packed`, a peer that agreed on `RemoteProtocol.packedBatches`).
    enum Packing: Sendable {
        /// At most `maxPayloadFrames - 1` frames (and packed values) after the layout frame.
        case framed
        /// Every message's frames in one frame, at most `maxPayloadFrames - 1` events (EVENT
        /// messages' frames and packed values: a worker ends its slice of events between the
        /// messages it reads, so a batch carries no more events than a framed one) and at most
        /// `packedBatchLimit` messages and `maxFrameBytes` bytes.
        case packed
    }

    /// The most messages one packed batch carries: as many as a worker's slice applies
    /// (`WorkerDriver.eventsPerSlice` updates), so a batch is one slice and one flush. A pass of
    /// more children sends each full batch at once while it renders the rest: the worker renders
    /// the first children while the parent renders the last, and the parent decodes the first
    /// flush while the worker renders the next. One batch of a thousand made the two take turns,
    /// and a pass took up to twice as long for fewer instructions. A worker applies a batch
    /// without reading its socket in between, so this also bounds how long it goes deaf.
    static let packedBatchLimit = 256
    /// Every held frame's bytes, back to back (header frame first for each message). The
    /// storage is kept from one flush to the next: holding and sending a message allocates
    /// nothing once it has grown.
    private var bytes: [UInt8] = []
    /// Where each held frame ends in `bytes`.
    private var frameEnds: [Int] = []
    /// Per held message: its kind, where its frames end in `frameEnds`, and where its weight
    /// ends in the running total of weights (a message weighs its frames and its packed values),
    /// and in that of the events' weights (an EVENT message's weight, 0 for any other).
    private var messages: [(kind: MessageKind, frameEnd: Int, weightEnd: Int, eventWeightEnd: Int)] = []

    var isEmpty: Bool { messages.isEmpty }

    /// Holds a message: `header` encoded straight into the buffer, then `payloads`. Throws (and
    /// holds nothing) when the message exceeds the wire limits, as `Envelope.encodeFrames` does.
    ///
    /// `packedValues`: how many values (events) its payloads pack in one frame. Each counts as a
    /// frame towards a batch's limit, so a batch carries no more events than it did with a frame
    /// per event: a worker ends its slice of input only between the messages it receives, and a
    /// batch is one message to it.
    mutating func append(_ header: EnvelopeHeader, payloads: some Collection<[UInt8]>, packedValues: Int = 0) throws(WireError) {
        let limits = WireLimits.default
        guard payloads.count <= limits.maxPayloadFrames else {
            throw .lengthTooLarge(declared: UInt64(payloads.count), limit: limits.maxPayloadFrames, context: "payload frame count")
        }
        for payload in payloads where payload.count > limits.maxFrameBytes {
            throw .lengthTooLarge(declared: UInt64(payload.count), limit: limits.maxFrameBytes, context: "payload frame")
        }
        try header.encode(appendingTo: &bytes, limits: limits)
        frameEnds.append(bytes.count)
        for payload in payloads {
            bytes.append(contentsOf: payload)
            frameEnds.append(bytes.count)
        }
        hold(kind: header.kind, weight: 1 + payloads.count + packedValues)
    }

    /// Records a message whose frames were just appended.
    private mutating func hold(kind: MessageKind, weight: Int) {
        let last = messages.last
        messages.append(
            (kind, frameEnds.count, (last?.weightEnd ?? 0) + weight, (last?.eventWeightEnd ?? 0) + (kind == .event ? weight : 0)))
    }

    /// Holds a message already encoded (header frame first).
    mutating func append(_ frames: [[UInt8]]) {
        for frame in frames {
            bytes.append(contentsOf: frame)
            frameEnds.append(bytes.count)
        }
        hold(kind: frames.first.flatMap(EnvelopeHeader.kind(ofEncoded:)) ?? .batch, weight: frames.count)
    }

    /// Forgets every held message, keeping the storage.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        frameEnds.removeAll(keepingCapacity: true)
        messages.removeAll(keepingCapacity: true)
    }

    /// Hands the held messages to `transmit`, oldest first, as the ZeroMQ messages to send:
    /// consecutive messages packed into `batch` messages of at most `maxPayloadFrames` payload
    /// frames (the layout frame included; a packed value counts as a frame, see `append`); a
    /// message alone, or one too large to share, goes as
    /// itself. With `packing: .packed`, packed batches within `Packing.packed`'s bounds instead.
    /// Stops early when `transmit` returns `false` (the peer is gone: the rest is moot).
    /// Leaves the outbox empty either way.
    mutating func send(codec: any WireCodec, packing: Packing = .framed, _ transmit: (OutgoingMessage) -> Bool) {
        defer { removeAll() }
        _ = sendBatches(codec: codec, packing: packing, keepingOpenBatch: false, transmit)
    }

    /// Whether a batch is full: the held messages weigh more than one batch carries (frames
    /// and packed values, see `append`), so the first batch `send` would make cannot take
    /// another message.
    var hasClosedBatch: Bool { hasClosedBatch(packing: .framed) }

    /// Whether the first batch `send(codec:packing:)` would make cannot take another message.
    func hasClosedBatch(packing: Packing) -> Bool {
        guard let last = messages.last else { return false }
        let room = WireLimits.default.maxPayloadFrames - 1
        switch packing {
        case .framed: return last.weightEnd > room
        case .packed:
            return last.eventWeightEnd > room || messages.count > Self.packedBatchLimit || bytes.count > WireLimits.default.maxFrameBytes
        }
    }

    /// Hands `transmit` every batch that no further message could join (`hasClosedBatch`) and
    /// keeps the rest, the open batch, for later messages to fill: held messages go out while
    /// the pass that holds them is still running, in batches as full as `send` makes them, and
    /// in the same order. When `transmit` returns `false` the outbox is left empty (the peer is
    /// gone: the rest is moot).
    mutating func sendClosedBatches(codec: any WireCodec, packing: Packing = .framed, _ transmit: (OutgoingMessage) -> Bool) {
        guard hasClosedBatch(packing: packing) else { return }
        guard let sent = sendBatches(codec: codec, packing: packing, keepingOpenBatch: true, transmit) else {
            removeAll()
            return
        }
        guard sent > 0 else { return }
        // Drop what was sent, keeping the open batch's messages (at the front, rebased).
        let sentFrames = messages[sent - 1].frameEnd
        let sentWeight = messages[sent - 1].weightEnd
        let sentEventWeight = messages[sent - 1].eventWeightEnd
        let sentBytes = frameEnds[sentFrames - 1]
        bytes.removeFirst(sentBytes)
        frameEnds.removeFirst(sentFrames)
        for index in frameEnds.indices { frameEnds[index] -= sentBytes }
        messages.removeFirst(sent)
        for index in messages.indices {
            messages[index].frameEnd -= sentFrames
            messages[index].weightEnd -= sentWeight
            messages[index].eventWeightEnd -= sentEventWeight
        }
    }

    /// Hands the held messages to `transmit` as batches, oldest first; with `keepingOpenBatch`
    /// it stops before the last batch (the one later messages could still join). Returns how
    /// many messages went out, `nil` when `transmit` returned `false`.
    private func sendBatches(
        codec: any WireCodec, packing: Packing, keepingOpenBatch: Bool, _ transmit: (OutgoingMessage) -> Bool
    ) -> Int? {
        guard !messages.isEmpty else { return 0 }
        return bytes.withUnsafeBytes { all -> Int? in
            var index = 0
            while index < messages.count {
                let firstFrame = index == 0 ? 0 : messages[index - 1].frameEnd
                var end = batchEnd(from: index, packing: packing)
                // The last batch is open: a later message may still fit.
                if keepingOpenBatch, end == messages.count || (end == index && index + 1 == messages.count) { return index }
                var kind = messages[index].kind
                var prefix: [[UInt8]] = []
                var frames = frameEnds[firstFrame..<messages[max(end, index + 1) - 1].frameEnd]
                if end - index <= 1 {
                    // Alone (or too large to share a batch): as itself.
                    end = index + 1
                    frames = frameEnds[firstFrame..<messages[index].frameEnd]
                } else if let batch = try? batchPrefix(of: index..<end, codec: codec, packing: packing) {
                    prefix = batch
                    kind = packing == .packed ? .packedBatch : .batch
                    // Packed: the messages' frames, contiguous in `bytes`, are the one frame
                    // that ends where their last one ends.
                    if packing == .packed { frames = frames.suffix(1) }
                } else {
                    // Cannot happen with a working codec; sent one by one instead.
                    end = index + 1
                    frames = frameEnds[firstFrame..<messages[index].frameEnd]
                }
                let message = OutgoingMessage(
                    kind: kind, prefix: prefix, bytes: all, firstStart: firstFrame == 0 ? 0 : frameEnds[firstFrame - 1], frameEnds: frames)
                index = end
                guard transmit(message) else { return nil }
            }
            return index
        }
    }

    /// Where the batch that starts with message `index` ends (exclusive): as many messages as
    /// `packing` lets one batch carry (`index` itself when even it is too heavy to share one).
    private func batchEnd(from index: Int, packing: Packing) -> Int {
        let limits = WireLimits.default
        let room = limits.maxPayloadFrames - 1
        let firstWeight = index == 0 ? 0 : messages[index - 1].weightEnd
        var end = index
        switch packing {
        case .framed:
            while end < messages.count, messages[end].weightEnd - firstWeight <= room { end += 1 }
        case .packed:
            let firstEventWeight = index == 0 ? 0 : messages[index - 1].eventWeightEnd
            let firstFrame = index == 0 ? 0 : messages[index - 1].frameEnd
            let firstByte = firstFrame == 0 ? 0 : frameEnds[firstFrame - 1]
            while end < messages.count, end - index < Self.packedBatchLimit, messages[end].eventWeightEnd - firstEventWeight <= room,
                frameEnds[messages[end].frameEnd - 1] - firstByte <= limits.maxFrameBytes
            {
                end += 1
            }
        }
        return end
    }

    /// A batch's header and layout frames for the messages `range`.
    private func batchPrefix(of range: Range<Int>, codec: any WireCodec, packing: Packing) throws -> [[UInt8]] {
        let counts = range.map { UInt32(messages[$0].frameEnd - ($0 == 0 ? 0 : messages[$0 - 1].frameEnd)) }
        switch packing {
        case .framed:
            return [try EnvelopeHeader(kind: .batch, codec: codec.id).encode(), try codec.encode(BatchLayout(frameCounts: counts))]
        case .packed:
            let firstFrame = range.lowerBound == 0 ? 0 : messages[range.lowerBound - 1].frameEnd
            var start = firstFrame == 0 ? 0 : frameEnds[firstFrame - 1]
            var lengths: [UInt32] = []
            lengths.reserveCapacity(messages[range.upperBound - 1].frameEnd - firstFrame)
            for end in frameEnds[firstFrame..<messages[range.upperBound - 1].frameEnd] {
                lengths.append(UInt32(end - start))
                start = end
            }
            return [
                try EnvelopeHeader(kind: .packedBatch, codec: codec.id).encode(),
                try codec.encode(PackedBatchLayout(frameCounts: counts, frameLengths: lengths)),
            ]
        }
    }

    /// Splits a received `batch` into its messages (header frame first each). `nil` when the
    /// layout is malformed: counts that do not add up to the frames present, an empty message,
    /// or a batch inside a batch.
    static func split(_ envelope: Envelope) -> [[[UInt8]]]? {
        guard let first = envelope.payloads.first,
            let layout = try? first.withUnsafeBytes({ try WireCodecs.codec(for: envelope.codec).decode(BatchLayout.self, from: $0) }),
            layout.frameCounts.allSatisfy({ $0 >= 1 }),
            layout.frameCounts.reduce(0, { $0 + Int($1) }) == envelope.payloads.count - 1
        else { return nil }
        var messages: [[[UInt8]]] = []
        messages.reserveCapacity(layout.frameCounts.count)
        var start = 1
        for count in layout.frameCounts {
            let message = Array(envelope.payloads[start..<(start + Int(count))])
            // A batch does not nest.
            if EnvelopeHeader.kind(ofEncoded: message[0])?.isBatch == true { return nil }
            messages.append(message)
            start += Int(count)
        }
        return messages
    }
}

/// One ZeroMQ message an `Outbox` sends, borrowed from its buffer (valid only during the
/// `send` call that hands it out): `prefix` frames (a batch's header and layout, none for a
/// message alone), then frames out of the outbox's bytes.
struct OutgoingMessage {
    let kind: MessageKind
    let prefix: [[UInt8]]
    let bytes: UnsafeRawBufferPointer
    /// Where the first frame out of `bytes` starts.
    let firstStart: Int
    /// Where each frame out of `bytes` ends; each starts where the one before it ends.
    let frameEnds: ArraySlice<Int>

    var frameCount: Int { prefix.count + frameEnds.count }

    /// The total size of its frames, in bytes.
    var byteCount: Int {
        prefix.reduce(0) { $0 + $1.count } + ((frameEnds.last ?? firstStart) - firstStart)
    }

    /// Calls `body` with each frame in order and whether more follow, until `body` returns
    /// `false`; returns whether every frame was handed over.
    @discardableResult
    func forEachFrame(_ body: (UnsafeRawBufferPointer, _ more: Bool) -> Bool) -> Bool {
        let total = frameCount
        var handed = 0
        for frame in prefix {
            handed += 1
            guard frame.withUnsafeBytes({ body($0, handed < total) }) else { return false }
        }
        var start = firstStart
        for end in frameEnds {
            handed += 1
            guard body(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), handed < total) else { return false }
            start = end
        }
        return true
    }

    /// A copy of its frames (for tests and diagnostics).
    var frames: [[UInt8]] {
        var frames: [[UInt8]] = []
        forEachFrame { frame, _ in
            frames.append(Array(frame))
            return true
        }
        return frames
    }
}

/// First payload of `batch`: how many frames (header included) each message in it has.
struct BatchLayout: Codable, Sendable {
    var frameCounts: [UInt32]
}

extension MessageKind {
    /// `batch` or `packedBatch`: a message that carries messages (and is never carried by one).
    var isBatch: Bool { self == .batch || self == .packedBatch }
}
