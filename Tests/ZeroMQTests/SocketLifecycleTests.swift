import Foundation
import Testing
import ZeroMQ

/// Socket options, endpoints and closing behave predictably and never trap.
@Suite struct SocketLifecycleTests {
    @Test func optionsRoundTrip() throws {
        let context = try ZMQContext()
        let socket = try makeSocket(.dealer, context)
        try socket.set(.linger, 250)
        #expect(try socket.get(.linger) == 250)
        try socket.set(.sendHighWaterMark, 10)
        try socket.set(.receiveHighWaterMark, 20)
        #expect(try socket.get(.sendHighWaterMark) == 10)
        #expect(try socket.get(.receiveHighWaterMark) == 20)
        try socket.set(.maxMessageSize, 1 << 20)
        #expect(try socket.get(.maxMessageSize) == 1 << 20)
        try socket.set(.routingID, .utf8("me"))
        #expect(try socket.get(.routingID) == .utf8("me"))
        try socket.set(.immediate, true)
        #expect(try socket.get(.immediate))
        try socket.set(.heartbeatInterval, 1_000)
        try socket.set(.heartbeatTTL, 3_000)
        try socket.set(.heartbeatTimeout, 3_000)
        #expect(try socket.get(.heartbeatInterval) == 1_000)
        try socket.set(.zapDomain, "domain")
        #expect(try socket.get(.zapDomain) == "domain")
        try socket.set(.sendTimeout, 5)
        #expect(try socket.get(.sendTimeout) == 5)
    }

    @Test(.enabled(if: ZMQLibrary.hasCurve)) func curveKeyOptionsRoundTrip() throws {
        let context = try ZMQContext()
        let socket = try makeSocket(.dealer, context)
        let keys = try CurveKeyPair.generate()
        try socket.set(.curveServerKey, keys.publicKey)
        #expect(try socket.get(.curveServerKey) == keys.publicKey)
    }

    @Test func invalidUseReportsErrorsInsteadOfTrapping() throws {
        let context = try ZMQContext()
        let socket = try makeSocket(.router, context)
        #expect(throws: ZMQError.self) { try socket.bind("bogus://endpoint") }
        #expect(throws: ZMQError.self) { try socket.connect("tcp://") }
        #expect(throws: ZMQError.self) { try socket.get(.routerMandatory) }  // write-only in libzmq
    }

    @Test func bindUnbindConnectDisconnect() throws {
        let context = try ZMQContext()
        let server = try makeSocket(.pair, context)
        let client = try makeSocket(.pair, context)
        try server.bind(TestEndpoint.tcpAnyPort)
        let endpoint = try server.lastEndpoint
        try client.connect(endpoint)
        try client.send([[UInt8].utf8("one")])
        #expect(try server.receiveMultipart(.timeout(.seconds(10))) == [.utf8("one")])
        try client.disconnect(endpoint)
        try server.unbind(endpoint)
        let error = #expect(throws: ZMQError.self) { try server.unbind(endpoint) }
        #expect(error?.code == ENOENT)
    }

    @Test func closedSocketIsIdempotentAndReportsClosed() throws {
        let context = try ZMQContext()
        let socket = try makeSocket(.dealer, context)
        #expect(!socket.isClosed)
        socket.close()
        socket.close()
        #expect(socket.isClosed)
        let error = #expect(throws: ZMQError.self) { try socket.bind(TestEndpoint.inproc()) }
        #expect(error?.isClosedSocket == true)
        #expect(throws: ZMQError.self) { try socket.receiveMultipart(.dontWait) }
    }

    @Test func contextShutdownUnblocksWithTerminated() throws {
        let context = try ZMQContext()
        let socket = try makeSocket(.dealer, context)
        try socket.bind(TestEndpoint.inproc())
        context.shutdown()
        let error = #expect(throws: ZMQError.self) { try socket.receiveMultipart() }
        #expect(error?.isTerminated == true)
    }

    @Test func libraryReportsVersionAndCapabilities() {
        #expect(ZMQLibrary.version >= ZMQLibrary.Version(major: 4, minor: 3, patch: 0))
        #expect(ZMQLibrary.has("ipc"))
        #expect(!ZMQLibrary.has("no-such-capability"))
        #expect(ZMQError(code: EAGAIN).isAgain)
        #expect(!ZMQError(code: EAGAIN).message.isEmpty)
    }
}

/// A socket is not `Sendable`, but a freshly created one (a disconnected region) can be
/// handed over once to the task or thread that will own it.
@Suite struct SocketOwnershipTests {
    @Test func freshSocketCanBeTransferredToItsOwningTask() async throws {
        let context = try ZMQContext()
        let socket = try makeSocket(.pair, context)
        let endpoint = TestEndpoint.inproc()
        let received = try await Task.detached {
            try socket.bind(endpoint)
            let peer = try makeSocket(.pair, socket.context)
            try peer.connect(endpoint)
            try peer.send(frames("moved"))
            return try socket.receiveMultipart(.timeout(.seconds(10)))
        }.value
        #expect(received == frames("moved"))
    }
}
