/// The handle a rendering carries to send events back into the workflow that rendered it.
///
/// A sink is `Sendable` and may be called from any thread or task: values are queued and the
/// runtime applies the resulting actions one at a time, in the order they were sent from a given
/// thread. A sink whose workflow has been torn down silently drops what it is sent: renderings
/// outlive the workflows that made them, and a late tap on a stale screen must not crash.
///
/// `send` reports whether the value was accepted: a sink of a remote child refuses values while
/// the child already has as many unacknowledged events as its runtime allows (back-pressure), so
/// a caller that floods learns it instead of the values being dropped silently.
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

    /// Sends `value`. Returns `false` only when the value was refused for back-pressure (a remote
    /// child with too many unacknowledged events); sinks of local workflows always accept.
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
