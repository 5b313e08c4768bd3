import Workflow

/// The loop one session's root host runs on: the coordinator's `RemoteRuntime`, together with
/// the session's name for the remote children its tree renders.
///
/// A coordinator that hosts a tree per client runs every session's host on one runtime. Their
/// trees have the same shape, so their remote children would have the same node paths, and a
/// runtime knows a remote child by its path (its placement, its status, its worker's copy). A
/// proxy rendered on a session's loop is known by `pathPrefix` followed by its path in the
/// session's tree, so each session's children are children of their own: placed on their own
/// (hashed placement spreads them over a pool), reported on their own, stopped with their session.
/// Placement rules still match the path *within* the session's tree, so one configuration serves
/// the shared root and every session alike.
///
/// A session's pass that waits for its remote children's renderings does not hold the runtime's
/// thread (`settleRenderPass(resuming:)`): the loop serves the other sessions meanwhile, and the
/// host publishes once the renderings came. So a host on this loop may publish its first
/// rendering after its start returns: wait for it (`WorkflowHost.renderings`) before reading
/// `WorkflowHost.rendering`.
public final class SessionLoop: RuntimeLoop {
    /// The runtime every call goes to.
    public let runtime: RemoteRuntime
    /// What the runtime's paths of this session's remote children start with (`/~SCOPE`).
    public let pathPrefix: String

    /// A loop on `runtime` for the session `scope` (letters, digits, `-` and `_`).
    public init(runtime: RemoteRuntime, scope: String) {
        self.runtime = runtime
        self.pathPrefix = Self.pathPrefix(scope: scope)
    }

    /// The prefix of the runtime's paths for the session `scope`.
    public static func pathPrefix(scope: String) -> String { "/~" + scope }

    /// The tree a runtime path belongs to: its session's prefix (`/~SCOPE`), or `""` for a path
    /// outside every session (the shared root's). `RemoteRuntime.inspect(tree:)` takes it.
    public static func treePrefix(of path: String) -> String {
        // The bytes in place, not characters: asked for every remote request and status (by
        // `Character`, a session's long path cost ~13 k instructions each; through the
        // `UTF8View`'s indices, ~2 k).
        var path = path
        return path.withUTF8 { bytes in
            guard bytes.count >= 2, bytes[0] == UInt8(ascii: "/"), bytes[1] == UInt8(ascii: "~") else { return "" }
            var end = 2
            while end < bytes.count, bytes[end] != UInt8(ascii: "/") { end += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[..<end]), as: UTF8.self)
        }
    }

    public func execute(_ job: @escaping @Sendable () -> Void) { runtime.execute(job) }

    public var inLoop: Bool { runtime.inLoop }

    public func settleRenderPass() -> Bool { runtime.settleRenderPass() }

    public func settleRenderPass(resuming resume: @escaping @Sendable (Bool) -> Void) -> RenderPassSettling {
        runtime.settleRenderPass(tree: pathPrefix, resuming: resume)
    }

    public func runIfIdle(_ job: () -> Void) -> Bool { runtime.runIfIdle(job) }

    /// Calls `body` on the loop once the remote children of this session's tree have
    /// acknowledged every event they were sent before this call (at once if none is
    /// outstanding), and at the latest after `within`; call it on the loop.
    ///
    /// For a session committing its events: a checkpoint captured then holds the events and the
    /// rendering their answers bring, so one commit makes both durable where two did (the
    /// event's, then the rendering's). A child whose worker is slow or gone costs the wait.
    package func whenEventsAcknowledged(within: Duration, _ body: @escaping @Sendable () -> Void) {
        runtime.parentRole.whenEventsAcknowledged(tree: pathPrefix, within: within, body)
    }
}
