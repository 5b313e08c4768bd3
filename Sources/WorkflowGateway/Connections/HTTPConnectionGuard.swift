import NIOCore
import NIOHTTP1
import WorkflowCluster

/// Holds one gateway connection to `GatewayLimits` and to HTTP/1.1: closes slow clients (408),
/// refuses a connection over the limit (503), answers a request the decoder refuses with the
/// status HTTP names (400, 413, 414, 431, 501, 505) instead of dropping it, and closes every
/// connection fully (never leaving a half-closed socket holding its descriptor).
///
/// Two handlers share it: `socketSide`, first in the pipeline, sees raw bytes (it discards
/// what a closing connection still receives, writes the guard's own answers, and turns every
/// close into a lingering one: half-close, read and discard until the client closes or
/// `closeLinger` passes, then close); `messageSide`, right after NIO's HTTP decoder, sees
/// request and response parts and the decoder's errors. Both run on the channel's event loop
/// only, which is why this class needs no lock.
final class HTTPConnectionGuard {
    private let limits: GatewayLimits
    private let maxBodyBytes: Int
    private let connections: ConnectionCounter
    private let metrics: GatewayMetrics

    private var deadlines: ConnectionDeadlines?
    private var socketContext: ChannelHandlerContext?
    private var messageContext: ChannelHandlerContext?
    /// The deadline timer and when it fires (see `rearm`).
    private var timer: (scheduled: Scheduled<Void>, deadline: NIODeadline)?
    private var lingerTimer: Scheduled<Void>?
    private var counted = false
    /// The guard answered (or gave up on) the connection: input is discarded, the
    /// application's writes are dropped, and the connection is closing.
    private var tookOver = false
    private var lingering = false
    /// Completes when the output is shut (what was written is sent), once lingering.
    private var outputClosed: EventLoopFuture<Void>?
    /// A request head was passed on and its end was not: the application is reading a body.
    private var midRequest = false
    /// The first bytes of the line the decoder is reading, and of the request it is reading
    /// (see `ConnectionRefusal`).
    private var lineStart: [UInt8] = []
    private var requestLine = RequestLineWatch()

    init(limits: GatewayLimits, maxBodyBytes: Int, connections: ConnectionCounter, metrics: GatewayMetrics) {
        self.limits = limits
        self.maxBodyBytes = maxBodyBytes
        self.connections = connections
        self.metrics = metrics
    }

    /// The handler to put first in the pipeline.
    var socketSide: SocketSide { SocketSide(guard: self) }
    /// The handler to put right after the HTTP request decoder.
    var messageSide: MessageSide { MessageSide(guard: self) }

    // MARK: - The socket side

    fileprivate func opened(_ context: ChannelHandlerContext) {
        guard !counted else { return }
        counted = true
        socketContext = context
        metrics.connections.increment()
        guard connections.open(limit: limits.maxConnections) else {
            takeOver(.connectionLimit, reason: "connection-limit")
            return
        }
        deadlines = ConnectionDeadlines(limits: limits, now: .now())
        rearm()
    }

    fileprivate func closed() {
        cancelTimer()
        lingerTimer?.cancel()
        lingerTimer = nil
        if counted {
            counted = false
            connections.close()
            metrics.connections.decrement()
        }
        socketContext = nil
        messageContext = nil
    }

    /// Raw bytes from the socket: `true` to pass them on.
    fileprivate func received(_ buffer: ByteBuffer) -> Bool {
        // Once closing, what the client still sends is read and dropped: nothing above reads
        // it any more, and unread bytes would stop the reading that lets the client finish.
        if tookOver || lingering { return false }
        if deadlines?.waiting == .nextRequest { requestLine = RequestLineWatch() }
        deadlines?.receivedBytes(now: .now())
        rearm()
        noteLineStart(buffer)
        if let refusal = requestLine.read(buffer) {
            // A request line without a version (HTTP/0.9, or not HTTP): the decoder would wait
            // for a head that never comes.
            takeOver(refusal, reason: refusal.code)
            return false
        }
        return true
    }

    /// A close was asked for (by the application, the upgrade handler, a timeout): close
    /// output once what is written is sent, then linger.
    fileprivate func closeRequested(_ context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        switch mode {
        case .input:
            context.close(mode: .input, promise: promise)
        case .output, .all:
            if let promise { context.channel.closeFuture.cascade(to: promise) }
            linger(context)
        }
    }

    fileprivate func inputClosedWhileLingering(_ context: ChannelHandlerContext) -> Bool {
        guard lingering else { return false }
        // Both sides are done once what was written is sent (closing now would drop it).
        let channel = context.channel
        (outputClosed ?? context.eventLoop.makeSucceededVoidFuture()).whenComplete { _ in channel.close(promise: nil) }
        return true
    }

