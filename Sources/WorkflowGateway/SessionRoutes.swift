import Foundation
import Hummingbird
import HummingbirdWebSocket
import Workflow
import WorkflowCluster

/// The routes of the coordinator's sessions: a live tree per client beside the shared root.
///
/// | route | answers |
/// |---|---|
/// | `POST /api/sessions` | creates one: `{"root": NAME, "props": {…}}` (both optional: the shared root's name, no props) → 201 `{"session": ID, "root": NAME}` |
/// | `GET /api/sessions` | every session: label (its id's first 8 digits: ids are never listed), root, state (`active`, `passivating`, `passivated`, `reactivating`), clients, sequence |
/// | `GET /api/sessions/{id}/rendering` | as `/api/rendering`, for the session (reactivating it if passivated) |
/// | `GET /api/sessions/{id}/renderings` (WebSocket) | as `/api/renderings`; an open stream keeps the session active |
/// | `POST /api/sessions/{id}/events/{token}` | as `/api/events/{token}`; a token of another session or of the shared root is unknown here (404) |
/// | `GET /api/sessions/{id}/tree` | as `/api/tree`, for the session |
/// | `DELETE /api/sessions/{id}` | ends it (and removes it from the coordinator's store): 204 |
///
/// With sessions spread over coordinators (`sessions.spread_lease_ms`), a request for a session
/// another live coordinator owns is answered `307 Temporary Redirect` to the same path on that
/// coordinator's advertised gateway (`Location`; `error` `session-elsewhere`); its rendering
/// stream closes at once with reason `session-elsewhere URL` (a WebSocket handshake cannot be
/// redirected). One whose owner's lease ran out is taken over here first.
///
/// An id no session has answers 404 `unknown-session`; limits answer 503 `too-many-sessions` or
/// 429 `too-many-creations`, each with `Retry-After`; a store that cannot record, read or remove a
/// session answers 503 `sessions-unavailable` (the session is kept).
struct SessionRoutes: Sendable {
    let directory: SessionDirectory
    /// The root a session is of when its creator names none.
    let sharedRoot: String
    let tree: TreeRoutes
    /// The rendering feeds of the sessions clients stream.
    let feeds: SessionFeeds

