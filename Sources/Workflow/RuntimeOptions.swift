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
    /// rendering and outputs are published. Only loops that can lend themselves do it
    /// (`ThreadLoop`; see `RuntimeLoop.runIfIdle`); elsewhere, and whenever the loop is busy, the
    /// value is queued as usual. Off by default: the sender's thread then does the render's work
    /// (keep renders cheap or leave this off when senders are latency-sensitive themselves), a
    /// burst from one thread renders once per value rather than being conflated, and a sender must
    /// not hold a lock that the tree's actions, observers or side effects take. Ordering is
    /// unchanged: values sent from one thread are applied in order, each once, and renders never
    /// overlap.
    public var applySendsInline: Bool

    /// Both switches off: one render pass per action, like workflow-swift.
    public static let `default` = RuntimeOptions()

    /// Both switches on (`applySendsInline` stays off).
    public static let optimized = RuntimeOptions(renderOnlyIfStateChanged: true, conflateStaleRenderings: true)

    public init(renderOnlyIfStateChanged: Bool = false, conflateStaleRenderings: Bool = false, applySendsInline: Bool = false) {
        self.renderOnlyIfStateChanged = renderOnlyIfStateChanged
        self.conflateStaleRenderings = conflateStaleRenderings
        self.applySendsInline = applySendsInline
    }
}
