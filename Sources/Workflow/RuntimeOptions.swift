/// Switches that trade strict workflow semantics for throughput.
public struct RuntimeOptions: Sendable, Equatable {
    /// Skip the render pass after an action that left every state unchanged (compared with `==`
    /// for `Equatable` states; other states always count as changed). Outputs are still emitted.
    public var renderOnlyIfStateChanged: Bool

    /// When several actions are already queued, apply them all before rendering once, so a burst
    /// of events costs one render pass instead of one each.
    public var conflateStaleRenderings: Bool

    /// When a sink is sent a value (or the root new props) while the host's loop is idle, apply it
    /// and render right away on the sending thread, instead of queueing a job for the loop's thread
    /// and waking it. One awaited tap then costs no thread hop at all (each hop is a thread
    /// wake-up, most of a queued tap's latency); `send` returns once the action is applied and the
    /// rendering and outputs are published, as workflow-swift's `send` does on its main thread.
    /// Only loops that can lend themselves do it (`ThreadLoop`; see `RuntimeLoop.runIfIdle`);
    /// elsewhere (a `RemoteRuntime`, whose thread owns its sockets), and whenever the loop is busy
    /// or the sender is the loop itself, the value is queued as usual.
    ///
    /// On by default unless `conflateStaleRenderings` is (a burst from one thread would otherwise
    /// render once per value rather than be conflated). What it asks of a sender is what
    /// workflow-swift's synchronous `send` asks: the sender's thread does the render's work (keep
    /// renders cheap, or turn this off when senders are latency-sensitive themselves), and a
    /// sender must not hold a lock that the tree's actions, observers or side effects take.
    /// Ordering is unchanged: values sent from one thread are applied in order, each once, and
    /// renders never overlap.
    public var applySendsInline: Bool

    /// The optimisations off: one render pass per action, like workflow-swift, and a send applied
    /// on the sender's thread when the loop is idle (`applySendsInline`).
    public static let `default` = RuntimeOptions()

    /// Both optimisations on, so sends are queued and conflated (`applySendsInline` off).
    public static let optimized = RuntimeOptions(renderOnlyIfStateChanged: true, conflateStaleRenderings: true)

    /// `applySendsInline` defaults to the opposite of `conflateStaleRenderings` (`nil`).
    public init(renderOnlyIfStateChanged: Bool = false, conflateStaleRenderings: Bool = false, applySendsInline: Bool? = nil) {
        self.renderOnlyIfStateChanged = renderOnlyIfStateChanged
        self.conflateStaleRenderings = conflateStaleRenderings
        self.applySendsInline = applySendsInline ?? !conflateStaleRenderings
    }
}