    fileprivate func readCompleteWhileLingering(_ context: ChannelHandlerContext) {
        // Keep reading whatever the application's back-pressure says: the bytes are discarded.
        if lingering || tookOver { context.read() }
    }

    private func linger(_ context: ChannelHandlerContext) {
        guard !lingering else { return }
        lingering = true
        cancelTimer()
        let promise = context.eventLoop.makePromise(of: Void.self)
        outputClosed = promise.futureResult
        context.close(mode: .output, promise: promise)
        lingerTimer = context.eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(limits.closeLinger)) { [weak self] in
            self?.socketContext?.close(mode: .all, promise: nil)
        }
        context.read()
    }

    private func noteLineStart(_ buffer: ByteBuffer) {
        let view = buffer.readableBytesView
        if let newline = view.lastIndex(of: UInt8(ascii: "\n")) {
            lineStart = Array(view[view.index(after: newline)...].prefix(16))
        } else if lineStart.count < 16 {
            lineStart += view.prefix(16 - lineStart.count)
        }
    }

    // MARK: - The message side

    fileprivate func messageSideAdded(_ context: ChannelHandlerContext) {
        messageContext = context
        // Refused before the pipeline was complete (the connection limit): the upgrade handler
        // must still learn that no request comes.
        if tookOver { context.fireUserInboundEventTriggered(ChannelEvent.inputClosed) }
    }

    fileprivate func messageSideRemoved() {
        messageContext = nil
    }

    /// A decoded request part: `true` to pass it on.
    fileprivate func received(_ part: HTTPServerRequestPart) -> Bool {
        if tookOver { return false }
        let now = NIODeadline.now()
        switch part {
        case .head(let head):
            if let length = head.headers.first(name: "content-length").flatMap({ Int($0) }), length > maxBodyBytes {
                takeOver(.tooLarge(limit: maxBodyBytes), reason: "too-large")
                return false
            }
            deadlines?.receivedHead(now: now)
            midRequest = true
        case .body:
            break
        case .end:
            deadlines?.receivedEnd(now: now)
            midRequest = false
        }
        rearm()
        return true
    }

    /// A response part the application writes: `false` to drop it (the guard answered).
    fileprivate func sending(_ part: HTTPServerResponsePart) -> Bool {
        if tookOver { return false }
        switch part {
        case .head(let head) where head.status == .switchingProtocols:
            deadlines?.upgrade()
        case .head(let head) where (100..<200).contains(head.status.code):
            break
        case .head:
            deadlines?.sentHead()
        case .body:
            break
        case .end:
            deadlines?.sentEnd(now: .now())
        }
        rearm()
        return true
    }

    /// An error from the decoder (or after it): `true` to pass it on.
    fileprivate func caught(_ error: any Error) -> Bool {
        if tookOver { return false }
        guard let parserError = error as? HTTPParserError else { return true }
        guard deadlines?.mayAnswer ?? false, let refusal = ConnectionRefusal.forParseError(parserError, lineStart: lineStart, requestStart: requestLine.start) else {
            // An answer is owed for an earlier request: the application answers it, then closes.
            return true
        }
        takeOver(refusal, reason: refusal.code)
        return false
    }

    /// The client closed its side (or the connection) in the middle of a body: the
    /// application must see an error, never a body that merely ends early.
    fileprivate func inputEndedMidRequest() -> Bool {
        guard midRequest, !tookOver else { return false }
        midRequest = false
        messageContext?.fireErrorCaught(GatewayConnectionClosed.bodyCutShort)
        return true
    }

    // MARK: - Deadlines and taking over

    /// Keeps a timer due no later than the connection's deadline. A timer already due earlier
    /// is kept (when it fires, `deadlinePassed` finds nothing expired and arms the next one):
    /// the deadline moves at each read and write, and a timer cancelled and scheduled again for
    /// each was about 2 % of a coordinator's instructions per event.
    private func rearm() {
        guard !tookOver, let context = socketContext else {
            cancelTimer()
            return
        }
        guard let deadline = deadlines?.deadline else { return }
        if let timer, timer.deadline <= deadline { return }
        cancelTimer()
        timer = (context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            self?.deadlinePassed()
        }, deadline)
    }

    private func cancelTimer() {
        timer?.scheduled.cancel()
        timer = nil
    }

    private func deadlinePassed() {
        timer = nil
        guard let deadlines, let expiry = deadlines.expiry(now: .now()) else {
            rearm()
            return
        }
        switch expiry {
        case .headerTimeout:
            takeOver(deadlines.mayAnswer ? .headerTimeout : nil, reason: "header-timeout")
        case .bodyTimeout:
            takeOver(deadlines.mayAnswer ? .bodyTimeout : nil, reason: "body-timeout")
        case .idleTimeout:
            takeOver(nil, reason: "idle-timeout")
        }
    }

    /// Answers `refusal` (if any), tells the rest of the pipeline no more input comes, and
    /// closes the connection (lingering).
    private func takeOver(_ refusal: ConnectionRefusal?, reason: String) {
        guard !tookOver, let socketContext else { return }
        tookOver = true
        metrics.connectionClosed(reason: reason)
        if let refusal {
            socketContext.writeAndFlush(NIOAny(refusal.bytes), promise: nil)
        }
        linger(socketContext)
        // The application (or the upgrade handler still waiting for a first request) ends its
        // reading: with an error in the middle of a body, as the end of input between requests.
        if midRequest {
            midRequest = false
            messageContext?.fireErrorCaught(GatewayConnectionClosed.byGuard(reason))
        } else {
            messageContext?.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
    }
}

