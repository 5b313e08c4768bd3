/// A node's bookkeeping of its render passes, the part of its mutable state that is not generic:
/// grouped in one value, outside the generic node, so that each step of a pass is one mutating
/// call (one exclusivity-checked access to the node's property) and needs no metadata looked up.
struct NodePasses {
    /// How many sinks the current pass made so far: each sink's slot, for its export token.
    private var sinkCount = 0
    /// The host's render pass in which this node last rendered: the sinks it made then are current.
    private var renderedPass: UInt64 = 0
    /// The kinds of sink the latest pass declared, and since which pass each has been declared
    /// without a gap. A sink's kind is its handler's class (event type plus action type, as
    /// workflow-swift keys its sinks by action type); an older sink still applies its action only
    /// while its kind has been declared by every pass since its own. See `isCurrent`.
    private var declaredSinks = DeclaredSinkKinds()

    /// Starts the node's pass in the host's pass `pass`.
    mutating func begin(_ pass: UInt64) {
        sinkCount = 0
        renderedPass = pass
        declaredSinks.beginPass()
    }

    /// The slot of the pass's next sink and the pass's number.
    mutating func nextSink() -> (slot: Int, pass: UInt64) {
        defer { sinkCount += 1 }
        return (sinkCount, renderedPass)
    }

    /// Records that the pass declared a sink of `kind`.
    mutating func declare(_ kind: ObjectIdentifier) {
        declaredSinks.declare(kind, in: renderedPass)
    }

    /// Whether `handler`'s sink still applies its action: made by the latest pass, or its kind
    /// declared by the latest pass and every pass since its own (as workflow-swift drops a sink
    /// the workflow stopped declaring).
    func isCurrent(_ handler: AnySinkHandler) -> Bool {
        handler.pass == renderedPass || declaredSinks.isCurrent(ObjectIdentifier(type(of: handler)), madeIn: handler.pass)
    }
}
