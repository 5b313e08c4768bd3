import Testing
import ZeroMQ

/// ROUTER addressing, including the "peer is gone" error the runtime relies on.
@Suite struct RouterTests {
    @Test func mandatoryRoutingToUnknownPeerThrowsHostUnreachable() throws {
        let context = try ZMQContext()
        let router = try makeSocket(.router, context)
        try router.set(.routerMandatory, true)
        try router.bind(TestEndpoint.inproc())
        let error = #expect(throws: ZMQError.self) {
            try router.send(frames("no-such-peer", "payload"))
        }
        #expect(error?.isHostUnreachable == true)
    }

    @Test func routingIDAddressesAKnownPeer() throws {
        let context = try ZMQContext()
        let router = try makeSocket(.router, context)
        try router.set(.routerMandatory, true)
        let endpoint = TestEndpoint.inproc()
        try router.bind(endpoint)
        let dealer = try makeSocket(.dealer, context)
        try dealer.set(.routingID, .utf8("worker-1"))
        try dealer.connect(endpoint)

        try dealer.send([[UInt8].utf8("ready")])
        let request = try #require(try router.receiveMultipart(.timeout(.seconds(10))))
        #expect(request == [.utf8("worker-1"), .utf8("ready")])

        try router.send(frames("worker-1", "job"))
        #expect(try dealer.receiveMultipart(.timeout(.seconds(10))) == [.utf8("job")])
    }

    @Test func pubSubDeliversOnlySubscribedTopics() throws {
        let context = try ZMQContext()
        let publisher = try makeSocket(.pub, context)
        let subscriber = try makeSocket(.sub, context)
        let endpoint = TestEndpoint.inproc()
        try publisher.bind(endpoint)
        try subscriber.set(.subscribe, .utf8("topic"))
        try subscriber.connect(endpoint)

        // Subscriptions propagate asynchronously; publish until the first delivery, each
        // round paced by a timed receive rather than a sleep.
        var received: [[UInt8]]?
        for _ in 0..<500 where received == nil {
            try publisher.send(frames("other", "ignored"))
            try publisher.send(frames("topic", "wanted"))
            received = try subscriber.receiveMultipart(.timeout(.milliseconds(20)))
        }
        #expect(received == [.utf8("topic"), .utf8("wanted")])
        while let next = try subscriber.receiveMultipart(.dontWait) {
            #expect(next.first == .utf8("topic"))
        }
    }
}