/// Why the gateway ended a request's input early (what the application's body reader throws).
enum GatewayConnectionClosed: Error, CustomStringConvertible {
    case bodyCutShort
    case byGuard(String)

    var description: String {
        switch self {
        case .bodyCutShort: "the client closed the connection before the request body ended"
        case .byGuard(let reason): "the gateway closed the connection (\(reason))"
        }
    }
}

extension HTTPConnectionGuard {
    /// The guard's handler on the raw socket (first in the pipeline).
    final class SocketSide: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = ByteBuffer
        typealias InboundOut = ByteBuffer
        typealias OutboundIn = NIOAny
        typealias OutboundOut = NIOAny

        private let connectionGuard: HTTPConnectionGuard

        init(guard connectionGuard: HTTPConnectionGuard) {
            self.connectionGuard = connectionGuard
        }

        func handlerAdded(context: ChannelHandlerContext) {
            if context.channel.isActive { connectionGuard.opened(context) }
        }

        func channelActive(context: ChannelHandlerContext) {
            connectionGuard.opened(context)
            context.fireChannelActive()
        }

        func channelInactive(context: ChannelHandlerContext) {
            connectionGuard.closed()
            context.fireChannelInactive()
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            connectionGuard.closed()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if connectionGuard.received(Self.unwrapInboundIn(data)) { context.fireChannelRead(data) }
        }

        func channelReadComplete(context: ChannelHandlerContext) {
            connectionGuard.readCompleteWhileLingering(context)
            context.fireChannelReadComplete()
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? ChannelEvent, event == .inputClosed, connectionGuard.inputClosedWhileLingering(context) { return }
            context.fireUserInboundEventTriggered(event)
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            context.write(data, promise: promise)
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            connectionGuard.closeRequested(context, mode: mode, promise: promise)
        }
    }

    /// The guard's handler on decoded HTTP/1 parts (right after the request decoder).
    final class MessageSide: ChannelDuplexHandler, RemovableChannelHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias InboundOut = HTTPServerRequestPart
        typealias OutboundIn = HTTPServerResponsePart
        typealias OutboundOut = HTTPServerResponsePart

        private let connectionGuard: HTTPConnectionGuard

        init(guard connectionGuard: HTTPConnectionGuard) {
            self.connectionGuard = connectionGuard
        }

        func handlerAdded(context: ChannelHandlerContext) {
            connectionGuard.messageSideAdded(context)
        }

        func handlerRemoved(context: ChannelHandlerContext) {
            connectionGuard.messageSideRemoved()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if connectionGuard.received(Self.unwrapInboundIn(data)) { context.fireChannelRead(data) }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            if connectionGuard.caught(error) { context.fireErrorCaught(error) }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if let event = event as? ChannelEvent, event == .inputClosed { _ = connectionGuard.inputEndedMidRequest() }
            context.fireUserInboundEventTriggered(event)
        }

        func channelInactive(context: ChannelHandlerContext) {
            _ = connectionGuard.inputEndedMidRequest()
            context.fireChannelInactive()
        }

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let part = Self.unwrapOutboundIn(data)
            guard connectionGuard.sending(part) else {
                promise?.fail(ChannelError.outputClosed)
                return
            }
            guard case .head(let head) = part, head.status == .switchingProtocols else {
                context.write(data, promise: promise)
                return
            }
            // The connection becomes a WebSocket: what follows is not HTTP/1 parts. Flushed here,
            // as the flush that follows this write would reach this handler once removed.
            context.writeAndFlush(data, promise: promise)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}
