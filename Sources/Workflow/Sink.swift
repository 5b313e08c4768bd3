/// The handle a rendering carries to send events back into the workflow that rendered it.
///
/// A sink is `Sendable` and may be called from any thread or task: values are queued and the
/// runtime applies the resulting actions one at a time, in the order they were sent from a given
/// thread.
///
/// **Which action a sink applies.** A sink made by `makeSink(of:onEvent:)` keeps the closure of
/// the render pass that made it. A sink from an earlier rendering therefore applies the action
/// *its own* closure makes, against the workflow's current state, and never the handler a later
/// pass declared at the same position: when a list drops row a, a tap on row b of the screen
/// still shown acts on b, not on c (workflow-swift's rule). Closures should therefore capture what
/// identifies their target (a row's id, not its index) and read the rest from the state the action
/// is applied to. The same holds across processes: an encoded sink names its own render pass's
/// handler (see `SinkCoding.swift`).
///
/// A sink whose workflow has been torn down silently drops what it is sent: renderings outlive
/// the workflows that made them, and a late tap on a stale screen must not crash. So does a sink
/// the workflow stopped declaring (workflow-swift's rule): once a render pass makes no sink of the
/// same event and action types, sinks of that kind from earlier passes drop what they are sent,
/// even if a later pass declares the kind again; a button the workflow no longer offers must not act.
///
/// `send` reports whether the value was accepted: a sink of a remote child refuses values while
/// the child already has as many unacknowledged events as its runtime allows (back-pressure), and
/// `Sink.inert` refuses everything, so a caller learns it instead of the values being dropped
/// silently.
public struct Sink<Value: Sendable>: Sendable {
    private let onValue: @Sendable (Value) -> Bool
    /// Names where the sink delivers, so it can be encoded and called back from another process:
    /// set for sinks made by a `RenderContext` and for sinks decoded from another process (which
    /// a middle process may pass on). `nil` for sinks made from a closure.
    let exportToken: (@Sendable () -> String)?

    /// A sink that hands each value to `onValue` (useful for tests and adapters).
    public init(_ onValue: @escaping @Sendable (Value) -> Void) {
        self.onValue = { value in
            onValue(value)
            return true
        }
        self.exportToken = nil
    }

    init(exportToken: @escaping @Sendable () -> String, accepting onValue: @escaping @Sendable (Value) -> Bool) {
        self.init(exportToken: .some(exportToken), accepting: onValue)
    }

    /// A sink that queues its values for `handler`. Both closures capture only the handler, so
    /// making a sink in a render pass costs the handler's allocation and nothing more.
    init(handler: AnySinkHandler) {
        self.init(
            exportToken: { handler.exportToken() },
            accepting: { value in
                handler.mailbox.send(.event(handler: handler, value: value))
                return true
            })
    }

    /// A sink that accepts nothing: `send` returns `false` and the value goes nowhere.
    ///
    /// For renderings that stand in for a workflow that is not running, above all a remote
    /// child's `placeholderRendering()`: a button on a placeholder screen must not claim that its
    /// tap was taken. Unlike `Sink { _ in }`, it is `Codable` without a runtime (it encodes as a
    /// reserved token that decodes to an inert sink again), so a worker whose own remote child is
    /// not placed yet can still send its rendering, placeholder included, to its parent.
    public static var inert: Sink<Value> {
        Sink(exportToken: { SinkToken.inert }, accepting: { _ in false })
    }

    /// Sends `value`. Returns `false` when the value was refused: for back-pressure (a remote child
    /// with too many unacknowledged events), or because the sink is `Sink.inert`. Sinks of local
    /// workflows always accept (a torn-down workflow's sink accepts and drops, see above).
    @discardableResult
    public func send(_ value: Value) -> Bool {
        onValue(value)
    }

    /// A sink of another type that converts its values into this sink's values.
    public func contraMap<NewValue: Sendable>(_ transform: @escaping @Sendable (NewValue) -> Value) -> Sink<NewValue> {
        let onValue = self.onValue
        return Sink<NewValue>(exportToken: nil, accepting: { onValue(transform($0)) })
    }

    private init(exportToken: (@Sendable () -> String)?, accepting onValue: @escaping @Sendable (Value) -> Bool) {
        self.onValue = onValue
        self.exportToken = exportToken
    }
}
