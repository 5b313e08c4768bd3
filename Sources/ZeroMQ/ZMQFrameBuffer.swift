/// The frames of one received multipart message, in storage that the next receive reuses.
///
/// A loop that receives message after message (``ZMQSocket/receiveMultipart(into:_:copyingAtMost:)``)
/// would otherwise allocate an array per message and another per frame. Here every frame is
/// copied back to back into one byte array whose capacity is kept, so once it has grown to the
/// largest message seen, receiving allocates nothing. Read the frames in place with
/// ``withFrames(from:_:)`` and copy out only what must outlive the next receive.
public struct ZMQFrameBuffer {
    /// Every frame's bytes, back to back.
    @usableFromInline var bytes: [UInt8] = []
    /// Where each frame ends in `bytes`.
    @usableFromInline var ends: [Int] = []
    /// The frame views `withFrames` hands out, kept for their capacity.
    @usableFromInline var views: [UnsafeRawBufferPointer] = []

    /// An empty buffer; it grows to the largest message received into it.
    public init() {}

    /// The number of frames of the message held.
    public var count: Int { ends.count }

    /// Whether no message (or one of no frames) is held.
    public var isEmpty: Bool { ends.isEmpty }

    /// The total size of the frames from `start` on, in bytes.
    public func byteCount(from start: Int = 0) -> Int {
        guard start < ends.count else { return 0 }
        return bytes.count - (start == 0 ? 0 : ends[start - 1])
    }

    /// A copy of frame `index`.
    public func frame(_ index: Int) -> [UInt8] {
        Array(bytes[range(of: index)])
    }

    /// Calls `body` with the frames from `start` on, borrowed: valid only inside `body`.
    ///
    /// Inlinable so a loop's call is specialised for its `body`: unspecialised, the
    /// `Swift.Result` carrying the body's outcome out of `withUnsafeBytes` (which only rethrows
    /// untyped) had its metadata looked up at run time on every message (≈ 800 instructions).
    @inlinable
    public mutating func withFrames<Result, Failure: Error>(
        from start: Int = 0, _ body: ([UnsafeRawBufferPointer]) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var views = self.views
        self.views = []
        defer {
            views.removeAll(keepingCapacity: true)
            self.views = views
        }
        let outcome: Swift.Result<Result, Failure> = bytes.withUnsafeBytes { all in
            for index in start..<max(start, ends.count) {
                views.append(UnsafeRawBufferPointer(rebasing: all[range(of: index)]))
            }
            do throws(Failure) {
                return .success(try body(views))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    @usableFromInline func range(of index: Int) -> Range<Int> {
        (index == 0 ? 0 : ends[index - 1])..<ends[index]
    }

    /// Forgets the message held, keeping the storage (a transport that is not a socket, such as
    /// a test's simulated one, fills the buffer with `removeAll()` and `append(_:)`).
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    /// Appends one frame's bytes.
    public mutating func append(_ frame: UnsafeRawBufferPointer) {
        bytes.append(contentsOf: frame)
        ends.append(bytes.count)
    }

    /// Appends an empty frame (one that was received but not copied).
    mutating func appendEmpty() {
        ends.append(bytes.count)
    }
}
