/// The handle a rendering carries to send events back into the workflow that rendered it.
///
/// A sink is `Sendable` and may be called from any thread or task: values are queued and the
/// runtime applies the resulting actions one at a time, in the order they were sent from a given
/// thread. A sink whose workflow has been torn down silently drops what it is sent: renderings
/// outlive the workflows that made them, and a late tap on a stale screen must not crash.
public struct Sink<Value: Sendable>: Sendable {
    private let onValue: @Sendable (Value) -> Void
    /// Where a sink made by a `RenderContext` delivers: lets the sink be encoded as a token and
    /// called back from another process. `nil` for sinks made from a closure.
    let route: SinkRoute?

    /// A sink that hands each value to `onValue` (useful for tests and adapters).
    public init(_ onValue: @escaping @Sendable (Value) -> Void) {
        self.onValue = onValue
        self.route = nil
    }

    init(route: SinkRoute, _ onValue: @escaping @Sendable (Value) -> Void) {
        self.onValue = onValue
        self.route = route
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
