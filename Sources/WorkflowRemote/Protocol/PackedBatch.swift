import WireProtocol

/// First payload of `packedBatch`: how many frames (header included) each message in it has, and
/// how long each of those frames is, in order; the second payload is the frames back to back.
struct PackedBatchLayout: Codable, Sendable {
    var frameCounts: [UInt32]
    var frameLengths: [UInt32]
}

/// A received `packedBatch` whose layout matches its frames: its messages, read in order out of
/// its one packed frame without copying them (docs/WIRE-PROTOCOL.md, `packedBatch`).
///
/// Checked whole before any message is handed out, as `Outbox.split` checks a `batch`: a layout
/// that does not add up, an empty message or a batch inside the batch drops all of it, so a
/// receiver never applies part of a malformed batch.
struct PackedBatch {
    private let layout: PackedBatchLayout
    private let packed: [UInt8]

    /// `nil` when `envelope` is not a well-formed packed batch: not two payloads, a layout that
    /// does not decode, counts or lengths that do not add up to the frames present, an empty
    /// message, or a message that is itself a batch.
    init?(_ envelope: Envelope) {
        guard envelope.payloads.count == 2,
            let layout = try? envelope.payloads[0].withUnsafeBytes({
                try WireCodecs.codec(for: envelope.codec).decode(PackedBatchLayout.self, from: $0)
            }),
            layout.frameCounts.allSatisfy({ $0 >= 1 }),
            layout.frameCounts.reduce(0, { $0 + Int($1) }) == layout.frameLengths.count,
            layout.frameLengths.reduce(0, { $0 + Int($1) }) == envelope.payloads[1].count
        else { return nil }
        self.layout = layout
        self.packed = envelope.payloads[1]
        // A batch does not nest: each message's header frame is checked before any is handled.
        let nests = packed.withUnsafeBytes { all in
            var start = 0
            var frame = 0
            for count in layout.frameCounts {
                let length = Int(layout.frameLengths[frame])
                if EnvelopeHeader.kind(ofEncoded: UnsafeRawBufferPointer(rebasing: all[start..<(start + length)]))?.isBatch == true {
                    return true
                }
                for index in frame..<(frame + Int(count)) { start += Int(layout.frameLengths[index]) }
                frame += Int(count)
            }
            return false
        }
        if nests { return nil }
    }

    /// How many messages it carries.
    var count: Int { layout.frameCounts.count }

    /// Calls `body` with each message's frames (header first), in order, borrowed for the call,
    /// until `body` returns `false`.
    func forEachMessage(_ body: ([UnsafeRawBufferPointer]) -> Bool) {
        packed.withUnsafeBytes { all in
            var frames: [UnsafeRawBufferPointer] = []
            var start = 0
            var frame = 0
            for count in layout.frameCounts {
                frames.removeAll(keepingCapacity: true)
                for index in frame..<(frame + Int(count)) {
                    let end = start + Int(layout.frameLengths[index])
                    frames.append(UnsafeRawBufferPointer(rebasing: all[start..<end]))
                    start = end
                }
                frame += Int(count)
                guard body(frames) else { return }
            }
        }
    }
}
