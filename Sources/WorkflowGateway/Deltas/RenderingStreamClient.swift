import Foundation
import HummingbirdWebSocket
import Synchronization
import Tracing
import WorkflowRemote

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
    /// The runtime whose traced flushes a write continues (`SpanNames.push`); `nil` when
    /// tracing is off, and then no span is made.
    var runtime: RemoteRuntime? = nil

    /// Serves the client until either side ends the stream, or the client sends what is not
    /// an acknowledgement (then its stream closes, with the words, and only its).
    ///
    /// Two tasks: the writer wakes once per frame the feed publishes (and not at all while
    /// nothing changes), the reader once per message the client sends; an acknowledgement wakes
    /// the writer only when it opens a full window (handing it the latest frame again, the one
    /// it passed over).
    func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        let window = SharedWindow(StreamWindow(limit: self.window))
        let (frames, again) = feed.subscription()
        let deltas = request.deltas != nil
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                // The client's side: acknowledgements (a client of whole frames sends none: what
                // it sends is ignored). A text message that is not UTF-8 throws, and the stream
                // closes with 1007.
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    guard deltas else { continue }
                    do throws(StreamRequestError) {
                        let sequence = try Self.acknowledgement(message)
                        let opened = try window.state.withLock { window throws(StreamRequestError) in
                            let wasFull = window.isFull
                            try window.acknowledge(sequence)
                            return wasFull && !window.isFull
                        }
                        if opened { again() }
                    } catch {
                        try? await outbound.close(.policyViolation, reason: error.closeReason)
                        return
                    }
                }
            }
            group.addTask {
                try await write(frames: frames, window: window, outbound: outbound)
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Writes the message each new frame calls for, until the frames end or a write fails: at
    /// most one per `tick` (a frame sooner than that waits out the rest of the tick, then the
    /// latest goes), none while a delta client's window is full (the acknowledgement that opens
    /// it hands the writer the latest frame again).
    private func write(frames: AsyncStream<StreamFrame>, window: SharedWindow, outbound: WebSocketOutboundWriter) async throws {
        let deltas = request.deltas
        // The frame the client has (or will have applied when the next message arrives).
        var base: UInt64? = request.run == feed.run ? request.since : nil
        var sentAny = false
        var lastWrite: ContinuousClock.Instant?
        for await _ in frames {
            if deltas != nil, window.state.withLock({ $0.isFull }) { continue }
            if tick > .zero, let lastWrite, lastWrite + tick > .now {
                try await Task.sleep(until: lastWrite + tick)
            }
            guard let frame = feed.latest else { continue }
            if sentAny, frame.sequence == base { continue }
            let message: [UInt8]
            if deltas != nil, let base, base <= frame.sequence, let changes = feed.delta(from: base, to: frame) {
                message = changes
            } else {
                message = frame.wholeMessage(deltas: deltas, window: self.window)
            }
            // Counted as sent before the write: the client may acknowledge it before the write
            // returns here, and an acknowledgement of a sequence not (yet) sent closes the stream.
            window.state.withLock { $0.sent(frame.sequence) }
            // The first write after a traced flush continues its trace (tracing only).
            let span = runtime.flatMap { runtime in
                runtime.takeTracedFlushContext().flatMap { context in
                    runtime.tracer?.startSpan(SpanNames.push, context: context, ofKind: .producer)
                }
            }
            span?.attributes["workflow.rendering.sequence"] = Int64(frame.sequence)
            do {
                try await outbound.write(.text(String(decoding: message, as: UTF8.self)))
                span?.end()
            } catch {
                span?.end()
                return
            }
            sentAny = true
            base = frame.sequence
            lastWrite = .now
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
