/// One order as the panes see it: what to pack and ship.
public struct OrderLine: Codable, Sendable, Equatable {
    /// The dashboard's order number.
    public var id: Int
    /// The catalogue item.
    public var sku: String
    /// How many.
    public var quantity: Int

    /// Creates a line.
    public init(id: Int, sku: String, quantity: Int) {
        self.id = id
        self.sku = sku
        self.quantity = quantity
    }
}
