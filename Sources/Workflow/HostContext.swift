/// What every node of one host shares: the mailbox its sinks feed, the options, the observers,
/// and the registry that routes sink events to live nodes.
///
/// Confined to the host's loop (reached only under the host's lock), hence not `Sendable`.
final class HostContext {
    let mailbox: ActionMailbox
    let options: RuntimeOptions
    let observers: [any WorkflowObserver]?
    let loop: any RuntimeLoop
    private var nodes: [UInt64: any AnyWorkflowNode] = [:]
    private var nextNodeID: UInt64 = 1
    /// Set when an action changed state (or may have), cleared by the render pass.
    var needsRender = false

    init(mailbox: ActionMailbox, options: RuntimeOptions, observers: [any WorkflowObserver], loop: any RuntimeLoop) {
        self.mailbox = mailbox
        self.options = options
        self.observers = observers.isEmpty ? nil : observers
        self.loop = loop
    }

    func register(_ node: any AnyWorkflowNode) -> UInt64 {
        let id = nextNodeID
        nextNodeID += 1
        nodes[id] = node
        return id
    }

    func unregister(_ id: UInt64) {
        nodes[id] = nil
    }

    /// Routes a sink event to its node; events for torn-down nodes are dropped.
    func deliver(node id: UInt64, handler: SinkHandlerKey, value: any Sendable) {
        nodes[id]?.handleEvent(handler: handler, value: value)
    }

    var liveNodeCount: Int { nodes.count }
}

/// The type-erased face of a `WorkflowNode`, for routing and teardown.
protocol AnyWorkflowNode: AnyObject {
    func handleEvent(handler: SinkHandlerKey, value: any Sendable)
}
