import Workflow
import WorkflowRemote

/// Ships one parcel: a worker-side task books the carrier and gets a tracking number; then the
/// pane offers to confirm the delivery, which it reports to the dashboard.
public struct ShippingWorkflow: RemotableWorkflow, Equatable {
    /// The order shipped.
    public var orderID: Int
    /// The parcel's label.
    public var parcel: String

    /// Creates the step.
    public init(orderID: Int, parcel: String) {
        self.orderID = orderID
        self.parcel = parcel
    }

    /// What survives a failover (snapshotted, restored on the next worker).
    public struct State: Codable, Equatable, Sendable {
        /// The carrier's tracking number once booked.
        public var tracking: String?
    }

    /// Confirms that the parcel arrived (the event a client sends to `confirmDelivery`).
    public struct ConfirmDelivery: Codable, Sendable, Equatable {
        /// The event carries nothing.
        public init() {}
    }

    /// The order was delivered under `tracking`.
    public struct Delivered: Codable, Sendable, Equatable {
        /// The order.
        public var orderID: Int
        /// The carrier's tracking number.
        public var tracking: String
    }

    /// The delivery goes to the dashboard.
    public typealias Output = Delivered

    /// Starts with nothing done.
    public func makeInitialState() -> State { State() }

    /// Renders the pane (see the type's description).
    public func render(state: State, context: RenderContext<ShippingWorkflow>) -> ShippingScreen {
        guard let tracking = state.tracking else {
            CarrierBooking(orderID: orderID, parcel: parcel).rendered(in: context, key: "carrier") { state, tracking in
                state.tracking = tracking
                return nil
            }
            return ShippingScreen(orderID: orderID, renderedBy: ProcessName.current, tracking: nil, confirmDelivery: nil)
        }
        let orderID = self.orderID
        let confirm = context.makeSink(of: ConfirmDelivery.self) { _ in
            AnyWorkflowAction<ShippingWorkflow> { _, _ in Delivered(orderID: orderID, tracking: tracking) }
        }
        return ShippingScreen(orderID: orderID, renderedBy: ProcessName.current, tracking: tracking, confirmDelivery: confirm)
    }

    /// What the dashboard shows while no worker has rendered this step.
    public func placeholderRendering() -> ShippingScreen {
        ShippingScreen(orderID: orderID, renderedBy: ProcessName.unavailable, tracking: nil, confirmDelivery: nil)
    }
}

/// The shipping pane.
public struct ShippingScreen: Codable, Sendable {
    /// The order.
    public var orderID: Int
    /// The process that rendered this pane.
    public var renderedBy: String
    /// The tracking number; `nil` while the carrier is being booked.
    public var tracking: String?
    /// Confirms delivery (`{}`); present once the parcel is on its way.
    public var confirmDelivery: Sink<ShippingWorkflow.ConfirmDelivery>?
}

/// The simulated carrier: books a pickup and answers with a tracking number.
struct CarrierBooking: Worker, Equatable {
    typealias Rendering = Void
    typealias Output = String

    var orderID: Int
    var parcel: String

    func run() async -> String {
        try? await Task.sleep(for: .milliseconds(30))
        return "TRK-\(orderID)-\(parcel.count)"
    }
}
