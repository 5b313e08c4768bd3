import Foundation
import WorkflowCluster
import WorkflowRemote

/// What `GET /api/tree` answers: the root, every remote child with where it runs and its
/// traffic, and the workers.
///
/// Local children of the root render inside the coordinator and are not listed one by one (the
/// runtime tracks remote children only); the root's entry stands for them.
struct ClusterTreeInspection: Codable, Sendable {
    /// Where a node runs.
    struct Location: Codable, Sendable, Equatable {
        /// `coordinator` or the worker's name.
        var process: String
        /// The process id, when known (the coordinator's own; a worker's from its HELLO).
        var pid: Int32?
        /// The host name, when known (as for `pid`).
        var host: String?
    }

    struct Events: Codable, Sendable {
        var sent: UInt64
        var acknowledged: UInt64
        var outstanding: Int
    }

    struct Node: Codable, Sendable {
        var path: String
        var type: String
        var key: String
        var runsOn: Location?
        /// `running`, `starting` or `unavailable`.
        var status: String
        var detail: String
        var placement: String
        var propsBytes: Int
        var renderingBytes: Int?
        var propsSequence: UInt64
        var events: Events
        var lastRoundTripMilliseconds: Double?
    }

    struct Root: Codable, Sendable {
        var name: String
        var runsOn: Location
        var renderingSequence: UInt64
        var renderingBytes: Int
    }

    struct Worker: Codable, Sendable {
        var name: String
        var pool: String
        var capacity: Int
        var load: Int
        var hostedTypes: [String]
        var lastHeardMillisecondsAgo: Double
        var joinedAt: Date
        var pid: Int32?
        var host: String?
        /// Whether the configuration lists it (a worker may join without being listed).
        var configured: Bool
        /// `true` while it drains (its children move elsewhere); absent otherwise.
        var draining: Bool?
    }

    var root: Root
    var nodes: [Node]
    var workers: [Worker]
    /// Workers the configuration lists that are not connected now.
    var missingWorkers: [String]

    init(session: any ClusterRootSession, runtime: RemoteRuntimeInspection?, configuration: ClusterConfiguration) {
        let latest = session.latestRendering
        let coordinator = Location(process: "coordinator", pid: getpid(), host: ProcessInfo.processInfo.hostName)
        root = Root(name: session.name, runsOn: coordinator, renderingSequence: latest.sequence, renderingBytes: latest.json.count)
        let workersByName = Dictionary((runtime?.workers ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        nodes = (runtime?.children ?? []).map { child in
            let (state, detail): (String, String) =
                switch child.status {
                case .starting: ("starting", "")
                case .running(let worker): ("running", "on \(worker)")
                case .unavailable(let error): ("unavailable", error.description)
                }
            let (type, key) = Self.typeAndKey(path: child.path, typeName: child.typeName)
            return Node(
                path: child.path, type: type, key: key, runsOn: child.worker.map { Location(process: $0, pid: workersByName[$0]?.processID, host: workersByName[$0]?.hostName) }, status: state, detail: detail,
                placement: child.placement, propsBytes: child.propsBytes, renderingBytes: child.renderingBytes,
                propsSequence: child.propsSequence,
                events: Events(sent: child.eventsSent, acknowledged: child.eventsAcknowledged, outstanding: child.eventsOutstanding),
                lastRoundTripMilliseconds: child.lastRoundTripSeconds.map { ($0 * 1e6).rounded() / 1e3 })
        }
        let configured = Set(configuration.workers.map(\.name))
        workers = (runtime?.workers ?? []).map { worker in
            Worker(
                name: worker.name, pool: worker.pool, capacity: worker.capacity, load: worker.load, hostedTypes: worker.hostedTypes,
                lastHeardMillisecondsAgo: (worker.secondsSinceHeard * 1e6).rounded() / 1e3, joinedAt: worker.joinedAt, pid: worker.processID,
                host: worker.hostName, configured: configured.contains(worker.name), draining: worker.isDraining ? true : nil)
        }
        let connected = Set(workers.map(\.name))
        missingWorkers = configuration.workers.map(\.name).filter { !connected.contains($0) }
    }

    /// The child's own type (the remotable type, not its proxy's) and its key, from the last
    /// component of its path (`…/Name[key]`).
    static func typeAndKey(path: String, typeName: String) -> (String, String) {
        guard let last = path.split(separator: "/").last, last.hasSuffix("]"), let open = last.firstIndex(of: "[") else {
            return (typeName, "")
        }
        return (typeName, String(last[last.index(after: open)..<last.index(before: last.endIndex)]))
    }
}
