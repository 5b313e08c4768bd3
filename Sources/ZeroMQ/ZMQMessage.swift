import CZeroMQ
import Foundation

/// One frame of a ZeroMQ message, owning a `zmq_msg_t`.
///
/// Receiving into a `ZMQMessage` lets a decoder read the frame's bytes in place through
/// ``withUnsafeBytes(_:)`` — libzmq already holds the bytes, so there is no reason to copy
/// them into an array just to parse them. The `zmq_msg_t` is heap-allocated (libzmq forbids
/// moving it behind its back) and is initialised and closed exactly once.
///
/// Not `Sendable`: a frame is mutable (sending it empties it), so it belongs to the thread
/// that received it — typically the event-loop thread, which decodes it in place and passes
/// on the decoded (Sendable) value. Copy out with ``bytes`` or ``data`` when the raw bytes
/// themselves must travel.
public final class ZMQMessage {
    /// The owned `zmq_msg_t`; valid from `init` until `deinit`.
    let pointer: UnsafeMutablePointer<zmq_msg_t>

    /// Creates an empty frame, e.g. to receive into or as an empty delimiter frame.
    public init() {
        pointer = .allocate(capacity: 1)
        // zmq_msg_init cannot fail (it always returns 0).
        zmq_msg_init(pointer)
    }

    /// Creates a frame holding a copy of `bytes`.
    ///
    /// Throws instead of trapping if libzmq cannot allocate the buffer (`ENOMEM`).
    public init(bytes: some ContiguousBytes) throws(ZMQError) {
        pointer = .allocate(capacity: 1)
        let result: Int32 = bytes.withUnsafeBytes { buffer in
            guard zmq_msg_init_size(pointer, buffer.count) == 0 else { return zmq_errno() }
            if buffer.count > 0, let source = buffer.baseAddress {
                zmq_msg_data(pointer).copyMemory(from: source, byteCount: buffer.count)
            }
            return 0
        }
        if result != 0 {
            pointer.deallocate()
            throw ZMQError(code: result)
        }
    }

    deinit {
        zmq_msg_close(pointer)
        pointer.deallocate()
    }

    /// Number of bytes in the frame.
    public var count: Int { zmq_msg_size(pointer) }

    /// Whether more frames of the same multipart message followed this one when it was
    /// received. The last frame of a message reports `false`.
    public var hasMore: Bool { zmq_msg_more(pointer) != 0 }

    /// Lends the frame's bytes without copying. The buffer is valid only inside `body`.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let size = zmq_msg_size(pointer)
        guard size > 0, let base = zmq_msg_data(pointer) else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: UnsafeRawPointer(base), count: size))
    }

    /// A copy of the frame's bytes, for code that needs an owned, `Sendable` value.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// A copy of the frame's bytes as `Data`.
    public var data: Data { withUnsafeBytes { Data($0) } }

    /// Connection metadata attached by libzmq to a received frame, such as
    /// `"Peer-Address"`, `"Socket-Type"`, `"Routing-Id"` or the ZAP-assigned `"User-Id"`.
    /// Returns nil when the property is not present.
    public func metadata(_ property: String) -> String? {
        guard let value = zmq_msg_gets(pointer, property) else { return nil }
        return String(cString: value)
    }
}
