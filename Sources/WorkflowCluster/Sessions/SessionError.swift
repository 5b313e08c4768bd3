/// Why a session could not be created, found or ended. The gateway answers each with its own
/// status and `code`; the coordinator keeps serving every other session.
package enum SessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No session has this id (never created, ended, or a malformed id).
    case unknownSession(String)
    /// No root is registered under this name.
    case unknownRoot(String, known: [String])
    /// The props the client sent do not decode as the root's props.
    case undecodableProps(root: String, reason: String)
    /// As many sessions as `sessions.max_sessions` allows exist already.
    case tooManySessions(limit: Int)
    /// Sessions are being created faster than `sessions.max_creations_per_second`.
    case creationRateExceeded(perSecond: Double)
    /// Sessions are not enabled on this coordinator, it is stopping, or its store cannot record,
    /// read or remove the session (which is then kept as it was).
    case unavailable(String)
    /// Another live coordinator owns the session (spread sessions): ask its gateway, at this URL.
    case ownedElsewhere(gateway: String)

    /// A stable machine-readable name for the case (the gateway's `error` field).
    package var code: String {
        switch self {
        case .unknownSession: "unknown-session"
        case .unknownRoot: "unknown-root"
        case .undecodableProps: "undecodable-props"
        case .tooManySessions: "too-many-sessions"
        case .creationRateExceeded: "too-many-creations"
        case .unavailable: "sessions-unavailable"
        case .ownedElsewhere: "session-elsewhere"
        }
    }

    package var description: String {
        switch self {
        case .unknownSession: "no such session (it ended, or the id is wrong): create a new one"
        case .unknownRoot(let name, let known): "no root workflow \"\(name)\" is registered (known: \(known.joined(separator: ", ")))"
        case .undecodableProps(let root, let reason): "the props do not decode as \(root)'s props: \(reason)"
        case .tooManySessions(let limit): "this coordinator holds its limit of \(limit) sessions: try again later"
        case .creationRateExceeded(let rate): "sessions are being created faster than \(rate == rate.rounded() ? String(Int(rate)) : String(rate)) per second: try again shortly"
        case .unavailable(let reason): reason
        case .ownedElsewhere(let gateway): "another coordinator serves this session: ask \(gateway)"
        }
    }
}
