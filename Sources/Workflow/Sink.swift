/// The handle a rendering carries to send events back into the workflow that rendered it.
///
/// A sink is `Sendable` and may be called from any thread or task: values are queued and the
/// runtime applies the resulting actions one at a time, in the order they were sent from a given
/// thread. A sink whose workflow has been torn down silently drops what it is sent: renderings
/// outlive the workflows that made them, and a late tap on a stale screen must not crash.
public struct Sink<Value: Sendable>: Sendable {
    private let onValue: @Sendable (Value) -> Void
    /// Names where the sink delivers, so it can be encoded and called back from another process:
    /// set for sinks made by a `RenderContext` and for sinks decoded from another process (which
    /// a middle process may pass on). `nil` for sinks made from a closure.
    let exportToken: (@Sendable () -> String)?

    /// A sink that hands each value to `onValue` (useful for tests and adapters).
    public init(_ onValue: @escaping @Sendable (Value) -> Void) {
        self.onValue = onValue
        self.exportToken = nil
    }

    init(exportToken: @escaping @Sendable () -> String, _ onValue: @escaping @Sendable (Value) -> Void) {
        self.onValue = onValue
        self.exportToken = exportToken
    }

    /// Sends `value`.
    public func send(_ value: Value) {
        onValue(value)
    }

    /// A sink of another type that converts its values into this sink's values.
    public func contraMap<NewValue: Sendable>(_ transform: @escaping @Sendable (NewValue) -> Value) -> Sink<NewValue> {
        let onValue = self.onValue
        return Sink<NewValue> { onValue(transform($0)) }
    }
}
