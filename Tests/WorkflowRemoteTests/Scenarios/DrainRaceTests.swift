import Foundation
import RemoteTestSupport
import Synchronization
import Testing
import WireProtocol
import Workflow
import WorkflowClusterTesting
import ZeroMQ
@testable import WorkflowRemote

/// A draining worker whose connection closes before its RELEASE answer (the final flush) reaches
/// the parent: the handover and the close may arrive in either order, and the child being moved
/// is never shown unavailable. The worker here is a bare DEALER speaking the protocol, so the
/// test decides the order: it asks to drain, reads the RELEASE and leaves without answering.
@Suite struct DrainRaceTests {
    @Test("a child whose draining worker vanishes before handing it over moves on, never unavailable")
    func vanishingDrainingWorker() async throws {
        // The bare worker sends no heartbeats: the parent must not take its silence for death
        // (a minute of it), but notices its close at its next heartbeat (every 100 ms).
        let bare = try await BareWorker("drain-race")
        let parent = bare.parent

        // From here on the child is placed: it must never be shown unavailable.
        let unavailable = Mutex(0)
        let changes = parent.statusChanges
        let watcher = Task {
            for await change in changes where change.path.hasSuffix("[c]") {
                if case .unavailable = change.status { unavailable.withLock { $0 += 1 } }
            }
        }
        // Another worker of the pool joins; the fake one drains and leaves at the RELEASE.
        let staying = try bare.poolWorker("staying")
        try await withSafetyTimeout("both workers joined") { await parent.waitForWorkers(count: 2) }
        try bare.send(.drain)
        _ = try await bare.receive(.release)
        bare.socket.close()

        _ = try await status(of: parent, pathSuffix: "[c]", where: { $0 == .running(worker: "staying") })
        #expect(unavailable.withLock { $0 } == 0, "the child being moved was shown unavailable")
        watcher.cancel()
        await staying.shutdown()
        await bare.finish()
    }
}
