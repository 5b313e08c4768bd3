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
    public func send(_ frames: [some ContiguousBytes], mode: SendMode = .blocking) throws(ZMQError) {
        let handle = try requireHandle()
        guard !frames.isEmpty else { throw ZMQError(code: EINVAL) }
        for (index, frame) in frames.enumerated() {
            let flags = Self.sendFlags(mode: mode, more: index < frames.count - 1)
            let sent: Bool = frame.withUnsafeBytes { buffer in
                while zmq_send(handle, buffer.baseAddress, buffer.count, flags) < 0 {
                    if zmq_errno() != EINTR { return false }
                }
                return true
            }
            guard sent else { throw ZMQError.last() }
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
    private static func sendFlags(mode: SendMode, more: Bool) -> Int32 {
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
        var firstFlags: Int32 = 0
        switch mode {
        case .blocking:
            break
        case .dontWait:
            firstFlags = ZMQ_DONTWAIT
        case .timeout(let timeout):
            guard try waitUntilReadable(handle, timeout: timeout) else { return nil }
            firstFlags = ZMQ_DONTWAIT
        }
        let first = ZMQMessage()
        guard try Self.receiveFrame(into: first, from: handle, flags: firstFlags) else { return nil }
        var frames = [first]
        var more = first.hasMore
        while more {
            // Remaining frames of an atomic message are already here; waiting is never needed.
            let next = ZMQMessage()
            guard try Self.receiveFrame(into: next, from: handle, flags: 0) else {
                throw ZMQError(code: EAGAIN)
            }
            frames.append(next)
            more = next.hasMore
        }
        return frames
    }

    /// Receives one whole multipart message, copying each frame into a `[UInt8]`.
    public func receiveMultipart(_ mode: ReceiveMode = .blocking) throws(ZMQError) -> [[UInt8]]? {
        try receiveMessages(mode)?.map(\.bytes)
    }

    /// Receives one whole multipart message, copying each frame into `Data`.
    public func receiveMultipartData(_ mode: ReceiveMode = .blocking) throws(ZMQError) -> [Data]? {
        try receiveMessages(mode)?.map(\.data)
    }

    /// Receives one frame, retrying on `EINTR`; returns false on `EAGAIN`.
    private static func receiveFrame(
        into message: ZMQMessage,
        from handle: UnsafeMutableRawPointer,
        flags: Int32
    ) throws(ZMQError) -> Bool {
        while zmq_msg_recv(message.pointer, handle, flags) < 0 {
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
