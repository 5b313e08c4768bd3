import ClusterTestSupport
import Foundation
import Logging
import Testing
import WorkflowCluster

/// The renewer of a spread coordinator's session lease term (`SessionTermRenewer`), on a store
/// with a lease connection of its own, against a private PostgreSQL server: it renews off the
/// process's concurrency pool.
@Suite("Session lease term renewer", .serialized)
struct SessionTermRenewerTests {
    /// A spread store, and a renewer of its terms for `lease`.
    static func withRenewer(
        _ label: String, lease: Duration, _ body: (PostgresCoordinatorStore, SessionTermRenewer) async throws -> Void
    ) async throws {
        try await StoreBackend.postgres.withEmptyStore(label) { section in
            let url = try #require(section["url"])
            let store = try await PostgresCoordinatorStore.open(url: url, leaseConnection: true, fencesSessionsByLease: true)
            let spread = SessionSpread(store: store, holder: "renewer", settings: SessionSpreadSettings(lease: lease, advertisedURL: "http://renewer"))
            let renewer = SessionTermRenewer(spread: spread, logger: Logger(label: "test.session-term-renewer"))
            do {
                try await body(store, renewer)
            } catch {
                renewer.stop()
                await store.close()
                throw error
            }
            renewer.stop()
            await store.close()
        }
    }

    @Test("every thread of the concurrency pool blocked for longer than the lease: the term is renewed all the same and stays live")
    func renewsWhileThePoolIsBlocked() async throws {
        try await Self.withRenewer("renewer-pool", lease: .milliseconds(1_500)) { store, renewer in
            let term = try await store.beginSessionLeaseTerm(holder: "renewer", gateway: "http://renewer", for: .milliseconds(1_500))
            let begun = ContinuousClock.now
            renewer.keep(term)
            // Blocks every thread of the pool (and more tasks than threads): only the renewer's
            // event loop thread can renew meanwhile.
            let blockers = (0..<(ProcessInfo.processInfo.activeProcessorCount + 2)).map { _ in
                Task.detached { _ = usleep(2_500_000) }
            }
            for blocker in blockers { await blocker.value }
            let report = try #require(renewer.latest())
            #expect(report.term == term && !report.ended)
            #expect(report.renewedAt.map { $0 > begun } == true, "not renewed while the pool was blocked")
            // Still live: a term that lapsed is never renewed again.
            #expect(try await store.renewSessionLeaseTerm(term, for: .milliseconds(1_500)))
        }
    }
}
