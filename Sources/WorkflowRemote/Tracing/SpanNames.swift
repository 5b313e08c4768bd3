/// The names and attribute keys of the spans this project makes (docs/OPERATIONS.md,
/// "Tracing"): short and stable, since operators' dashboards and queries name them.
package enum SpanNames {
    /// The gateway's handling of `POST /api/events/{token}` (server span).
    package static let gatewayEvent = "gateway.event"
    /// Waiting for an accepted event to be durable in the coordinator's store.
    package static let commit = "workflow.commit"
    /// A parent sending an event to the worker hosting its remote child (producer span).
    package static let sendEvent = "workflow.event.send"
    /// A worker applying one event: its sink's action (consumer span).
    package static let applyEvent = "workflow.event.apply"
    /// A worker rendering a child after the events of a slice.
    package static let render = "workflow.render"
    /// A worker sending a child's flush (outputs, rendering, acknowledgement) to its parent.
    package static let flush = "workflow.flush"
    /// A parent applying a worker's flush to its proxy.
    package static let applyFlush = "workflow.flush.apply"
    /// The gateway writing the first rendering frame after a traced flush to a WebSocket client.
    package static let push = "gateway.push"

    /// The sink token an event was sent to.
    package static let tokenAttribute = "workflow.event.token"
    /// The remote child's path from the root.
    package static let pathAttribute = "workflow.child.path"
    /// The worker a span's message went to or came from.
    package static let workerAttribute = "workflow.worker"
    /// The event's sequence number for its child.
    package static let sequenceAttribute = "workflow.event.sequence"
}
