import Foundation

/// A coordinator JSON line carrying a rendering of the dashboard, as a client reads it: panes,
/// and sinks as token strings.
struct DashboardLine: Decodable {
    struct Dashboard: Decodable {
        var intake: Intake
        var orders: [Row]
    }
    struct Intake: Decodable {
        struct Stock: Decodable {
            var sku: String
            var available: Int
        }
        var renderedBy: String
        var stock: [Stock]
        var lastRejection: String?
        var placeOrder: String?
    }
    struct Row: Decodable {
        struct Line: Decodable {
            var id: Int
            var sku: String
            var quantity: Int
        }
        var order: Line
        var stage: String
        var tracking: String?
        var packing: Packing?
        var shipping: Shipping?
    }
    struct Packing: Decodable {
        var renderedBy: String
        var parcel: String?
        var handOver: String?
    }
    struct Shipping: Decodable {
        var renderedBy: String
        var tracking: String?
        var confirmDelivery: String?
    }

    var event: String
    var root: String
    var rendering: Dashboard

    /// The dashboard on `line`, if it is a rendering line.
    static func parse(_ line: String) -> Dashboard? {
        guard let parsed = try? JSONDecoder().decode(DashboardLine.self, from: Data(line.utf8)), parsed.event == "rendering" else {
            return nil
        }
        return parsed.rendering
    }

    /// A predicate for rendering lines whose dashboard satisfies `predicate`.
    static func matching(_ predicate: @escaping @Sendable (Dashboard) -> Bool) -> @Sendable (String) -> Bool {
        { line in parse(line).map(predicate) ?? false }
    }
}

/// A coordinator JSON line answering an event line (`--events-from-stdin`).
struct EventAnswer: Decodable {
    var event: String
    var token: String?
    var result: String

    /// A predicate for the answer about `token`.
    static func about(_ token: String) -> @Sendable (String) -> Bool {
        { line in
            guard let answer = try? JSONDecoder().decode(EventAnswer.self, from: Data(line.utf8)) else { return false }
            return answer.event == "event" && answer.token == token
        }
    }

    static func result(of line: String) -> String? {
        try? JSONDecoder().decode(EventAnswer.self, from: Data(line.utf8)).result
    }
}
