import Testing
import ZeroMQ

/// Contexts, sockets and connections release every file descriptor they open.
@Suite struct HandleHygieneTests {
    /// One full lifecycle: context, bound and connected sockets, one message, teardown.
    func exerciseOneLifecycle(iteration: Int) throws {
        let context = try ZMQContext()
        let server = try makeSocket(.router, context)
        let client = try makeSocket(.dealer, context)
        try server.bind(TestEndpoint.ipc())
        try client.connect(try server.lastEndpoint)
        try client.send([[UInt8].utf8("ping-\(iteration)")])
        let received = try #require(try server.receiveMultipart(.timeout(.seconds(10))))
        #expect(received.last == .utf8("ping-\(iteration)"))
        client.close()
        client.close()  // idempotent
        server.close()
        // `context` is released here; its deinit terminates it once both sockets are closed.
    }

    @Test func twoThousandLifecyclesDoNotLeakFileDescriptors() throws {
        try exerciseOneLifecycle(iteration: -1)  // warm up lazily created process-wide state
        let before = try openFileDescriptorCount()
        for iteration in 0..<2_000 {
            try exerciseOneLifecycle(iteration: iteration)
        }
        let after = try openFileDescriptorCount()
        // Other tests run in parallel in this process and open descriptors of their own (remote
        // runtimes, spawned daemons' pipes, flood peers: up to ~520 seen), so allow a constant
        // slack well below what a leak of even one descriptor per iteration would show (2,000+;
        // a leaked socket or context holds several).
        #expect(after - before < 1_000, "open descriptors went from \(before) to \(after)")
    }
}
