/// The serial execution context a `WorkflowHost` runs its tree on.
///
/// Every action, render pass and lifecycle callback of a host runs as a job on its loop, one at a
/// time. A loop is a dedicated thread rather than a Swift actor on the cooperative pool so that a
/// render pass may *wait* (for example on a socket, for a remote child's rendering) without
/// blocking one of the pool's few threads: on a 2-core machine a blocked pool thread can deadlock
/// everything that awaits on it. Several hosts may share one loop.
public protocol RuntimeLoop: AnyObject, Sendable {
    /// Runs `job` on the loop, after every job submitted before it from the same thread.
    func execute(_ job: @escaping @Sendable () -> Void)

    /// Whether the calling thread is the loop's own thread.
    var inLoop: Bool { get }

    /// Called on the loop after a host's render pass and before the host publishes the
    /// rendering. A loop that carries work started by the pass (requests to remote children)
    /// waits here until that work completes and returns `true` if the tree must render again to
    /// reflect it, so only settled renderings are published. Plain loops have nothing to settle.
    func settleRenderPass() -> Bool

    /// Like `settleRenderPass()`, without holding the loop's thread while the pass's work is
    /// under way: returns `.settled(changed:)` when nothing is left to wait for, or `.pending`
    /// having arranged for `resume(changed)` to run later as a job on the loop. The host then
    /// publishes nothing and renders nothing until `resume` runs, while the loop serves other
    /// hosts' jobs (a coordinator's other sessions) meanwhile. The default settles in place.
    func settleRenderPass(resuming resume: @escaping @Sendable (Bool) -> Void) -> RenderPassSettling

    /// Runs `job` at once on the calling thread if the loop is idle (no job running or queued),
    /// and returns `true`; returns `false` without running it otherwise. While `job` runs the
    /// calling thread *is* the loop: `inLoop` is `true` there, and jobs submitted meanwhile wait
    /// until it returns, so loop jobs still never overlap and keep their order. Never waits.
    /// Lets a host apply a sink's value on the sender's thread
    /// (`RuntimeOptions.applySendsInline`) instead of paying two thread wake-ups. Loops that own
    /// thread-bound resources (sockets) keep the default, which never lends the loop.
    func runIfIdle(_ job: () -> Void) -> Bool
}

/// How a render pass's settle went (`RuntimeLoop.settleRenderPass(resuming:)`).
public enum RenderPassSettling: Sendable, Equatable {
    /// Settled now: `changed` if the tree must render again to reflect what the wait brought.
    case settled(changed: Bool)
    /// Still waiting: the loop calls the resume closure once the pass's work completes.
    case pending
}

extension RuntimeLoop {
    public func settleRenderPass() -> Bool { false }

    public func settleRenderPass(resuming resume: @escaping @Sendable (Bool) -> Void) -> RenderPassSettling {
        .settled(changed: settleRenderPass())
    }

    /// The default: the loop is never lent, every job runs on the loop's own thread.
    public func runIfIdle(_ job: () -> Void) -> Bool { false }

    /// Runs `body` on the loop and waits for its result: inline when already on the loop,
    /// otherwise by blocking the caller until the loop has run it. Loops never depend on the
    /// cooperative pool, so this wait cannot deadlock, but it does hold the calling thread.
    func runAndWait<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        if inLoop { return body() }
        let result = ResultSlot<T>()
        execute { result.fulfil(body()) }
        return result.wait()
    }

    /// Runs `body` on the loop and resumes the awaiting task with its result, without blocking
    /// any thread of the cooperative pool. (A coordinator starts each session's host through it,
    /// so neither its session directory nor a pool thread waits for the host's first pass.)
    package func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        if inLoop { return body() }
        return await withCheckedContinuation { continuation in
            execute { continuation.resume(returning: body()) }
        }
    }
}
