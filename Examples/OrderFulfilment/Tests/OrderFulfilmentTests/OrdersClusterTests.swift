import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import WorkflowClusterTesting

/// The order-fulfilment app as a real cluster: its own coordinator and two workers, built on the
/// library's entry points, driven through the root's JSON rendering and events by token.
@Suite("Order fulfilment cluster")
struct OrdersClusterTests {
    @Test("an order placed by token is packed on the warehouse worker, shipped on the front worker and delivered")
    func orderGoesThroughTheCluster() async throws {
        try await OrdersCluster.with { cluster in
            let coordinator = try await cluster.startCoordinator()
            try await cluster.startWorker("front-1")
            try await cluster.startWorker("warehouse-1")

            // The intake pane, rendered by front-1, with its order sink as a token.
            let opened = try await coordinator.stdout.first(
                "the intake rendered by front-1",
                where: DashboardLine.matching { $0.intake.renderedBy == "front-1" && $0.intake.placeOrder != nil })
            let placeOrder = try #require(DashboardLine.parse(opened)?.intake.placeOrder)

            var mark = coordinator.stdout.lines.count
            try coordinator.send(line: #"{"token": "\#(placeOrder)", "event": {"sku": "widget", "quantity": 2}}"#)
            let placed = try await coordinator.stdout.first("the order's answer", from: mark, where: EventAnswer.about(placeOrder))
            #expect(EventAnswer.result(of: placed) == "sent")

            // The state changed: stock reserved, order 1 packed by the warehouse worker.
            let packed = try await coordinator.stdout.first(
                "order 1 packed on warehouse-1", from: mark,
                where: DashboardLine.matching { dashboard in
                    guard let row = dashboard.orders.first, let packing = row.packing else { return false }
                    return packing.renderedBy == "warehouse-1" && packing.handOver != nil
                })
            let dashboard = try #require(DashboardLine.parse(packed))
            #expect(dashboard.intake.stock.first { $0.sku == "widget" }?.available == 8)
            #expect(dashboard.intake.renderedBy == "front-1")
            #expect(dashboard.orders.map(\.order.id) == [1])
            let handOver = try #require(dashboard.orders[0].packing?.handOver)

            mark = coordinator.stdout.lines.count
            try coordinator.send(line: #"{"token": "\#(handOver)", "event": {}}"#)
            let shipped = try await coordinator.stdout.first(
                "order 1 shipping on front-1 with a tracking number", from: mark,
                where: DashboardLine.matching { dashboard in
                    guard let shipping = dashboard.orders.first?.shipping else { return false }
                    return shipping.renderedBy == "front-1" && shipping.confirmDelivery != nil
                })
            let shipping = try #require(DashboardLine.parse(shipped)?.orders.first?.shipping)
            let confirm = try #require(shipping.confirmDelivery)

            // The packing pane is gone: its token is stale now, answered as such.
            mark = coordinator.stdout.lines.count
            try coordinator.send(line: #"{"token": "\#(handOver)", "event": {}}"#)
            let stale = try await coordinator.stdout.first("the stale token's answer", from: mark, where: EventAnswer.about(handOver))
            #expect(EventAnswer.result(of: stale) == "stale-token")

            mark = coordinator.stdout.lines.count
            try coordinator.send(line: #"{"token": "\#(confirm)", "event": {}}"#)
            try await coordinator.stdout.first(
                "order 1 delivered", from: mark,
                where: DashboardLine.matching { $0.orders.first?.stage == "delivered" && $0.orders.first?.tracking == shipping.tracking })

            #expect(try await coordinator.terminate() == 0)
        }
    }

    @Test("the orders and the intake's stock survive a coordinator restart from its snapshot")
    func snapshotRestore() async throws {
        try await OrdersCluster.with { cluster in
            try FileManager.default.createDirectory(at: cluster.directory, withIntermediateDirectories: true)
            let snapshot = cluster.directory.appendingPathComponent("orders.snapshot").path
            var coordinator = try await cluster.startCoordinator(["--snapshot-file", snapshot])
            try await cluster.startWorker("front-1")
            try await cluster.startWorker("warehouse-1")
            let opened = try await coordinator.stdout.first(
                "the intake rendered by front-1",
                where: DashboardLine.matching { $0.intake.renderedBy == "front-1" && $0.intake.placeOrder != nil })
            let placeOrder = try #require(DashboardLine.parse(opened)?.intake.placeOrder)
            try coordinator.send(line: #"{"token": "\#(placeOrder)", "event": {"sku": "gizmo", "quantity": 3}}"#)
            try await coordinator.stdout.first(
                "order 1 taken", where: DashboardLine.matching { $0.orders.count == 1 && $0.intake.stock.contains { $0.sku == "gizmo" && $0.available == 0 } })
            // SIGTERM writes the last snapshot; the workers stay up and rejoin the next coordinator.
            #expect(try await coordinator.terminate() == 0)

            coordinator = try await cluster.startCoordinator(["--restore", snapshot])
            try await coordinator.stdout.first(
                "order 1 and the reserved stock back, rendered by the workers",
                where: DashboardLine.matching { dashboard in
                    dashboard.intake.renderedBy == "front-1" && dashboard.orders.map(\.order.id) == [1]
                        && dashboard.orders[0].order.sku == "gizmo"
                        && dashboard.intake.stock.contains { $0.sku == "gizmo" && $0.available == 0 }
                })
        }
    }

    @Test("the gateway serves the dashboard's page at / and the client module it imports")
    func pageIsServed() async throws {
        try await OrdersCluster.with { cluster in
            let coordinator = try await cluster.startCoordinator(["--gateway-listen", "127.0.0.1:0"])
            struct GatewayLine: Decodable {
                var url: String?
            }
            let line = try await coordinator.stdout.first("the gateway to listen") { $0.contains(#""event":"gateway""#) }
            let base = try #require(try JSONDecoder().decode(GatewayLine.self, from: Data(line.utf8)).url)
            let (page, pageResponse) = try await URLSession.shared.data(from: try #require(URL(string: base + "/")))
            #expect((pageResponse as? HTTPURLResponse)?.statusCode == 200)
            let html = String(decoding: page, as: UTF8.self)
            #expect(html.contains(#"import { connect } from "/workflow-client.js""#) && html.contains("order-form"))
            let (script, scriptResponse) = try await URLSession.shared.data(from: try #require(URL(string: base + "/workflow-client.js")))
            #expect((scriptResponse as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("text/javascript") == true)
            #expect(String(decoding: script, as: UTF8.self).contains("export function connect"))
            #expect(try await coordinator.terminate() == 0)
        }
    }

    @Test("--version works on both of the app's daemons")
    func version() async throws {
        try await OrdersCluster.with { cluster in
            for executable in ["orders-coordinator", "orders-worker"] {
                let daemon = try cluster.daemons.start(executable, ["--version"], label: executable)
                #expect(try await daemon.waitForExit() == 0)
                #expect(daemon.stdout.lines.first?.isEmpty == false)
            }
        }
    }
}
