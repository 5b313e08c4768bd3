/// Why an event sent to a sink token of the root's rendering was not delivered.
///
/// An outside client (the coordinator's `--events-from-stdin`, later an HTTP gateway) holds
/// tokens it read from a JSON rendering; each way a send can fail is a distinct case so the
/// client can react (fetch the current rendering, fix its request, retry later) and a gateway
/// can map it to a status code.
public enum RootEventError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No rendering of this root ever carried the token (a typo, or a token from another
    /// coordinator process).
    case unknownToken(String)
    /// The token was in an earlier rendering, and the current one no longer renders that sink
    /// (a token keeps its text while its sink is rendered, so a token the latest rendering
    /// carries never answers this): read the rendering again and use its tokens.
    case staleToken(String)
    /// The token was made by an earlier run of the tree (before the coordinator restarted, or
    /// before the node that made it was started again): it may be well-formed and once valid,
    /// but nothing delivers it now. Read the current rendering and use its tokens.
    case restartedToken(String)
    /// The body is not JSON the sink's event type decodes from; `reason` says what was wrong.
    case undecodableEvent(token: String, reason: String)
    /// The sink refused the event for back-pressure (its remote child has too many
    /// unacknowledged events): nothing was applied; retry later.
    case refused(token: String)
    /// The event reached its sink but the coordinator could not record it durably (its store
    /// failed, or a newer coordinator took the store over): it was not accepted, and whether it
    /// survives a restart is unknown. Read the rendering before sending it again.
    case notDurable(token: String, reason: String)

    /// A one-line explanation for logs and client errors.
    public var description: String {
        switch self {
        case .unknownToken(let token): "unknown sink token \"\(token)\""
        case .restartedToken(let token):
            "sink token \"\(token)\" is from before a restart of the tree (the coordinator's or its node's); read the rendering again"
        case .staleToken(let token):
            "stale sink token \"\(token)\": this sink is no longer rendered: read the rendering again"
        case .undecodableEvent(let token, let reason): "the event for sink token \"\(token)\" cannot be decoded: \(reason)"
        case .refused(let token): "the sink \"\(token)\" refused the event (back-pressure); retry later"
        case .notDurable(let token, let reason):
            "the event for sink token \"\(token)\" was not recorded durably (\(reason)); read the rendering before sending it again"
        }
    }

    /// A stable machine-readable name for the case (`unknown-token`, `stale-token`, `restarted`,
    /// `undecodable-event`, `refused`, `not-durable`), for JSON answers.
    package var code: String {
        switch self {
        case .unknownToken: "unknown-token"
        case .staleToken: "stale-token"
        case .restartedToken: "restarted"
        case .undecodableEvent: "undecodable-event"
        case .refused: "refused"
        case .notDurable: "not-durable"
        }
    }
}
