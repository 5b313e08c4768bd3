import ClusterTestSupport
import Foundation
import Logging
import Synchronization
import Testing
import WorkflowCluster

/// The leader's keeper of its lease (`LeaseKeeper`, through `CoordinatorLeadership.keep`), on a
/// store opened with the lease's own connection, against a private PostgreSQL server: it renews
/// off the process's concurrency pool, and steps down when fenced or when that connection closes.
@Suite("Leadership: the lease keeper", .serialized)
struct LeaseKeeperTests {
    /// The reasons a leadership stepped down for, in order.
    final class StepDowns: Sendable {
        let reasons = Mutex<[LeaderTerm.StepDownReason]>([])
    }

    /// A store with a lease connection of its own, its lease taken by `holder`, and a leadership
    /// recording its step-downs.
    static func withLeader(
        _ label: String, lease duration: Duration,
        _ body: (PostgresCoordinatorStore, CoordinatorLeadership, CoordinatorLease, StepDowns) async throws -> Void
    ) async throws {
        try await StoreBackend.postgres.withEmptyStore(label) { section in
            let url = try #require(section["url"])
            let store = try await PostgresCoordinatorStore.open(url: url, leaseConnection: true)
            let steppedDown = StepDowns()
            do {
                let leadership = CoordinatorLeadership(
                    store: store, storeName: "test", holder: "leader", schedule: LeaseSchedule(lease: duration),
                    logger: Logger(label: "test.lease-keeper")
                ) { reason in steppedDown.reasons.withLock { $0.append(reason) } }
                let lease = try await leadership.acquire()
                try await body(store, leadership, lease, steppedDown)
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    /// The lease's expiry as the database has it now.
    static func expiry(_ store: PostgresCoordinatorStore) async throws -> Date {
        guard case .heldBy(let live) = try await store.acquireLease(holder: "probe", for: .seconds(60)) else {
            throw PostgresLeaseTests.LeaseFailure(description: "the probe took the lease: it was not live")
        }
        return live.expiresAt
    }

    @Test("every thread of the concurrency pool blocked for longer than the recommended lease: the keeper renews all the same and does not step down")
    func renewsWhileThePoolIsBlocked() async throws {
        try await Self.withLeader("keeper-pool", lease: StoreSettings.recommendedLease) { store, leadership, lease, steppedDown in
            let keeping = Task { await leadership.keep(lease) }
            let before = try await Self.expiry(store)
            // Blocks every thread of the pool (and more tasks than threads, so none is left over):
            // only the keeper's own event loop thread can renew meanwhile.
            let blockers = (0..<(ProcessInfo.processInfo.activeProcessorCount + 2)).map { _ in
                Task.detached { _ = usleep(2_500_000) }
            }
            for blocker in blockers { await blocker.value }
            let after = try await Self.expiry(store)
            #expect(steppedDown.reasons.withLock { $0 }.isEmpty, "the keeper stepped down: \(steppedDown.reasons.withLock { $0 })")
            #expect(after > before, "not renewed while the pool was blocked: expiry \(before) then \(after)")
            keeping.cancel()
            guard case .stopped(let held) = await keeping.value else {
                Issue.record("the keeper did not stop with the lease held")
                return
            }
            #expect(held.token == lease.token && held.expiresAt > lease.expiresAt)
        }
    }

    @Test("another coordinator takes the store: the keeper's next renewal is refused and it steps down, fenced")
    func fencedStepsDown() async throws {
        // A lease long enough that a renewal delayed by a loaded machine (its deadline is four
        // fifths of the lease after the request) is still answered: with 1 s, CI once saw the
        // deadline pass before the refusal came back. The first renewal is due after 2 s.
        try await Self.withLeader("keeper-fenced", lease: .seconds(10)) { store, leadership, lease, steppedDown in
            let keeping = Task { await leadership.keep(lease) }
            // A coordinator without a lease becoming the writer raises the token.
            _ = try await store.acquireWriter(holder: "usurper")
            #expect(await keeping.value == .steppedDown(.fenced))
            #expect(steppedDown.reasons.withLock { $0 } == [.fenced])
        }
    }

    @Test("the lease's connection closes: the keeper steps down at once, before its deadline")
    func connectionLostStepsDown() async throws {
        try await Self.withLeader("keeper-closed", lease: .seconds(60)) { store, leadership, lease, steppedDown in
            let keeping = Task { await leadership.keep(lease) }
            await store.close()
            #expect(await keeping.value == .steppedDown(.leaseConnectionLost))
            #expect(steppedDown.reasons.withLock { $0 } == [.leaseConnectionLost])
        }
    }

    @Test("stopped (the coordinator is stopping): the term ends with the lease still held, which can then be given up")
    func stoppedKeepsLease() async throws {
        try await Self.withLeader("keeper-stop", lease: .seconds(60)) { store, leadership, lease, steppedDown in
            let keeping = Task { await leadership.keep(lease) }
            keeping.cancel()
            #expect(await keeping.value == .stopped(lease))
            await leadership.release(lease)
            #expect(steppedDown.reasons.withLock { $0 }.isEmpty)
            guard case .acquired(let next) = try await store.acquireLease(holder: "next", for: .seconds(60)) else {
                Issue.record("the lease was not given up")
                return
            }
            #expect(next.token > lease.token)
        }
    }
}
