import ClusterTestSupport
import Foundation
import Testing
import WorkflowClusterTesting

/// Coordinators upgraded one at a time across the lab's hosts (docs/OPERATIONS.md, "Upgrading a
/// cluster"): the scenario of `CoordinatorUpgradeProcessTests` with the leader and the standby on
/// two hosts, their worker on a third and the PostgreSQL server on a fourth, over TCP
/// (`StandbyLab`). In the network lab suite (its traits: serialized, skipped where no lab can be
/// made).
extension NetworkLabTests {
    @Test("coordinator upgrade in the lab: the standby then the leader replaced by the next release on their hosts under a stream of events to the shared root and a session; the store migrates once, when both run it; nothing accepted lost or applied twice, the session lives on")
    func coordinatorsUpgradedOneAtATime() async throws {
        try await StandbyLab.with("upgrade", sessions: CoordinatorUpgradeProcessTests.sessions) { pair in
            let figures = try await CoordinatorUpgradeProcessTests.upgradeOneAfterTheOther(pair)
            labFigure(
                "coordinators upgraded one at a time, leader and standby on two hosts, PostgreSQL on a third (lease \(StandbyCoordinatorProcessTests.leaseMilliseconds) ms, "
                    + "heartbeat \(StandbyLab.heartbeat)): \(figures)")
        }
    }
}
