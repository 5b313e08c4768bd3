import WireProtocol

/// Several encoded values (a message's events, or a flush's outputs) in one frame, back to back,
/// their sizes listed in the message's first payload.
///
/// One frame per value cost each event a ZeroMQ frame to send, one to receive, a copy into an
/// array of its own and an allocation, on both sides; packed, a message of hundreds of events or
/// outputs has one frame for all of them (docs/WIRE-PROTOCOL.md, section 10). The values stay
/// separate: each is still decoded and applied on its own, and where a message ends changes
/// nothing the receiver applies.
struct PackedValues {
    /// The most events one EVENT message carries. A worker ends a slice between messages once
    /// it applied `WorkerDriver.eventsPerSlice` (256) events, so a slice is at most 255 + 64
    /// events: small messages keep slices short (the worker flushes their outputs while the
    /// parent applies the previous flush), and 64 events share one message's fixed cost.
    static let maxEventsPerMessage = 64
    /// The most outputs one OUTPUTS message carries; a larger flush continues in the next message.
    static let maxOutputsPerMessage = 1024

    /// The packed values' bytes.
    private(set) var bytes: [UInt8] = []
    /// Each value's size in `bytes`, in order.
    private(set) var lengths: [UInt32] = []

    var count: Int { lengths.count }
    var isEmpty: Bool { lengths.isEmpty }

    /// Appends one value's encoding.
    mutating func append(_ value: [UInt8]) {
        bytes.append(contentsOf: value)
        lengths.append(UInt32(truncatingIfNeeded: value.count))
    }

    /// Reserves room for `count` more values of `byteCount` bytes in all.
    mutating func reserveCapacity(count: Int, byteCount: Int) {
        lengths.reserveCapacity(lengths.count + count)
        bytes.reserveCapacity(bytes.count + byteCount)
    }

    /// Empties it, keeping its storage for the next values.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        lengths.removeAll(keepingCapacity: true)
    }

    /// How many of `sizes` (from the first) fit one message of at most `maxCount` values and one
    /// frame of the frame size limit; at least one, so a value too large for any frame goes alone
    /// (and its send fails with `lengthTooLarge`, as it would by itself).
    static func prefixFitting(_ sizes: some Collection<Int>, maxCount: Int, limits: WireLimits = .default) -> Int {
        var taken = 0
        var total = 0
        for size in sizes {
            guard taken < maxCount, taken == 0 || total + size <= limits.maxFrameBytes else { break }
            taken += 1
            total += size
        }
        return taken
    }

    /// Whether `lengths` describe exactly `byteCount` bytes: a frame whose sizes do not add up to
    /// it is malformed, and its message is dropped whole.
    static func lengths(_ lengths: [UInt32], match byteCount: Int) -> Bool {
        var total = 0
        for length in lengths {
            total += Int(length)
            guard total <= byteCount else { return false }
        }
        return total == byteCount
    }

    /// Calls `body` with each value of `frame` in order (`lengths` must match it, see
    /// `lengths(_:match:)`), its index and its bytes; stops when `body` returns `false`.
    static func forEach(
        in frame: [UInt8], lengths: [UInt32], _ body: (_ index: Int, _ value: UnsafeRawBufferPointer) -> Bool
    ) {
        frame.withUnsafeBytes { all in
            var start = 0
            for (index, length) in lengths.enumerated() {
                let end = start + Int(length)
                guard body(index, UnsafeRawBufferPointer(rebasing: all[start..<end])) else { return }
                start = end
            }
        }
    }
}
