import Testing
import WorkflowClusterTesting
import WorkflowRemote

/// HELLO offers every protocol version a worker speaks; the parent picks the highest both speak,
/// so daemons one version apart interoperate during a rolling upgrade, and refuses with a reason
/// when they share none.
@Suite struct ProtocolNegotiationTests {
    @Test("the highest version both sides speak, or none")
    func negotiation() {
        #expect(RemoteProtocol.negotiate(offered: [4, 5], supported: 4...4) == 4)
        #expect(RemoteProtocol.negotiate(offered: [3, 4], supported: 4...5) == 4)
        #expect(RemoteProtocol.negotiate(offered: [4, 5], supported: 4...5) == 5)
        #expect(RemoteProtocol.negotiate(offered: [5, 6], supported: 4...4) == nil)
        #expect(RemoteProtocol.negotiate(offered: [4], supported: RemoteProtocol.supported) == 4, "a worker that predates negotiation")
        #expect(RemoteProtocol.negotiate(offered: [4, 5], supported: RemoteProtocol.supported) == 5, "trace context (protocol 5)")
    }

    func worker(_ name: String, parent: RemoteRuntime, speaking versions: ClosedRange<Int>) throws -> RemoteRuntime {
        var configuration = RemoteRuntimeConfiguration(name: name)
        configuration.parentEndpoint = parent.listenEndpoint
        configuration.heartbeatInterval = .milliseconds(100)
        configuration.heartbeatLiveness = 5
        configuration.protocolVersions = versions
        return try RemoteRuntime(configuration: configuration)
    }

    @Test("a worker of a newer build that also speaks this parent's version joins")
    func newerWorkerJoins() async throws {
        let parent = try makeParent("negotiate-newer")
        let worker = try worker("newer", parent: parent, speaking: 4...5)
        await parent.waitForWorkers(count: 1)
        #expect(parent.workerNames == ["newer"])
        await worker.shutdown()
        await parent.shutdown()
    }

    @Test("a worker that shares no version is refused, and says why")
    func strangerIsRefused() async throws {
        let parent = try makeParent("negotiate-stranger")
        let next = RemoteProtocol.supported.upperBound + 1
        let worker = try worker("stranger", parent: parent, speaking: next...(next + 1))
        let refusal = try await withSafetyTimeout("the refusal") { await worker.refusal() }
        #expect(refusal.map { "\($0)".contains("no common protocol version") } == true, "\(String(describing: refusal))")
        #expect(parent.workerNames.isEmpty)
        await worker.shutdown()
        await parent.shutdown()
    }
}
