import Workflow
import WorkflowRemote

/// Packs one order: a worker-side task (the simulated packing bench) runs while the order is
/// unpacked and labels the parcel, kept in the state; the packer then hands the parcel over to
/// shipping (an event), which is reported to the dashboard.
public struct PackingWorkflow: RemotableWorkflow, Equatable {
    /// The order to pack.
    public var order: OrderLine

    /// Creates the step.
    public init(order: OrderLine) {
        self.order = order
    }

    /// What survives a failover (snapshotted, restored on the next worker).
    public struct State: Codable, Equatable, Sendable {
        /// The parcel's label once packed.
        public var parcel: String?
    }

    /// Hands the packed parcel over to shipping (the event a client sends to `handOver`).
    public struct HandOver: Codable, Sendable, Equatable {
        /// The event carries nothing.
        public init() {}
    }

    /// The order is packed into `parcel` and handed over.
    public struct Packed: Codable, Sendable, Equatable {
        /// The order.
        public var orderID: Int
        /// The parcel's label.
        public var parcel: String
    }

    /// The hand-over goes to the dashboard.
    public typealias Output = Packed

    /// Starts with nothing done.
    public func makeInitialState() -> State { State() }

    /// Renders the pane (see the type's description).
    public func render(state: State, context: RenderContext<PackingWorkflow>) -> PackingScreen {
        guard let parcel = state.parcel else {
            PackingBench(order: order).rendered(in: context, key: "bench") { state, parcel in
                state.parcel = parcel
                return nil
            }
            return PackingScreen(orderID: order.id, renderedBy: ProcessName.current, parcel: nil, handOver: nil)
        }
        let orderID = order.id
        let handOver = context.makeSink(of: HandOver.self) { _ in
            AnyWorkflowAction<PackingWorkflow> { _, _ in Packed(orderID: orderID, parcel: parcel) }
        }
        return PackingScreen(orderID: order.id, renderedBy: ProcessName.current, parcel: parcel, handOver: handOver)
    }

    /// What the dashboard shows while no worker has rendered this step.
    public func placeholderRendering() -> PackingScreen {
        PackingScreen(orderID: order.id, renderedBy: ProcessName.unavailable, parcel: nil, handOver: nil)
    }
}

/// The packing pane.
public struct PackingScreen: Codable, Sendable {
    /// The order.
    public var orderID: Int
    /// The process that rendered this pane.
    public var renderedBy: String
    /// The parcel's label; `nil` while packing.
    public var parcel: String?
    /// Hands the parcel over to shipping (`{}`); present once packed.
    public var handOver: Sink<PackingWorkflow.HandOver>?
}

/// The simulated packing bench: takes a moment per item, then labels the parcel.
struct PackingBench: Worker, Equatable {
    typealias Rendering = Void
    typealias Output = String

    var order: OrderLine

    func run() async -> String {
        try? await Task.sleep(for: .milliseconds(20 * order.quantity))
        return "PCL-\(order.id)-\(order.sku)x\(order.quantity)"
    }
}
