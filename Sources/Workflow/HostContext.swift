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
    /// Counts the host's render passes; with `incarnation` it stamps the sinks each pass makes,
    /// so an encoded sink names its own pass's handler rather than a position.
    var renderPass: UInt64 = 0
    /// Distinguishes this host from every other host of the same tree (in another process, or
    /// restarted after a failover), so stamps of different hosts never collide.
    let incarnation = UInt64.random(in: 1...UInt64.max)

    init(mailbox: ActionMailbox, options: RuntimeOptions, observers: [any WorkflowObserver], loop: any RuntimeLoop) {
        self.mailbox = mailbox
        self.options = options
        self.observers = observers.isEmpty ? nil : observers
        self.loop = loop
    }

    /// A new node's number, before the node exists (so the node can keep it in a `let`).
    func makeNodeID() -> UInt64 {
        defer { nextNodeID += 1 }
        return nextNodeID
    }

    /// Routes the events of sinks that name `id` to `node` from now on.
    func register(_ node: any AnyWorkflowNode, id: UInt64) {
        nodes[id] = node
    }

    func unregister(_ id: UInt64) {
        nodes[id] = nil
    }

    /// Routes a sink event to the node its handler names; events for torn-down nodes are dropped.
    func deliver(handler: AnySinkHandler, value: any Sendable) {
        nodes[handler.node]?.handleEvent(handler: handler, value: value)
    }

    var liveNodeCount: Int { nodes.count }
}

/// The type-erased face of a `WorkflowNode`, for routing and teardown.
protocol AnyWorkflowNode: AnyObject {
    func handleEvent(handler: AnySinkHandler, value: any Sendable)
}
