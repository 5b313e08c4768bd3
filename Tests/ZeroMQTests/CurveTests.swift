import Testing
import ZeroMQ

/// CURVE-encrypted connections over loopback TCP, observed through socket monitors.
@Suite(.enabled(if: ZMQLibrary.hasCurve, "libzmq built without CURVE"))
struct CurveTests {
    /// A CURVE server ROUTER bound to loopback, with its key pair and bound endpoint.
    struct Server {
        let socket: ZMQSocket
        let keys: CurveKeyPair
        let endpoint: String
    }

    func makeServer(_ context: ZMQContext, zapDomain: String? = nil) throws -> Server {
        let keys = try CurveKeyPair.generate()
        let socket = try makeSocket(.router, context)
        try socket.set(.curveServer, true)
        try socket.set(.curveSecretKey, keys.secretKey)
        if let zapDomain { try socket.set(.zapDomain, zapDomain) }
        try socket.bind(TestEndpoint.tcpAnyPort)
        return Server(socket: socket, keys: keys, endpoint: try socket.lastEndpoint)
    }

    func makeClient(_ context: ZMQContext, serverKey: CurveKey) throws -> ZMQSocket {
        let keys = try CurveKeyPair.generate()
        let socket = try makeSocket(.dealer, context)
        try socket.set(.curveServerKey, serverKey)
        try socket.set(.curvePublicKey, keys.publicKey)
        try socket.set(.curveSecretKey, keys.secretKey)
        return socket
    }

    @Test func handshakeSucceedsWithTheRightServerKey() throws {
        let context = try ZMQContext()
        let server = try makeServer(context)
        let client = try makeClient(context, serverKey: server.keys.publicKey)
        let monitor = try ZMQSocketMonitor(monitoring: client)
        try client.connect(server.endpoint)

        #expect(try monitor.waitFor(.handshakeSucceeded, timeout: .seconds(30)) != nil)
        try client.send([[UInt8].utf8("ping")])
        let request = try #require(try server.socket.receiveMultipart(.timeout(.seconds(30))))
        try #require(request.count == 2)
        #expect(request[1] == .utf8("ping"))
        try server.socket.send([request[0], .utf8("pong")])
        #expect(try client.receiveMultipart(.timeout(.seconds(30))) == [.utf8("pong")])
    }

    @Test func handshakeFailsWithTheWrongServerKey() throws {
        let context = try ZMQContext()
        let server = try makeServer(context)
        let serverMonitor = try ZMQSocketMonitor(monitoring: server.socket)
        let impostorKey = try CurveKeyPair.generate().publicKey
        let client = try makeClient(context, serverKey: impostorKey)
        try client.connect(server.endpoint)
        try client.send([[UInt8].utf8("secret")], mode: .dontWait)

        let failure = try serverMonitor.waitFor(timeout: .seconds(30)) { $0.kind.isHandshakeFailure }
        #expect(failure != nil)
        // The handshake never completed, so nothing crossed in either direction.
        #expect(try server.socket.receiveMultipart(.timeout(.milliseconds(100))) == nil)
        #expect(try client.receiveMultipart(.timeout(.milliseconds(100))) == nil)
    }

    @Test func zapHandlerAtWellKnownInprocEndpointAuthenticatesClients() throws {
        let context = try ZMQContext()
        let zap = try makeSocket(.router, context)
        try zap.bind("inproc://zeromq.zap.01")
        let server = try makeServer(context, zapDomain: "workflow")
        let client = try makeClient(context, serverKey: server.keys.publicKey)
        try client.connect(server.endpoint)
        try client.send([[UInt8].utf8("hello")])

        // ZAP request: [envelope, "", version, request id, domain, address, identity,
        // mechanism, client key].
        let request = try #require(try zap.receiveMultipart(.timeout(.seconds(30))))
        try #require(request.count == 9)
        #expect(request[2] == .utf8("1.0"))
        #expect(request[4] == .utf8("workflow"))
        #expect(request[7] == .utf8("CURVE"))
        #expect(request[8].count == 32)
        try zap.send([request[0], [], .utf8("1.0"), request[3], .utf8("200"), .utf8("OK"), .utf8("user-7"), []])

        let messages = try #require(try server.socket.receiveMessages(.timeout(.seconds(30))))
        #expect(messages.last?.bytes == .utf8("hello"))
        #expect(messages.last?.metadata("User-Id") == "user-7")
    }
}
