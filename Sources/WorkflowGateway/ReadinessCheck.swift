import WorkflowCluster
import WorkflowRemote

/// `GET /health/ready`: whether the coordinator serves the tree it was configured for.
///
/// Ready when the root has a settled rendering and every placed remote child is running, or is
/// unavailable *by configuration*: its placement names a worker or pool the configuration does
/// not list, so no worker is expected to come for it and waiting would never end. A child
/// starting, or unavailable because its configured worker is away, makes the coordinator not
/// ready (a load balancer should send clients elsewhere; a supervisor may wait).
struct ReadinessCheck: Sendable {
    struct Report: Codable, Sendable {
        var ready: Bool
        /// Whether this coordinator serves the tree (`leader`: the only one, or the holder of
        /// the lease) or waits for the lease (`standby`: `StandbyRoutes`).
        var role: CoordinatorRole
        var renderingSequence: UInt64
        /// Children keeping the coordinator from being ready, with why.
        var waitingFor: [Waiting]
    }

    /// A coordinator's role, as the probe names it.
    enum CoordinatorRole: String, Codable, Sendable {
        case leader
        case standby
    }

    struct Waiting: Codable, Sendable {
        var path: String
        var status: String
    }

    let configuration: ClusterConfiguration

    func report(session: any ClusterRootSession, children: [RemoteRuntimeInspection.Child]) -> Report {
        let sequence = session.latestRendering.sequence
        let waiting = children.compactMap { child -> Waiting? in
            switch child.status {
            case .running: return nil
            case .unavailable(.noWorker) where isUnavailableByConfiguration(child): return nil
            default: return Waiting(path: child.path, status: child.status.description)
            }
        }
        return Report(ready: sequence > 0 && waiting.isEmpty, role: .leader, renderingSequence: sequence, waitingFor: waiting)
    }

    /// No listed worker could ever host it: the rule for it names a worker or pool nobody
    /// configured.
    private func isUnavailableByConfiguration(_ child: RemoteRuntimeInspection.Child) -> Bool {
        let names = Set(configuration.workers.map(\.name))
        let pools = Set(configuration.workers.map(\.pool))
        switch configuration.placement.placement(typeName: child.typeName, path: child.path) {
        case .worker(let name): return !names.contains(name)
        case .pool(let pool), .hashed(let pool): return !pools.contains(pool)
        default: return false
        }
    }
}
