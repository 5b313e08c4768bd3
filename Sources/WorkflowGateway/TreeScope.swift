import WorkflowCluster
import WorkflowRemote

/// Which tree a route shows: the shared root's, or one session's.
///
/// Every tree's remote children live on the coordinator's one runtime; a session's are known
/// there under its prefix (`SessionLoop`). A route about one tree shows its children only, with
/// the paths that tree gives them.
enum TreeScope: Sendable, Equatable {
    case shared
    case session(SessionID)

    /// The children of `inspection` that belong to this tree, by the paths the tree names them.
    func children(of inspection: RemoteRuntimeInspection?) -> [RemoteRuntimeInspection.Child] {
        guard let inspection else { return [] }
        switch self {
        case .shared:
            return inspection.children.filter { !$0.path.hasPrefix(Self.sessionMark) }
        case .session(let id):
            let prefix = SessionLoop.pathPrefix(scope: id.text)
            return inspection.children.compactMap { child in
                guard child.path.hasPrefix(prefix + "/") else { return nil }
                var own = child
                own.path = String(child.path.dropFirst(prefix.count))
                return own
            }
        }
    }

    /// The statuses of this tree's remote children, under the paths the tree names them.
    func childStatuses(in runtime: RemoteRuntime) -> [ChildStatusJSON] {
        let prefix = runtimeTree
        return runtime.childStatuses(tree: prefix).map { ChildStatusJSON($0, path: String($0.path.dropFirst(prefix.count))) }
    }

    /// `inspection` with only this tree's children (workers unchanged).
    func restrict(_ inspection: RemoteRuntimeInspection?) -> RemoteRuntimeInspection? {
        guard var inspection else { return nil }
        inspection.children = children(of: inspection)
        return inspection
    }

    /// The runtime's name for this tree's children (`RemoteRuntime.inspect(tree:)`).
    var runtimeTree: String {
        switch self {
        case .shared: ""
        case .session(let id): SessionLoop.pathPrefix(scope: id.text)
        }
    }

    /// What every session's paths start with.
    private static let sessionMark = SessionLoop.pathPrefix(scope: "")
}
