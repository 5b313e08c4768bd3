import WireProtocol

/// Messages for one peer held until the end of a render pass or loop iteration, then sent in as
/// few ZeroMQ messages as the frame limit allows (`batch`, docs/WIRE-PROTOCOL.md).
///
/// Each `zmq_send` wakes libzmq's I/O thread, which on a small machine preempts the loop: a pass
/// that updates a hundred children on a worker paid a hundred of those. A batch is one atomic
/// multipart message whose messages the receiver handles in order, exactly as if they had come
/// one by one, so nothing about ordering or exactly-once changes.
struct Outbox {
    /// Encoded messages (header frame first), oldest first.
    private(set) var messages: [[[UInt8]]] = []

    var isEmpty: Bool { messages.isEmpty }

    mutating func append(_ frames: [[UInt8]]) {
        messages.append(frames)
    }

    /// Takes the held messages as the frames to send: consecutive messages packed into `batch`
    /// messages of at most `maxPayloadFrames` payload frames (the layout frame included); a
    /// message alone, or one too large to share, goes as itself.
    mutating func takeSends(codec: any WireCodec) -> [(kind: MessageKind, frames: [[UInt8]])] {
        defer { messages.removeAll(keepingCapacity: true) }
        let room = WireLimits.default.maxPayloadFrames - 1
        var sends: [(kind: MessageKind, frames: [[UInt8]])] = []
        var index = 0
        while index < messages.count {
            var end = index
            var frames = 0
            while end < messages.count, frames + messages[end].count <= room {
                frames += messages[end].count
                end += 1
            }
            if end - index <= 1 {
                // Alone (or too large to share a batch): as itself.
                sends.append((Self.kind(of: messages[index]), messages[index]))
                index += 1
                continue
            }
            let layout = BatchLayout(frameCounts: messages[index..<end].map { UInt32($0.count) })
            guard let layoutFrame = try? codec.encode(layout),
                let header = try? Envelope(kind: .batch, codec: codec.id).encodeFrames().first
            else {
                for message in messages[index..<end] { sends.append((Self.kind(of: message), message)) }
                index = end
                continue
            }
            var batch: [[UInt8]] = [header, layoutFrame]
            batch.reserveCapacity(2 + frames)
            for message in messages[index..<end] { batch.append(contentsOf: message) }
            sends.append((.batch, batch))
            index = end
        }
        return sends
    }

    private static func kind(of frames: [[UInt8]]) -> MessageKind {
        frames.first.flatMap(EnvelopeHeader.kind(ofEncoded:)) ?? .batch
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
            if EnvelopeHeader.kind(ofEncoded: message[0]) == .batch { return nil }
            messages.append(message)
            start += Int(count)
        }
        return messages
    }
}

/// First payload of `batch`: how many frames (header included) each message in it has.
struct BatchLayout: Codable, Sendable {
    var frameCounts: [UInt32]
}
