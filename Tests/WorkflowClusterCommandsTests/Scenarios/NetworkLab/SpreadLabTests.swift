import ClusterTestSupport
import Foundation
import Testing
import WorkflowClusterTesting

/// Sessions spread over coordinators across the lab's hosts (docs/OPERATIONS.md, "Sessions spread
/// over several coordinators"): two coordinators on two hosts, each with its worker on a host of
/// its own, the PostgreSQL server they share on a fifth (`SpreadLab`); the scenario of
/// `SpreadSessionProcessTests` over a network. In the network lab suite (its traits: serialized,
/// skipped where no lab can be made).
extension NetworkLabTests {
    @Test("spread sessions in the lab: one of two coordinators SIGKILLed under a stream of events, its sessions resume on the other host's coordinator and workers, every event answered 202 applied exactly once")
    func spreadSessionsCoordinatorKilled() async throws {
        try await SpreadLab.with("spread-kill") { pair in
            let figures = try await SpreadSessionProcessTests.sigkillOne(pair)
            labFigure(
                "spread sessions, two coordinators on two hosts, each with its worker, PostgreSQL on a fifth "
                    + "(session lease \(SpreadSessionProcessTests.leaseMilliseconds) ms): \(figures)")
        }
    }
}
