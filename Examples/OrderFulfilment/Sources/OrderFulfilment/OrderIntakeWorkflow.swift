import Workflow
import WorkflowRemote

/// Takes orders against the stock it keeps: an order the stock covers is reserved and reported
/// to the dashboard; any other is rejected with a reason shown on the pane.
///
/// Its state (the stock) is what makes it worth snapshotting: a worker that dies takes no stock
/// with it, the next worker starts from the last acknowledged snapshot.
public struct OrderIntakeWorkflow: RemotableWorkflow, Equatable {
    /// Stock per item when the shop opens.
    public var openingStock: [String: Int]

    /// Creates the intake.
    public init(openingStock: [String: Int]) {
        self.openingStock = openingStock
    }

    /// What survives a failover (snapshotted, restored on the next worker).
    public struct State: Codable, Equatable, Sendable {
        /// Items left, per item.
        public var stock: [String: Int]
        /// Why the last order was refused, if it was.
        public var lastRejection: String?
    }

    /// A customer's order (the event a client sends to `placeOrder`).
    public struct PlaceOrder: Codable, Sendable, Equatable {
        /// The catalogue item.
        public var sku: String
        /// How many.
        public var quantity: Int
    }

    /// An accepted order: the dashboard numbers it and sends it to packing.
    public struct OrderAccepted: Codable, Sendable, Equatable {
        /// The catalogue item.
        public var sku: String
        /// How many.
        public var quantity: Int
    }

    /// Accepted orders go to the dashboard.
    public typealias Output = OrderAccepted

    /// Opens with the opening stock.
    public func makeInitialState() -> State { State(stock: openingStock) }

    /// Renders the pane (see the type's description).
    public func render(state: State, context: RenderContext<OrderIntakeWorkflow>) -> IntakeScreen {
        let placeOrder = context.makeSink(of: PlaceOrder.self) { order in
            AnyWorkflowAction<OrderIntakeWorkflow> { state, _ in
                guard order.quantity > 0 else {
                    state.lastRejection = "quantity must be positive (got \(order.quantity))"
                    return nil
                }
                guard let available = state.stock[order.sku] else {
                    state.lastRejection = "no such item: \(order.sku)"
                    return nil
                }
                guard available >= order.quantity else {
                    state.lastRejection = "only \(available) \(order.sku) left"
                    return nil
                }
                state.stock[order.sku] = available - order.quantity
                state.lastRejection = nil
                return OrderAccepted(sku: order.sku, quantity: order.quantity)
            }
        }
        return IntakeScreen(
            renderedBy: ProcessName.current,
            stock: state.stock.keys.sorted().map { IntakeScreen.StockLine(sku: $0, available: state.stock[$0] ?? 0) },
            lastRejection: state.lastRejection, placeOrder: placeOrder)
    }

    /// What the dashboard shows while no worker has rendered this step.
    public func placeholderRendering() -> IntakeScreen {
        IntakeScreen(renderedBy: ProcessName.unavailable, stock: [], lastRejection: nil, placeOrder: Sink { _ in })
    }
}

/// The intake pane: the stock, the last rejection and where to send an order.
public struct IntakeScreen: Codable, Sendable {
    /// One item's stock.
    public struct StockLine: Codable, Sendable, Equatable {
        /// The catalogue item.
        public var sku: String
        /// How many are left.
        public var available: Int
    }

    /// The process that rendered this pane.
    public var renderedBy: String
    /// Stock per item, sorted by item.
    public var stock: [StockLine]
    /// Why the last order was refused, if it was.
    public var lastRejection: String?
    /// Places an order (`{"sku": "widget", "quantity": 2}`).
    public var placeOrder: Sink<OrderIntakeWorkflow.PlaceOrder>
}
