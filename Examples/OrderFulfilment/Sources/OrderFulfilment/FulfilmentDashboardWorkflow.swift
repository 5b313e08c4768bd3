import Workflow
import WorkflowRemote

/// The order-fulfilment dashboard, the cluster's root: it numbers the orders the intake accepts
/// and moves each through packing and shipping, each step a remote child placed by the
/// coordinator's placement table (`.configured`).
///
/// Its state (the orders and their stages) is snapshotted by the coordinator
/// (`--snapshot-file`), so a restarted coordinator (`--restore`) carries on where it stopped.
public struct FulfilmentDashboardWorkflow: Workflow, Sendable {
    /// Stock per item when the shop opens.
    public var openingStock: [String: Int]
    /// Where the remote steps run (`.configured` on a cluster; `.local` runs all in one process).
    public var placement: RemotePlacement

    /// Creates the dashboard.
    public init(openingStock: [String: Int] = ["gadget": 5, "gizmo": 3, "widget": 10], placement: RemotePlacement = .configured) {
        self.openingStock = openingStock
        self.placement = placement
    }

    /// Where an order is.
    public enum Stage: String, Codable, Sendable {
        case packing, shipping, delivered
    }

    /// One order and its progress.
    public struct Order: Codable, Equatable, Sendable {
        /// What was ordered.
        public var line: OrderLine
        /// Where it is.
        public var stage: Stage
        /// The parcel's label once packed.
        public var parcel: String?
        /// The tracking number once delivered.
        public var tracking: String?
    }

    /// What survives a failover (snapshotted, restored on the next worker).
    public struct State: Codable, Equatable, Sendable {
        /// Every order taken, in order.
        public var orders: [Order] = []
        /// The next order's number.
        public var nextOrderID = 1
    }

    /// Starts with nothing done.
    public func makeInitialState() -> State { State() }

    /// Renders the intake and, per order, the pane of its current step.
    public func render(state: State, context: RenderContext<FulfilmentDashboardWorkflow>) -> DashboardScreen {
        let intake = OrderIntakeWorkflow(openingStock: openingStock)
            .remote(on: placement)
            .rendered(in: context, key: "intake") { state, accepted in
                state.orders.append(
                    Order(line: OrderLine(id: state.nextOrderID, sku: accepted.sku, quantity: accepted.quantity), stage: .packing))
                state.nextOrderID += 1
                return nil
            }
        var rows: [DashboardScreen.Row] = []
        for order in state.orders {
            var row = DashboardScreen.Row(order: order.line, stage: order.stage, tracking: order.tracking)
            switch order.stage {
            case .packing:
                row.packing = PackingWorkflow(order: order.line)
                    .remote(on: placement)
                    .rendered(in: context, key: "\(order.line.id)") { state, packed in
                        // Idempotent: a packing step restarted after a failover may report again.
                        guard let index = state.orders.firstIndex(where: { $0.line.id == packed.orderID }),
                            state.orders[index].stage == .packing
                        else { return nil }
                        state.orders[index].stage = .shipping
                        state.orders[index].parcel = packed.parcel
                        return nil
                    }
            case .shipping:
                row.shipping = ShippingWorkflow(orderID: order.line.id, parcel: order.parcel ?? "")
                    .remote(on: placement)
                    .rendered(in: context, key: "\(order.line.id)") { state, delivered in
                        guard let index = state.orders.firstIndex(where: { $0.line.id == delivered.orderID }),
                            state.orders[index].stage == .shipping
                        else { return nil }
                        state.orders[index].stage = .delivered
                        state.orders[index].tracking = delivered.tracking
                        return nil
                    }
            case .delivered:
                break
            }
            rows.append(row)
        }
        return DashboardScreen(intake: intake, orders: rows)
    }
}

/// The dashboard: the intake pane and one row per order, with the pane of its current step.
public struct DashboardScreen: Encodable, Sendable {
    /// One order's row.
    public struct Row: Encodable, Sendable {
        /// The order.
        public var order: OrderLine
        /// Its stage.
        public var stage: FulfilmentDashboardWorkflow.Stage
        /// The tracking number once delivered.
        public var tracking: String?
        /// The packing pane while packing.
        public var packing: PackingScreen?
        /// The shipping pane while shipping.
        public var shipping: ShippingScreen?
    }

    /// The intake pane.
    public var intake: IntakeScreen
    /// One row per order.
    public var orders: [Row]
}
