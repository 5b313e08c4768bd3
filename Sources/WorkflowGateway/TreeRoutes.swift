import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore
import Tracing
import Workflow
import WorkflowCluster
import WorkflowRemote

/// What the gateway answers about one tree — the shared root's or a session's: its rendering,
/// its stream, an event to one of its sinks, its inspection. The routes of both call these, so a
/// session answers exactly as the shared root does.
struct TreeRoutes: Sendable {
    let runtime: RemoteRuntime?
    let configuration: ClusterConfiguration
    let options: GatewayOptions
    let metrics: GatewayMetrics
    let logger: Logger

    /// The latest settled rendering with its children's statuses, its sequence as its `ETag`:
    /// a request whose `If-None-Match` names that sequence (the client has it) is answered 304.
    func rendering(of session: any ClusterRootSession, scope: TreeScope, request: Request) async -> Response {
        let latest = session.latestRendering
        let tag = RenderingETag(sequence: latest.sequence)
        if tag.isMatched(by: request.headers[.ifNoneMatch]) {
            return Response(status: .notModified, headers: [.eTag: tag.text, .cacheControl: "no-cache"])
        }
        let message = await RenderingFeed.message(session: session, rendering: latest, runtime: runtime, scope: scope)
        // Kept, but asked again each time: a browser's own reads are conditional too.
        return JSONResponses.bytes(message, headers: [.eTag: tag.text, .cacheControl: "no-cache"])
    }

    /// Whether a request to a stream path may become a WebSocket: a plain GET (no upgrade) is
    /// told what the path needs (426, RFC 9110 §15.5.22).
    /// A stream request whose query is not as docs/WIRE-PROTOCOL.md says is answered 400.
    static func upgrade(_ request: Request) throws -> RouterShouldUpgrade {
        guard request.headers[.upgrade]?.lowercased().contains("websocket") == true else { throw UpgradeRequired() }
        _ = try StreamRequest(request)
        return .upgrade([:])
    }

    /// Serves one WebSocket client of `feed` as its request asks (`RenderingStreamClient`) until
    /// either side ends.
    func stream(_ feed: RenderingFeed, request: StreamRequest, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async throws {
        metrics.streamClients.increment()
        defer { metrics.streamClients.decrement() }
        let client = RenderingStreamClient(
            feed: feed, request: request, window: options.stream.window, tick: options.stream.tick, runtime: runtime?.tracer == nil ? nil : runtime)
        try await client.serve(inbound: inbound, outbound: outbound)
    }

    /// What a stream request asks (read again once upgraded: it was checked before).
    static func streamRequest(_ request: Request) -> StreamRequest {
        (try? StreamRequest(request)) ?? StreamRequest()
    }

    /// Sends the request's JSON body as an event to the sink its `{token}` names in `session`.
    func deliver(_ request: Request, context: some RequestContext, to session: any ClusterRootSession) async -> Response {
        guard let tracer = runtime?.tracer else { return await deliverUntraced(request, context: context, to: session) }
        // A server span, continuing the client's trace when its request says `traceparent`; the
        // event's way through the tree (commit, worker, flush, push) is traced inside it.
        let parent = request.headers[HTTPField.Name(TraceParent.key)!].map { TraceParent.extract($0, with: tracer) } ?? .topLevel
        let span = tracer.startSpan(SpanNames.gatewayEvent, context: parent, ofKind: .server)
        span.attributes["http.request.method"] = "POST"
        span.attributes["url.path"] = request.uri.path
        if let token = context.parameters.get("token") { span.attributes[SpanNames.tokenAttribute] = token }
        let response = await ServiceContext.$current.withValue(span.context) {
            await deliverUntraced(request, context: context, to: session)
        }
        span.attributes["http.response.status_code"] = Int64(response.status.code)
        if response.status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
        span.end()
        return response
    }

    /// `deliver` without a span (tracing off).
    private func deliverUntraced(_ request: Request, context: some RequestContext, to session: any ClusterRootSession) async -> Response {
        // Tokens hold characters clients escape (`:`, `@`): percent-decoded (`PercentDecoding`).
        guard let raw = context.parameters.get("token"), let token = PercentDecoding.decoded(raw), !token.isEmpty else {
            return JSONResponses.error(.notFound, code: "unknown-token", message: "no sink token in the path")
        }
        let json: Data
        switch await Self.jsonBody(of: request, upTo: options.maxEventBytes, what: "an event") {
        case .success(let body): json = body
        case .failure(let refusal):
            metrics.event(result: refusal.code)
            return refusal.response
        }
        // The rendering the event follows: one after it shows it (a page marks the click as
        // waiting until then).
        let after = session.latestRendering.sequence
        do throws(RootEventError) {
            try await session.send(event: json, to: token)
        } catch {
            metrics.event(result: error.code)
            // The client gets the reason in the answer and operators the count by result in
            // `workflow_gateway_events_total`: a client sending bad events must not fill the log.
            logger.debug("gateway: event not delivered: \(error)")
            return GatewayRoutes.response(for: error)
        }
        metrics.event(result: "sent")
        return JSONResponses.bytes(EventAccepted(after: after, result: "sent", token: token).json, status: .accepted)
    }

    /// The tree's inspection (`ClusterTreeInspection`); the shared root's lists the sessions too.
    func tree(of session: any ClusterRootSession, scope: TreeScope, sessions: SessionDirectory? = nil) async -> Response {
        let liveTree = await session.liveTree()
        let inspection = scope.restrict(await runtime?.inspect(tree: scope.runtimeTree))
        var tree = ClusterTreeInspection(session: session, liveTree: liveTree, runtime: inspection, configuration: configuration)
        tree.sessions = await sessions?.summaries()
        return JSONResponses.encoded(tree)
    }

    /// A JSON body refused before it reached the tree.
    struct BodyRefusal: Error {
        var code: String
        var response: Response
    }

    /// The request's body, if it is JSON (`Content-Type`) and at most `limit` bytes.
    static func jsonBody(of request: Request, upTo limit: Int, what: String) async -> Result<Data, BodyRefusal> {
        guard JSONMediaType.matches(request.headers[.contentType]) else {
            return .failure(
                BodyRefusal(
                    code: "unsupported-media-type",
                    response: JSONResponses.error(
                        .unsupportedMediaType, code: "unsupported-media-type", message: "\(what) is JSON: send Content-Type: application/json",
                        headers: [.accept: "application/json"])))
        }
        var request = request
        do {
            return .success(Data(try await request.collectBody(upTo: limit).readableBytesView))
        } catch {
            return .failure(
                BodyRefusal(
                    code: "too-large", response: JSONResponses.error(.contentTooLarge, code: "too-large", message: "\(what) is at most \(limit) bytes")))
        }
    }

    /// `{"after": N, "result": "sent", "token": …}`: `after`, the latest rendering's sequence
    /// as the event arrived, before it was handed to its sink (a later rendering shows it).
    struct EventAccepted: Codable, Sendable {
        var after: UInt64
        var result: String
        var token: String

        /// Its JSON, as `JSONResponses.encoded` writes it (keys sorted, `/` unescaped), written
        /// directly: a `JSONEncoder` per event was about 2 % of a coordinator's time under events.
        var json: [UInt8] {
            var out = Array(#"{"after":\#(after),"result":"#.utf8)
            out.reserveCapacity(out.count + result.utf8.count + token.utf8.count + 16)
            JSONText.appendQuoted(result, escapingSlashes: false, to: &out)
            out += Array(#","token":"#.utf8)
            JSONText.appendQuoted(token, escapingSlashes: false, to: &out)
            out.append(UInt8(ascii: "}"))
            return out
        }
    }
}
