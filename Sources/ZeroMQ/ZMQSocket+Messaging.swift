import CZeroMQ
import Foundation

/// Sending and receiving whole multipart messages.
///
/// ZeroMQ delivers multipart messages atomically — either every frame arrives or none
/// does — so this API only deals in complete messages: a send takes all frames at once and
/// a receive returns all frames of one message. Partial-message states never leak out.
extension ZMQSocket {
    // MARK: Sending

    /// Sends `frames` as one atomic multipart message, copying each frame's bytes.
    ///
    /// Throws ``ZMQError/isAgain`` (in ``SendMode/dontWait`` mode or on `sendTimeout`)
    /// when nothing was sent, and ``ZMQError/isHostUnreachable`` from a ROUTER with
    /// `routerMandatory` whose first frame names an unknown peer. An empty `frames` array
    /// is rejected with `EINVAL`.
    ///
    /// Inlinable, so a caller's module specialises the loop for its frame type: unspecialised,
    /// walking the frames generically cost several times libzmq's own work for a small frame.
    @inlinable
    public func send<Frame: ContiguousBytes>(_ frames: [Frame], mode: SendMode = .blocking) throws(ZMQError) {
        let handle = try requireHandle()
        guard !frames.isEmpty else { throw ZMQError(code: EINVAL) }
        let last = frames.count - 1
        for index in 0...last {
            let flags = Self.sendFlags(mode: mode, more: index < last)
            let sent = frames[index].withUnsafeBytes { Self.sendRetrying(handle, $0, flags: flags) }
            guard sent else { throw ZMQError.last() }
        }
    }

    /// Sends one frame (`zmq_send`, retried on `EINTR`); `false` on another error, in `errno`.
    @usableFromInline
    static func sendRetrying(_ handle: UnsafeMutableRawPointer, _ buffer: UnsafeRawBufferPointer, flags: Int32) -> Bool {
        while zmq_send(handle, buffer.baseAddress, buffer.count, flags) < 0 {
            if zmq_errno() != EINTR { return false }
        }
        return true
    }

    /// Sends one frame of a multipart message, copying its bytes: with `more`, further frames
    /// of the same message follow (the last one is sent without it).
    ///
    /// For a sender that assembles a message from parts it already holds (a routing id, then
    /// frames out of one reused buffer) without building an array of frames first. libzmq
    /// delivers nothing of the message until its last frame is sent; a sender that stops
    /// halfway leaves the socket mid-message, so a failure of a later frame (which a
    /// non-blocking send does not see once the first frame went) must end the caller's use of
    /// the socket for that message. Errors are as for ``send(_:mode:)-([Frame],_)``.
    public func sendFrame(_ bytes: UnsafeRawBufferPointer, more: Bool, mode: SendMode = .blocking) throws(ZMQError) {
        let handle = try requireHandle()
        guard Self.sendRetrying(handle, bytes, flags: Self.sendFlags(mode: mode, more: more)) else {
            throw ZMQError.last()
        }
    }

    /// Sends `messages` as one atomic multipart message without copying their bytes:
    /// libzmq takes over each frame's buffer, leaving the ``ZMQMessage`` empty.
    ///
    /// Errors are as for the byte-copying `send(_:mode:)`; if the first frame fails, no
    /// message is emptied.
    public func send(_ messages: [ZMQMessage], mode: SendMode = .blocking) throws(ZMQError) {
        let handle = try requireHandle()
        guard !messages.isEmpty else { throw ZMQError(code: EINVAL) }
        for (index, message) in messages.enumerated() {
            let flags = Self.sendFlags(mode: mode, more: index < messages.count - 1)
            while zmq_msg_send(message.pointer, handle, flags) < 0 {
                let error = ZMQError.last()
                guard error.isInterrupted else { throw error }
            }
        }
    }

    /// Combines the mode and "more frames follow" into `zmq_send` flags.
    @usableFromInline
    static func sendFlags(mode: SendMode, more: Bool) -> Int32 {
        var flags: Int32 = more ? ZMQ_SNDMORE : 0
        if mode == .dontWait { flags |= ZMQ_DONTWAIT }
        return flags
    }

    // MARK: Receiving

    /// Receives one whole multipart message as ``ZMQMessage`` frames, whose bytes can be
    /// read in place — the zero-copy path for decoders.
    ///
    /// Returns nil when no message arrived (see ``ReceiveMode``). The frames belong to the
    /// receiving thread (they are not `Sendable`); decode them there, or copy them out
    /// with ``receiveMultipart(_:)`` / ``ZMQMessage/bytes`` to hand them elsewhere.
    public func receiveMessages(_ mode: ReceiveMode = .blocking) throws(ZMQError) -> [ZMQMessage]? {
        let handle = try requireHandle()
        guard let firstFlags = try firstReceiveFlags(handle, mode) else { return nil }
        let first = ZMQMessage()
        guard try Self.receiveFrame(into: first.pointer, from: handle, flags: firstFlags) else { return nil }
        var frames = [first]
        var more = first.hasMore
        while more {
            // Remaining frames of an atomic message are already here; waiting is never needed.
            let next = ZMQMessage()
            guard try Self.receiveFrame(into: next.pointer, from: handle, flags: 0) else {
                throw ZMQError(code: EAGAIN)
            }
            frames.append(next)
            more = next.hasMore
        }
        return frames
    }

    /// Receives one whole multipart message, copying each frame into a `[UInt8]`.
    public func receiveMultipart(_ mode: ReceiveMode = .blocking) throws(ZMQError) -> [[UInt8]]? {
        try receiveMultipart(mode, copyingAtMost: .max)
    }

