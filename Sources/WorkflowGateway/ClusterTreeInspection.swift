import Foundation
import Workflow
import WorkflowCluster
import WorkflowRemote

/// What `GET /api/tree` answers: the root, every node below it with where it runs (remote
/// children with their traffic), and the workers.
///
/// Nodes come from the root host's live tree in pre-order (`depth` 1 for the root's children), so
/// local children appear where they render, on the coordinator; a node the remote runtime places
/// carries its worker, status and traffic. Children of a remote child render on its worker and
/// are not listed (the worker's own runtime tracks them).
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
        /// 1 for the root's children, 2 for theirs, and so on.
        var depth: Int
        var runsOn: Location?
        /// `running`, `starting`, `reconnecting` or `unavailable` (a local node is always `running`).
        var status: String
        var detail: String
        /// `local` for a node rendered in the coordinator, else its placement rule's value.
        var placement: String
        /// The remaining fields describe a remote child's traffic; `nil` for a local node.
        var propsBytes: Int?
        var renderingBytes: Int?
        var propsSequence: UInt64?
        var events: Events?
        var lastRoundTripMilliseconds: Double?
        /// The current placement's fencing token (raised by every START) and since when it runs
        /// where it runs: ownership an operator can check against the workers' logs.
        var epoch: UInt64?
        var placedAt: Date?
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
    /// The coordinator's sessions (for the shared root's inspection, when sessions are on):
    /// each session's own tree is at `/api/sessions/{id}/tree`.
    var sessions: [SessionDirectory.Summary]?

    /// - Parameters:
    ///   - liveTree: the root host's live tree (`ClusterRootSession.liveTree()`), root first.
    init(
        session: any ClusterRootSession, liveTree: [WorkflowTreeNode], runtime: RemoteRuntimeInspection?, configuration: ClusterConfiguration
    ) {
        let latest = session.latestRendering
        let coordinator = Location(process: "coordinator", pid: getpid(), host: ProcessInfo.processInfo.hostName)
        root = Root(name: session.name, runsOn: coordinator, renderingSequence: latest.sequence, renderingBytes: latest.json.count)
        let workersByName = Dictionary((runtime?.workers ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var remoteByPath = Dictionary((runtime?.children ?? []).map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        func remoteNode(_ child: RemoteRuntimeInspection.Child, depth: Int) -> Node {
            let detail = ChildStatusJSON.detail(of: child.status)
            let (type, key) = Self.typeAndKey(path: child.path, typeName: child.typeName)
            return Node(
                path: child.path, type: type, key: key, depth: depth, runsOn: child.worker.map { Location(process: $0, pid: workersByName[$0]?.processID, host: workersByName[$0]?.hostName) }, status: child.status.name, detail: detail,
                placement: child.placement, propsBytes: child.propsBytes, renderingBytes: child.renderingBytes,
                propsSequence: child.propsSequence,
                events: Events(sent: child.eventsSent, acknowledged: child.eventsAcknowledged, outstanding: child.eventsOutstanding),
                lastRoundTripMilliseconds: child.lastRoundTripSeconds.map { ($0 * 1e6).rounded() / 1e3 },
                epoch: child.epoch == 0 ? nil : child.epoch, placedAt: child.placedAt)
        }
        var nodes: [Node] = []
        for node in liveTree where node.depth > 0 {
            if let child = remoteByPath.removeValue(forKey: node.path) {
                nodes.append(remoteNode(child, depth: node.depth))
            } else {
                nodes.append(
                    Node(
                        path: node.path, type: node.workflowType, key: node.key, depth: node.depth, runsOn: coordinator, status: "running",
                        detail: "", placement: "local"))
            }
        }
        // A remote child the tree walk did not meet (placed between the walk and the
        // inspection) is still listed, under the root.
        nodes += (runtime?.children ?? []).filter { remoteByPath[$0.path] != nil }.map { remoteNode($0, depth: 1) }
        self.nodes = nodes
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
