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

    public struct State: Codable, Equatable, Sendable {
        /// The carrier's tracking number once booked.
        public var tracking: String?
    }

    /// Confirms that the parcel arrived (the event a client sends to `confirmDelivery`).
    public struct ConfirmDelivery: Codable, Sendable, Equatable {
        public init() {}
    }

    /// The order was delivered under `tracking`.
    public struct Delivered: Codable, Sendable, Equatable {
        public var orderID: Int
        public var tracking: String
    }

    public typealias Output = Delivered

    public func makeInitialState() -> State { State() }

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

    public func placeholderRendering() -> ShippingScreen {
        ShippingScreen(orderID: orderID, renderedBy: ProcessName.unavailable, tracking: nil, confirmDelivery: nil)
    }
}

/// The shipping pane.
public struct ShippingScreen: Codable, Sendable {
    public var orderID: Int
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
