/// Why a parent refused this process's HELLO, as the worker learns it.
///
/// A refused worker hosts nothing and keeps asking again with back-off (the reason may go away:
/// a worker whose name it wanted may die). A daemon may prefer to exit instead, so an operator
/// or supervisor sees the conflict rather than a worker that silently never joins
/// (`RemoteRuntime.refusal()`).
public enum JoinRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another worker of this name is connected and alive (heartbeating). Names are unique in a
    /// cluster: two live workers of one name would otherwise take each other's place over and
    /// over, restarting their children each time.
    case nameTaken(name: String)
    /// Any other refusal (protocol version, an over-long name), in the parent's words.
    case refused(String)

    public var description: String {
        switch self {
        case .nameTaken(let name): "a live worker named \(name) is already connected to the parent"
        case .refused(let reason): "the parent refused this worker: \(reason)"
        }
    }
}
