import Logging
import NIOCore
import NIOEmbedded

/// One connection's pipeline set up, and one request decoded on it, on the calling thread before
/// the gateway accepts any connection.
///
/// Why: a fresh process's first connections otherwise set their pipelines up on several event
/// loop threads at once, each instantiating the same generic handler types for the first time
/// (NIO's `ByteToMessageHandler<HTTPDecoder<…>>`, the upgrade handler, the guard), and Swift
/// 6.3's runtime crashed there: a null metadata pointer in the conformance check that
/// instantiation makes (`swift_checkMetadataState` under
/// `swift_conformsToProtocolMaybeInstantiateSuperclasses`), once in 900 to 1,700 coordinator
/// starts met by eight concurrent first connections. Instantiated once here, those types are complete,
/// and each call site's cached metadata filled in, before a second thread can ask for them.
///
/// The pipeline is the gateway's own (`GuardedHTTPChannel` around Hummingbird's HTTP/1 channel
/// with WebSocket upgrade) on an `EmbeddedChannel`, with a connection counter and metrics of its
/// own: the gateway's figures count nothing, and the request is decoded, never routed or answered.
enum PipelineWarmUp {
    /// What the warmed pipeline decodes: a plain request, which the upgrade handler reads and
    /// passes on as it does every connection's first request.
    static let request = "GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n"

    /// Sets `pipeline` up on an embedded channel, connects it, feeds it `request`, and closes it
    /// (the guard's lingering close, its timer run at once). Throws what a step threw (the
    /// gateway then starts without the warm-up: it is a precaution, not a condition of serving).
    static func run(_ pipeline: GuardedHTTPChannel, logger: Logger) throws {
        let channel = EmbeddedChannel()
        try settle(pipeline.setup(channel: channel, logger: logger), on: channel)
        try settle(channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)), on: channel)
        try channel.writeInbound(channel.allocator.buffer(string: request))
        channel.close(promise: nil)
        channel.embeddedEventLoop.advanceTime(by: TimeAmount(pipeline.limits.closeLinger))
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    /// Runs the embedded loop until `future` is done (an embedded channel's steps complete
    /// there, never on another thread) and throws its failure.
    private static func settle<Value>(_ future: EventLoopFuture<Value>, on channel: EmbeddedChannel) throws {
        var failure: (any Error)?
        future.assumeIsolated().whenFailure { failure = $0 }
        channel.embeddedEventLoop.run()
        if let failure { throw failure }
    }
}