    /// Adds the routes of the table above to `router`, but the event route (`deliverEvent`).
    func add<Context: WebSocketRequestContext>(to router: MethodRecordingRouter<Context>) {
        let directory = directory
        let tree = tree
        let sharedRoot = sharedRoot
        let feeds = feeds

        router.post("/api/sessions") { request, _ -> Response in
            let body: Data
            switch await TreeRoutes.jsonBody(of: request, upTo: tree.options.maxEventBytes, what: "a session's creation") {
            case .success(let data): body = data
            case .failure(let refusal): return refusal.response
            }
            guard let creation = SessionCreation(json: body) else {
                return JSONResponses.error(
                    .badRequest, code: "undecodable-request", message: #"expected {"root": NAME, "props": {…}} (both optional)"#)
            }
            do throws(SessionError) {
                let root = creation.root ?? sharedRoot
                let id = try await directory.create(root: root, props: creation.props)
                return JSONResponses.bytes(Created(session: id, root: root).json, status: .created)
            } catch {
                return Self.response(for: error)
            }
        }

        router.get("/api/sessions") { _, _ -> Response in
            JSONResponses.encoded(Listing(sessions: await directory.summaries()))
        }

        router.get("/api/sessions/{id}/rendering") { request, context -> Response in
            await Self.using(directory, request, context) { session, id in await tree.rendering(of: session, scope: .session(id), request: request) }
        }

        router.ws("/api/sessions/{id}/renderings") { request, _ in
            try TreeRoutes.upgrade(request)
        } onUpgrade: { inbound, outbound, context in
            guard let id = context.requestContext.parameters.get("id").flatMap(SessionID.init) else {
                try await outbound.close(.unexpectedServerError, reason: "unknown session")
                return
            }
            do throws(SessionError) {
                // The open stream holds the session: it stays active while its client watches.
                try await directory.use(id) { session in
                    try? await tree.stream(
                        feeds.feed(of: session, id: id), request: TreeRoutes.streamRequest(context.request), inbound: inbound, outbound: outbound)
                }
            } catch {
                try await outbound.close(.unexpectedServerError, reason: Self.closeReason(for: error))
            }
        }

        router.get("/api/sessions/{id}/tree") { request, context -> Response in
            await Self.using(directory, request, context) { session, id in await tree.tree(of: session, scope: .session(id)) }
        }

        router.delete("/api/sessions/{id}") { request, context -> Response in
            guard let id = context.parameters.get("id").flatMap(SessionID.init) else {
                return Self.response(for: .unknownSession(context.parameters.get("id") ?? ""))
            }
            do throws(SessionError) {
                try await directory.end(id)
                return Response(status: .noContent)
            } catch {
                return Self.response(for: error, to: request)
            }
        }
    }

    /// `POST /api/sessions/{id}/events/{token}`: registered by `EventRoutes.addSession`, which
    /// also answers it without the router.
    func deliverEvent(_ request: Request, context: some RequestContext) async -> Response {
        await Self.using(directory, request, context) { session, _ in await tree.deliver(request, context: context, to: session) }
    }

    /// Runs `body` with the session the path's `{id}` names (held while it runs), or answers why
    /// there is none.
    private static func using(
        _ directory: SessionDirectory, _ request: Request, _ context: some RequestContext,
        _ body: @Sendable (any ClusterRootSession, SessionID) async -> Response
    ) async -> Response {
        guard let id = context.parameters.get("id").flatMap(SessionID.init) else {
            return response(for: .unknownSession(context.parameters.get("id") ?? ""))
        }
        do throws(SessionError) {
            return try await directory.use(id) { session in await body(session, id) }
        } catch {
            return response(for: error, to: request)
        }
    }

    /// Why a session's stream closes at once: the error's code, and for a session another
    /// coordinator owns its gateway (`session-elsewhere http://HOST:PORT`: a WebSocket handshake
    /// cannot be redirected), within a close frame's 123 bytes.
    static func closeReason(for error: SessionError) -> String {
        guard case .ownedElsewhere(let gateway) = error else { return error.code }
        let reason = error.code + " " + gateway
        return reason.utf8.count <= 123 ? reason : error.code
    }

    /// The status and JSON error for a session that could not be created or found; `request`:
    /// the request it answers (a redirect keeps its path and query).
    static func response(for error: SessionError, to request: Request? = nil) -> Response {
        switch error {
        case .unknownSession: JSONResponses.error(.notFound, code: error.code, message: error.description)
        case .unknownRoot, .undecodableProps: JSONResponses.error(.badRequest, code: error.code, message: error.description)
        case .tooManySessions: JSONResponses.error(.serviceUnavailable, code: error.code, message: error.description, headers: [.retryAfter: "30"])
        case .creationRateExceeded: JSONResponses.error(.tooManyRequests, code: error.code, message: error.description, headers: [.retryAfter: "1"])
        case .unavailable: JSONResponses.error(.serviceUnavailable, code: error.code, message: error.description)
        case .ownedElsewhere(let gateway):
            JSONResponses.error(
                .temporaryRedirect, code: error.code, message: error.description,
                headers: [.location: gateway + (request.map { "\($0.uri)" } ?? "/")])
        }
    }

    /// What `POST /api/sessions` reads: the root's name and its props, both optional.
    struct SessionCreation {
        var root: String?
        var props: Data?

        /// Reads `{"root": NAME, "props": ANY}`; an empty body is `{}`. `nil` when it is not that.
        init?(json: Data) {
            guard !json.isEmpty else { return }
            guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else { return nil }
            if let root = object["root"] {
                guard let name = root as? String else { return nil }
                self.root = name
            }
            if let props = object["props"], !(props is NSNull) {
                guard let data = try? JSONSerialization.data(withJSONObject: props, options: [.fragmentsAllowed]) else { return nil }
                self.props = data
            }
        }
    }

    struct Created: Codable, Sendable {
        var session: SessionID
        var root: String

        /// `{"root":…,"session":…}`, as `JSONResponses.encoded` writes it, without an encoder:
        /// every session's creation answers with it.
        var json: [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(64 + root.utf8.count)
            out.append(UInt8(ascii: "{"))
            JSONText.appendKey("root", to: &out)
            JSONText.appendQuoted(root, escapingSlashes: false, to: &out)
            out.append(UInt8(ascii: ","))
            JSONText.appendKey("session", to: &out)
            JSONText.appendQuoted(session.text, escapingSlashes: false, to: &out)
            out.append(UInt8(ascii: "}"))
            return out
        }
    }

    struct Listing: Codable, Sendable {
        var sessions: [SessionDirectory.Summary]
    }
}