    /// Receives one whole multipart message, copying only its first `maxCopied` frames into
    /// `[UInt8]`s; every later frame is received and returned empty, so the count of frames is
    /// still the message's.
    ///
    /// For a loop that receives from untrusted peers: a message with more frames than any valid
    /// one is invalid by its count alone, and its extra frames are then not held a second time.
    /// The frames are received through one `zmq_msg_t` on the stack, reused for each frame:
    /// the only allocations are the arrays returned (``receiveMessages(_:)`` allocates two
    /// objects per frame, and ``receiveMultipart(_:)`` used to copy out of those).
    public func receiveMultipart(_ mode: ReceiveMode = .blocking, copyingAtMost maxCopied: Int) throws(ZMQError) -> [[UInt8]]? {
        let handle = try requireHandle()
        guard let firstFlags = try firstReceiveFlags(handle, mode) else { return nil }
        let received: Result<[[UInt8]]?, ZMQError> = withUnsafeTemporaryAllocation(of: zmq_msg_t.self, capacity: 1) { buffer in
            let message = buffer.baseAddress!
            // zmq_msg_init cannot fail (it always returns 0); zmq_msg_recv releases the previous
            // frame's content before it fills the message with the next one.
            zmq_msg_init(message)
            defer { zmq_msg_close(message) }
            do throws(ZMQError) {
                guard try Self.receiveFrame(into: message, from: handle, flags: firstFlags) else { return .success(nil) }
                var frames: [[UInt8]] = []
                frames.reserveCapacity(4)
                while true {
                    frames.append(frames.count < maxCopied ? Self.copyBytes(of: message) : [])
                    guard zmq_msg_more(message) != 0 else { return .success(frames) }
                    // Remaining frames of an atomic message are already here; waiting is never needed.
                    guard try Self.receiveFrame(into: message, from: handle, flags: 0) else { throw ZMQError(code: EAGAIN) }
                }
            } catch {
                return .failure(error)
            }
        }
        return try received.get()
    }

    /// Receives one whole multipart message into `buffer`, replacing what it held, and
    /// returns whether a message arrived (see ``ReceiveMode``).
    ///
    /// Frames past the first `maxCopied` are received and held empty, as by
    /// ``receiveMultipart(_:copyingAtMost:)``. Once `buffer` has grown to the messages it
    /// receives, this allocates nothing: the steady-state path of a loop.
    public func receiveMultipart(
        into buffer: inout ZMQFrameBuffer, _ mode: ReceiveMode = .blocking, copyingAtMost maxCopied: Int = .max
    ) throws(ZMQError) -> Bool {
        let handle = try requireHandle()
        buffer.removeAll()
        guard let firstFlags = try firstReceiveFlags(handle, mode) else { return false }
        let received: Result<Bool, ZMQError> = withUnsafeTemporaryAllocation(of: zmq_msg_t.self, capacity: 1) { pointer in
            let message = pointer.baseAddress!
            zmq_msg_init(message)
            defer { zmq_msg_close(message) }
            do throws(ZMQError) {
                guard try Self.receiveFrame(into: message, from: handle, flags: firstFlags) else { return .success(false) }
                while true {
                    let size = zmq_msg_size(message)
                    if buffer.count < maxCopied, size > 0, let base = zmq_msg_data(message) {
                        buffer.append(UnsafeRawBufferPointer(start: UnsafeRawPointer(base), count: size))
                    } else {
                        buffer.appendEmpty()
                    }
                    guard zmq_msg_more(message) != 0 else { return .success(true) }
                    guard try Self.receiveFrame(into: message, from: handle, flags: 0) else { throw ZMQError(code: EAGAIN) }
                }
            } catch {
                return .failure(error)
            }
        }
        return try received.get()
    }

    /// Receives one whole multipart message, copying each frame into `Data`.
    public func receiveMultipartData(_ mode: ReceiveMode = .blocking) throws(ZMQError) -> [Data]? {
        try receiveMessages(mode)?.map(\.data)
    }

    /// The flags of a message's first `zmq_msg_recv` in `mode`, or nil when a `.timeout` wait
    /// saw nothing arrive.
    private func firstReceiveFlags(_ handle: UnsafeMutableRawPointer, _ mode: ReceiveMode) throws(ZMQError) -> Int32? {
        switch mode {
        case .blocking:
            return 0
        case .dontWait:
            return ZMQ_DONTWAIT
        case .timeout(let timeout):
            guard try waitUntilReadable(handle, timeout: timeout) else { return nil }
            return ZMQ_DONTWAIT
        }
    }

    /// A copy of a received frame's bytes.
    private static func copyBytes(of message: UnsafeMutablePointer<zmq_msg_t>) -> [UInt8] {
        let size = zmq_msg_size(message)
        guard size > 0, let base = zmq_msg_data(message) else { return [] }
        return Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(base), count: size))
    }

    /// Receives one frame, retrying on `EINTR`; returns false on `EAGAIN`.
    private static func receiveFrame(
        into message: UnsafeMutablePointer<zmq_msg_t>,
        from handle: UnsafeMutableRawPointer,
        flags: Int32
    ) throws(ZMQError) -> Bool {
        while zmq_msg_recv(message, handle, flags) < 0 {
            let error = ZMQError.last()
            if error.isInterrupted { continue }
            if error.isAgain { return false }
            throw error
        }
        return true
    }

    /// Polls this one socket for input for up to `timeout`.
    private func waitUntilReadable(_ handle: UnsafeMutableRawPointer, timeout: Duration) throws(ZMQError) -> Bool {
        var items = [zmq_pollitem_t(socket: handle, fd: 0, events: Int16(ZMQ_POLLIN), revents: 0)]
        return try ZMQPoller.pollItems(&items, timeout: timeout) > 0 && items[0].revents & Int16(ZMQ_POLLIN) != 0
    }
}
