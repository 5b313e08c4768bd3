import WorkflowRemote

/// One remote child's status as a page reads it in each rendering message (`children`): where it
/// runs, or why it does not, without the traffic figures `/api/tree` adds.
struct ChildStatusJSON: Codable, Sendable, Equatable {
    /// Its node path in the root's tree (it ends with its type and key).
    var path: String
    /// Its module-qualified type name.
    var type: String
    /// `starting`, `running`, `reconnecting` or `unavailable`.
    var status: String
    /// The worker hosting it, if any.
    var worker: String?
    /// Words for the status: `on worker-1`, or why it is unavailable.
    var detail: String

    /// A status as given, field by field.
    init(path: String, type: String, status: String, worker: String?, detail: String) {
        self.path = path
        self.type = type
        self.status = status
        self.worker = worker
        self.detail = detail
    }

    init(_ child: RemoteRuntimeInspection.Child) {
        path = child.path
        type = child.typeName
        status = child.status.name
        worker = child.worker
        detail = Self.detail(of: child.status)
    }

    /// A child as the runtime publishes its status, under `path` (its path in its own tree).
    init(_ child: TreeChildStatus, path: String) {
        self.path = path
        type = child.typeName
        status = child.status.name
        if case .running(let worker) = child.status { self.worker = worker } else { worker = nil }
        detail = Self.detail(of: child.status)
    }

    /// The words `/api/tree` and the rendering messages show beside a status.
    static func detail(of status: RemoteChildStatus) -> String {
        switch status {
        case .starting: ""
        case .reconnecting: "showing its last rendering"
        case .running(let worker): "on \(worker)"
        case .unavailable(let error): error.description
        }
    }
}
