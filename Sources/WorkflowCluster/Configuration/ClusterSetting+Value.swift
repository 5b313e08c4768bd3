extension ClusterSetting {
    /// A setting's value, once read and checked.
    package enum Value: Sendable, Equatable {
        case text(String)
        case integer(Int)
        case boolean(Bool)
        case list([String])
        case address(GatewayAddress?)
        case origins([GatewayOrigin])

        /// The value as the rules compare it and errors quote it.
        package var words: String {
            switch self {
            case .text(let text): "\"\(text)\""
            case .integer(let value): "\(value)"
            case .boolean(let value): "\(value)"
            case .list(let items): items.joined(separator: ", ")
            case .address(let address): address.map { "\"\($0)\"" } ?? "\"off\""
            case .origins(let origins): origins.map(\.description).joined(separator: ", ")
            }
        }

        /// Whether the value turns its feature off (`gateway.listen` `off`, `store.kind` `none`).
        var isOff: Bool {
            switch self {
            case .address(nil), .text("none"), .boolean(false): true
            default: false
            }
        }

        /// The value as rules compare it with words (`sqlite`, `true`, `off`).
        package var raw: String {
            switch self {
            case .text(let text): text
            case .integer(let value): "\(value)"
            case .boolean(let value): "\(value)"
            case .list(let items): items.joined(separator: ",")
            case .address(let address): address?.description ?? "off"
            case .origins(let origins): origins.map(\.description).joined(separator: ",")
            }
        }

        var list: [String] {
            if case .list(let items) = self { return items }
            return []
        }

        var address: GatewayAddress? {
            if case .address(let address) = self { return address }
            return nil
        }

        var text: String {
            if case .text(let text) = self { return text }
            return ""
        }

        var integer: Int {
            if case .integer(let value) = self { return value }
            return 0
        }

        var milliseconds: Duration { .milliseconds(integer) }

        var boolean: Bool {
            if case .boolean(let value) = self { return value }
            return false
        }
    }
}
