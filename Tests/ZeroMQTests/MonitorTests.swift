import Testing
import ZeroMQ

/// Socket monitors decode libzmq's lifecycle events.
@Suite struct MonitorTests {
    @Test func reportsConnectedWithTheEndpoint() throws {
        let context = try ZMQContext()
        let server = try makeSocket(.router, context)
        try server.bind(TestEndpoint.tcpAnyPort)
        let endpoint = try server.lastEndpoint
        let client = try makeSocket(.dealer, context)
        let monitor = try ZMQSocketMonitor(monitoring: client)
        try client.connect(endpoint)

        let event = try #require(try monitor.waitFor(.connected, timeout: .seconds(30)))
        #expect(event.kind == .connected)
        #expect(event.endpoint == endpoint)
    }

    @Test func reportsListeningAndAcceptedOnTheServer() throws {
        let context = try ZMQContext()
        let server = try makeSocket(.router, context)
        let monitor = try ZMQSocketMonitor(monitoring: server, events: [.listening, .accepted])
        try server.bind(TestEndpoint.ipc())
        let endpoint = try server.lastEndpoint
        let listening = try #require(try monitor.nextEvent(.timeout(.seconds(30))))
        #expect(listening.kind == .listening)
        #expect(listening.endpoint == endpoint)

        let client = try makeSocket(.dealer, context)
        try client.connect(endpoint)
        let accepted = try #require(try monitor.nextEvent(.timeout(.seconds(30))))
        #expect(accepted.kind == .accepted)
    }

    @Test func monitorCanBePolled() throws {
        let context = try ZMQContext()
        let server = try makeSocket(.router, context)
        let monitor = try ZMQSocketMonitor(monitoring: server)
        let poller = ZMQPoller()
        let token = poller.add(monitor)
        try server.bind(TestEndpoint.ipc())
        #expect(try poller.poll(timeout: .seconds(30))[token] == .readable)
        #expect(try monitor.nextEvent(.dontWait)?.kind == .listening)
        monitor.stop()
        monitor.stop()  // idempotent
    }
}
