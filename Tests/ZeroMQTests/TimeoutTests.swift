import Testing
import ZeroMQ

/// Idle sockets report "nothing" as a nil result or a distinct EAGAIN, never by hanging.
@Suite struct TimeoutTests {
    @Test func timedReceiveOnIdleSocketReturnsNil() throws {
        let context = try ZMQContext()
        let socket = try makeSocket(.dealer, context)
        try socket.bind(TestEndpoint.inproc())
        #expect(try socket.receiveMultipart(.timeout(.milliseconds(20))) == nil)
    }

    @Test func nonBlockingReceiveOnIdleSocketReturnsNil() throws {
        let context = try ZMQContext()
        let socket = try makeSocket(.dealer, context)
        try socket.bind(TestEndpoint.inproc())
        #expect(try socket.receiveMessages(.dontWait) == nil)
    }

    @Test func receiveTimeoutOptionMakesBlockingReceiveReturnNil() throws {
        let context = try ZMQContext()
        let socket = try makeSocket(.dealer, context)
        try socket.set(.receiveTimeout, 20)
        try socket.bind(TestEndpoint.inproc())
        #expect(try socket.receiveMultipart() == nil)
    }

    @Test func nonBlockingSendWithoutPeerThrowsAgain() throws {
        let context = try ZMQContext()
        let dealer = try makeSocket(.dealer, context)
        try dealer.bind(TestEndpoint.inproc())
        let error = #expect(throws: ZMQError.self) {
            try dealer.send([[UInt8].utf8("nobody listens")], mode: .dontWait)
        }
        #expect(error?.isAgain == true)
    }
}
