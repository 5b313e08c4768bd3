import Workflow
import WorkflowRemote

/// A root workflow hosted by the coordinator, seen through what the daemon needs of it.
///
/// The coordinator chooses its root by name from configuration, so it cannot know the root's
/// rendering type; a session turns renderings into printable frames and exposes the one
/// interaction the scripted demo drives (selecting an item).
public protocol ClusterRootSession: Sendable {
    /// Calls `body` with each settled rendering, in order, until `body` returns `false`, the host
    /// stops, or the task is cancelled.
    func forEachFrame(_ body: (RenderedFrame) async -> Bool) async
    /// Selects item `id` through the latest rendering's sink, as a user would. Returns `false`
    /// when the root has nothing to select.
    func select(_ id: Int) -> Bool
    /// The root host's tree snapshot (the root's state and each remote child's last
    /// acknowledged state), for `--snapshot-file`.
    func snapshot() async -> TreeSnapshot
    /// Stops the root's host (its remote children are stopped on their workers).
    func stop() async
}

/// The root workflows a coordinator can host, by name.
///
/// Configuration names the root (`coordinator.root`); each factory starts the root on the
/// coordinator's runtime with its remote children placed `.configured`, so the file's placement
/// table decides where they run.
public struct RootWorkflowRegistry: Sendable {
    /// Starts a root on a runtime, from a snapshot when restoring (`--restore`).
    public typealias Factory = @Sendable (RemoteRuntime, TreeSnapshot?) -> any ClusterRootSession

    private var factories: [String: Factory] = [:]

    /// An empty registry.
    public init() {}

    /// The roots shipped with the package: `email-browser`.
    public static var standard: RootWorkflowRegistry {
        var registry = RootWorkflowRegistry()
        registry.register("email-browser") { EmailBrowserSession(runtime: $0, snapshot: $1) }
        return registry
    }

    /// Makes `factory` available under `name`.
    public mutating func register(_ name: String, _ factory: @escaping Factory) {
        factories[name] = factory
    }

    /// The registered names, sorted.
    public var names: [String] { factories.keys.sorted() }

    /// The factory for `name`, if registered.
    public func factory(named name: String) -> Factory? { factories[name] }
}
