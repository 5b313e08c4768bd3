/// Switches that trade strict workflow semantics for throughput.
public struct RuntimeOptions: Sendable, Equatable {
    /// Skip the render pass after an action that left every state unchanged (compared with `==`
    /// for `Equatable` states; other states always count as changed). Outputs are still emitted.
    public var renderOnlyIfStateChanged: Bool

    /// When several actions are already queued, apply them all before rendering once, so a burst
    /// of events costs one render pass instead of one each.
    public var conflateStaleRenderings: Bool

    /// Both switches off: one render pass per action, like workflow-swift.
    public static let `default` = RuntimeOptions()

    /// Both switches on.
    public static let optimized = RuntimeOptions(renderOnlyIfStateChanged: true, conflateStaleRenderings: true)

    public init(renderOnlyIfStateChanged: Bool = false, conflateStaleRenderings: Bool = false) {
        self.renderOnlyIfStateChanged = renderOnlyIfStateChanged
        self.conflateStaleRenderings = conflateStaleRenderings
    }
}
