/// What one `makeSink(of:onEvent:)` call of one render pass declared: the node it feeds and the
/// closure that turns its events into actions.
///
/// A sink carries its own handler, so a sink from an earlier render pass applies the action *its*
/// closure makes (against the node's current state), never the handler a later pass declared at
/// the same position: after a list drops row a, the stale button of row b still selects b. This
/// is workflow-swift's rule (an old sink builds its action from its own render's closure and
/// forwards it to the node's live sink).
///
/// `@unchecked Sendable` is sound because the closure (not `Sendable`: it may capture whatever
/// the render saw) is only ever called by `WorkflowNode.handleEvent`, which runs inside the
/// host's drain, in the host's loop's role (the loop's thread, or a sender's thread the idle
/// loop is lent to with `RuntimeOptions.applySendsInline`) and under the host's lock. Other
/// threads only move the reference around (a sink is `Sendable`) and read the immutable routing
/// fields. The same idea
/// as SwiftNIO's `NIOLoopBound`, without a per-call check: the only call site is loop-confined.
///
/// The base class is neither generic nor a protocol so that a sink's closures capture a single
/// plain reference (no context allocation) and the mailbox can carry it as is.
class AnySinkHandler: @unchecked Sendable {
    /// The node that declared the sink; events for a node no longer registered are dropped.
    let node: UInt64
    /// The host's mailbox, where `send` queues the event.
    let mailbox: ActionMailbox
    /// The host's incarnation and the render pass that made the sink: with `node` and `slot`
    /// they name this very handler when the sink is encoded for another process.
    let incarnation: UInt64
    let pass: UInt64
    /// The sink's position among the node's sinks of that pass (used across a failover only).
    let slot: Int

    init(node: UInt64, mailbox: ActionMailbox, incarnation: UInt64, pass: UInt64, slot: Int) {
        self.node = node
        self.mailbox = mailbox
        self.incarnation = incarnation
        self.pass = pass
        self.slot = slot
    }

    /// The token naming this handler across processes (see `SinkToken`).
    func exportToken() -> String {
        fatalError("AnySinkHandler is abstract")
    }
}

/// A handler of a node of workflow type `W`: what the node calls to turn an event into an action.
class SinkHandler<W: Workflow>: AnySinkHandler, @unchecked Sendable {
    /// The action for `value`; only called on the host's loop. `nil` when `value` is not this
    /// sink's event type (never, for deliveries the runtime made).
    func action(for value: any Sendable) -> AnyWorkflowAction<W>? {
        fatalError("SinkHandler is abstract")
    }
}

/// A handler for events of type `Event` mapped to actions of type `Action`. Generic over both
/// so the closure is stored as it was passed: one allocation per sink, no wrapping closure.
final class TypedSinkHandler<W: Workflow, Event: Sendable, Action: WorkflowAction>: SinkHandler<W>, @unchecked Sendable
where Action.WorkflowType == W {
    private let onEvent: (Event) -> Action

    init(node: UInt64, mailbox: ActionMailbox, incarnation: UInt64, pass: UInt64, slot: Int, onEvent: @escaping (Event) -> Action) {
        self.onEvent = onEvent
        super.init(node: node, mailbox: mailbox, incarnation: incarnation, pass: pass, slot: slot)
    }

    override func action(for value: any Sendable) -> AnyWorkflowAction<W>? {
        guard let event = exactEvent(value) ?? (value as? Event) else { return nil }
        return AnyWorkflowAction(onEvent(event))
    }

    /// `value` when it holds exactly an `Event` (what a sink of this handler delivers): a
    /// comparison of types and a copy. `as?` alone is a dynamic cast per event (costly in this
    /// unspecialised code); it still handles any other value.
    private func exactEvent(_ value: any Sendable) -> Event? {
        func open<Value>(_ value: Value) -> Event? {
            guard Value.self == Event.self else { return nil }
            return reinterpret(value, as: Event.self)
        }
        return open(value)
    }

    override func exportToken() -> String {
        SinkToken.make(node: node, slot: slot, event: Event.self, incarnation: incarnation, pass: pass)
    }
}

