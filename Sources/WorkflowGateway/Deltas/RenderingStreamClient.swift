import Foundation
import HummingbirdWebSocket
import Synchronization

/// One WebSocket client of a tree's rendering stream: what it is sent, and when.
///
/// A client that asked for whole frames gets the latest frame, then each newer one. A delta
/// client (`StreamRequest.deltas`) gets a first whole frame — or, resuming from a sequence the
/// feed still keeps, only the changes after it — then each newer frame as the changes from the
/// one it was sent before, and acknowledges what it applied (`{"ack": N}`). At most one message
/// goes out per `tick` (renderings faster than that reach it as one message to the latest), at
/// most `window` unacknowledged to a delta client (then nothing until it acknowledges: a client
/// that stops reading holds no more than that); the latest frame always arrives.
struct RenderingStreamClient: Sendable {
    let feed: RenderingFeed
    let request: StreamRequest
    let window: Int
    let tick: Duration

    /// Serves the client until either side ends the stream, or the client sends what is not
    /// an acknowledgement (then its stream closes, with the words, and only its).
    func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let window = SharedWindow(StreamWindow(limit: self.window))
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let deltas = request.deltas != nil
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in feed.subscribe() { wake.yield() }
                wake.finish()
            }
            group.addTask {
                // The client's side: acknowledgements (a client of whole frames sends none: what
                // it sends is ignored). A text message that is not UTF-8 throws, and the stream
                // closes with 1007.
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    guard deltas else { continue }
                    do throws(StreamRequestError) {
                        let sequence = try Self.acknowledgement(message)
                        try window.state.withLock { window throws(StreamRequestError) in try window.acknowledge(sequence) }
                        wake.yield()
                    } catch {
                        try? await outbound.close(.policyViolation, reason: error.closeReason)
                        return
                    }
                }
            }
            group.addTask {
                try await write(wakes: wakes, window: window, outbound: outbound)
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Writes the message each wake-up calls for, until the frames end or a write fails.
    private func write(wakes: AsyncStream<Void>, window: SharedWindow, outbound: WebSocketOutboundWriter) async throws {
        let deltas = request.deltas
        // The frame the client has (or will have applied when the next message arrives).
        var base: UInt64? = request.run == feed.run ? request.since : nil
        var sentAny = false
        for await _ in wakes {
            guard let frame = feed.latest else { continue }
            if sentAny, frame.sequence == base { continue }
            if deltas != nil, window.state.withLock({ $0.isFull }) { continue }
            let message: [UInt8]
            if deltas != nil, let base, base <= frame.sequence, let changes = feed.delta(from: base, to: frame) {
                message = changes
            } else {
                message = frame.wholeMessage(deltas: deltas, window: self.window)
            }
            // Counted as sent before the write: the client may acknowledge it before the write
            // returns here, and an acknowledgement of a sequence not (yet) sent closes the stream.
            window.state.withLock { $0.sent(frame.sequence) }
            do {
                try await outbound.write(.text(String(decoding: message, as: UTF8.self)))
            } catch {
                return
            }
            sentAny = true
            base = frame.sequence
            if tick > .zero { try await Task.sleep(for: tick) }
        }
    }

    /// The sequence `{"ack": N}` acknowledges; anything else is refused in words.
    static func acknowledgement(_ message: WebSocketMessage) throws(StreamRequestError) -> UInt64 {
        let refusal = StreamRequestError(code: "bad-ack", message: #"expected {"ack": SEQUENCE} (the last sequence applied)"#)
        guard case .text(let text) = message, let value = JSONValue(json: Data(text.utf8)), case .object(let object) = value,
            case .integer(let sequence)? = object["ack"], sequence >= 0
        else { throw refusal }
        return UInt64(sequence)
    }
}

/// One client's window, shared by its reader (acknowledgements) and its writer.
private final class SharedWindow: Sendable {
    let state: Mutex<StreamWindow>

    init(_ window: StreamWindow) {
        state = Mutex(window)
    }
}
