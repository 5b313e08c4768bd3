import Logging
import Workflow
import WorkflowRemote

/// The root workflows a coordinator can host, by name.
///
/// Configuration names the root (`coordinator.root`); each entry starts the root on the
/// coordinator's runtime. A root's remote children should be placed `.configured`, so the
/// file's placement table decides where they run.
public struct RootWorkflowRegistry: Sendable {
    /// Starts a root as `start` says (its runtime, the snapshot to restore, its logger).
    public typealias Factory = @Sendable (RootStart) -> any ClusterRootSession

    private var factories: [String: Factory] = [:]

    /// An empty registry.
    public init() {}

    /// Makes `factory` available under `name` (for a session built by hand; most roots use
    /// `register(_:frames:root:)`).
    public mutating func register(_ name: String, _ factory: @escaping Factory) {
        factories[name] = factory
    }

    /// Makes the workflow `root()` returns hostable under `name`: the coordinator hosts it in a
    /// `WorkflowRootSession`, serving its renderings as JSON. `frames` formats printed frames
    /// (default: `RenderedFrame.generic`).
    public mutating func register<Root: Workflow & Sendable>(
        _ name: String, frames: (@Sendable (Root.Rendering, RootRenderingJSON) -> RenderedFrame)? = nil,
        root: @escaping @Sendable () -> Root
    ) where Root.Rendering: Encodable & Sendable, Root.Output: Sendable {
        factories[name] = { start in
            WorkflowRootSession(
                name: name, workflow: root(), snapshot: start.snapshot, loop: start.runtime, observers: start.observers, frames: frames,
                logger: start.logger, retainedTokens: 4096, durability: start.durability)
        }
    }

    /// The same registry with `root` registered under `name` (see `register(_:frames:root:)`).
    public func registering<Root: Workflow & Sendable>(
        _ name: String, frames: (@Sendable (Root.Rendering, RootRenderingJSON) -> RenderedFrame)? = nil,
        root: @escaping @Sendable () -> Root
    ) -> RootWorkflowRegistry where Root.Rendering: Encodable & Sendable, Root.Output: Sendable {
        var copy = self
        copy.register(name, frames: frames, root: root)
        return copy
    }

    /// The registered names, sorted.
    public var names: [String] { factories.keys.sorted() }

    /// The factory for `name`, if registered.
    public func factory(named name: String) -> Factory? { factories[name] }

    /// The root configured as `configured` (`coordinator.root`; empty: the only registered root)
    /// and its factory. Checked by the coordinator's command before anything starts, so a wrong
    /// name is a configuration error (exit 78).
    public func root(configured: String) throws(SelectionError) -> (name: String, factory: Factory) {
        let name: String
        if configured.isEmpty {
            guard names.count == 1 else { throw .rootNotNamed(known: names) }
            name = names[0]
        } else {
            name = configured
        }
        guard let factory = factories[name] else { throw .unknownRoot(name, known: names) }
        return (name, factory)
    }

    /// Why the configured root cannot be hosted.
    public enum SelectionError: Error, Equatable, CustomStringConvertible {
        /// `coordinator.root` names no registered root.
        case unknownRoot(String, known: [String])
        /// `coordinator.root` is not set and the application registers several roots (or none).
        case rootNotNamed(known: [String])

        /// A one-line explanation for the log.
        public var description: String {
            switch self {
            case .unknownRoot(let name, let known): "unknown root workflow \"\(name)\" (known: \(known.joined(separator: ", ")))"
            case .rootNotNamed(let known):
                "no root workflow named: set coordinator.root or --root to one of \(known.joined(separator: ", "))"
            }
        }
    }
}

/// What a registry's factory gets to start a root with.
public struct RootStart: Sendable {
    /// The coordinator's runtime: the root's host runs on it, so remote children reach workers.
    public var runtime: RemoteRuntime
    /// The tree to restore (`--restore`), or `nil` to start fresh.
    public var snapshot: TreeSnapshot?
    /// Where the session logs (e.g. a rendering that cannot be encoded).
    public var logger: Logger
    /// Hooks the root's host reports to (the coordinator's metrics).
    public var observers: [any WorkflowObserver]
    /// The group commit to the coordinator's store, when it has one: a `WorkflowRootSession`
    /// answers an event only once it is durable (a session built by hand may ignore it, and is
    /// then not durable).
    package var durability: CheckpointCommitter?

    /// Creates a value.
    public init(runtime: RemoteRuntime, snapshot: TreeSnapshot?, logger: Logger, observers: [any WorkflowObserver] = []) {
        self.runtime = runtime
        self.snapshot = snapshot
        self.logger = logger
        self.observers = observers
    }
}
