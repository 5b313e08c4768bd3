import Foundation
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

    /// One registered root: how to start it as the shared root, and as a client's session.
    private struct Entry: Sendable {
        /// The shared root's factory (`nil`: the root needs props no default gives).
        var shared: Factory?
        /// Starts a session from its client's props (`start.props`).
        var session: @Sendable (RootStart) throws(SessionError) -> any ClusterRootSession
    }

    private var entries: [String: Entry] = [:]

    /// An empty registry.
    public init() {}

    /// Makes `factory` available under `name` (for a session built by hand; most roots use
    /// `register(_:frames:root:)`).
    public mutating func register(_ name: String, _ factory: @escaping Factory) {
        let session: @Sendable (RootStart) throws(SessionError) -> any ClusterRootSession = { start in factory(start) }
        entries[name] = Entry(shared: factory, session: session)
    }

    /// Makes the workflow `root()` returns hostable under `name`: the coordinator hosts it in a
    /// `WorkflowRootSession`, serving its renderings as JSON. `frames` formats printed frames
    /// (default: `RenderedFrame.generic`).
    public mutating func register<Root: Workflow & Sendable>(
        _ name: String, frames: (@Sendable (Root.Rendering, RootRenderingJSON) -> RenderedFrame)? = nil,
        root: @escaping @Sendable () -> Root
    ) where Root.Rendering: Encodable & Sendable, Root.Output: Sendable {
        let factory: Factory = { start in Self.session(name, root(), start, frames) }
        let session: @Sendable (RootStart) throws(SessionError) -> any ClusterRootSession = { start throws(SessionError) in
            // A root without props takes none: JSON null or an empty object at most.
            if let props = start.props, !Self.isEmpty(props) {
                throw .undecodableProps(root: name, reason: "\(name) takes no props")
            }
            return factory(start)
        }
        entries[name] = Entry(shared: factory, session: session)
    }

    /// Makes `root(props)` hostable under `name`, each session built from the props its client
    /// sends (`POST /api/sessions` with `{"root": NAME, "props": {…}}`, decoded as `Props`).
    /// As the shared root (`coordinator.root`) it is built from the props `{}` decodes to; a
    /// root whose props cannot be empty can only be hosted as sessions.
    public mutating func register<Root: Workflow & Sendable, Props: Decodable & Sendable>(
        _ name: String, props: Props.Type, frames: (@Sendable (Root.Rendering, RootRenderingJSON) -> RenderedFrame)? = nil,
        root: @escaping @Sendable (Props) -> Root
    ) where Root.Rendering: Encodable & Sendable, Root.Output: Sendable {
        var shared: Factory?
        if let empty = try? JSONDecoder().decode(Props.self, from: Data("{}".utf8)) {
            shared = { start in Self.session(name, root(empty), start, frames) }
        }
        let session: @Sendable (RootStart) throws(SessionError) -> any ClusterRootSession = { start throws(SessionError) in
            let props: Props
            do {
                props = try JSONDecoder().decode(Props.self, from: start.props ?? Data("{}".utf8))
            } catch {
                throw .undecodableProps(root: name, reason: DecodingFailureWords.reason(error))
            }
            return Self.session(name, root(props), start, frames)
        }
        entries[name] = Entry(shared: shared, session: session)
    }

    /// The same registry with `root` registered under `name` for props `Props` (see
    /// `register(_:props:frames:root:)`).
    public func registering<Root: Workflow & Sendable, Props: Decodable & Sendable>(
        _ name: String, props: Props.Type, frames: (@Sendable (Root.Rendering, RootRenderingJSON) -> RenderedFrame)? = nil,
        root: @escaping @Sendable (Props) -> Root
    ) -> RootWorkflowRegistry where Root.Rendering: Encodable & Sendable, Root.Output: Sendable {
        var copy = self
        copy.register(name, props: props, frames: frames, root: root)
        return copy
    }

    private static func session<Root: Workflow & Sendable>(
        _ name: String, _ workflow: Root, _ start: RootStart, _ frames: (@Sendable (Root.Rendering, RootRenderingJSON) -> RenderedFrame)?
    ) -> any ClusterRootSession where Root.Rendering: Encodable & Sendable, Root.Output: Sendable {
        WorkflowRootSession(
            name: name, workflow: workflow, snapshot: start.snapshot, loop: start.loop ?? start.runtime, observers: start.observers,
            frames: frames, logger: start.logger, retainedTokens: 4096, durability: start.durability,
            renderingSequence: start.renderingSequence, tokenMark: start.tokenMark)
    }

    private static func isEmpty(_ props: Data) -> Bool {
        guard let value = try? JSONSerialization.jsonObject(with: props, options: [.fragmentsAllowed]) else { return false }
        return value is NSNull || (value as? [String: Any])?.isEmpty == true
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
    public var names: [String] { entries.keys.sorted() }

    /// The shared root's factory for `name`, if registered (and buildable without props).
    package func factory(named name: String) -> Factory? { entries[name]?.shared }

    /// Starts a session of the root `name` from `start` (its props in `start.props`).
    package func startSession(named name: String, _ start: RootStart) throws(SessionError) -> any ClusterRootSession {
        guard let entry = entries[name] else { throw .unknownRoot(name, known: names) }
        return try entry.session(start)
    }

    /// The root configured as `configured` (`coordinator.root`; empty: the only registered root)
    /// and its factory. Checked by the coordinator's command before anything starts, so a wrong
    /// name is a configuration error (exit 78).
    package func root(configured: String) throws(SelectionError) -> (name: String, factory: Factory) {
        let name: String
        if configured.isEmpty {
            guard names.count == 1 else { throw .rootNotNamed(known: names) }
            name = names[0]
        } else {
            name = configured
        }
        guard let entry = entries[name] else { throw .unknownRoot(name, known: names) }
        guard let factory = entry.shared else { throw .needsProps(name) }
        return (name, factory)
    }

    /// Why the configured root cannot be hosted.
    package enum SelectionError: Error, Equatable, CustomStringConvertible {
        /// `coordinator.root` names no registered root.
        case unknownRoot(String, known: [String])
        /// `coordinator.root` is not set and the application registers several roots (or none).
        case rootNotNamed(known: [String])
        /// `coordinator.root` names a root whose props cannot be empty: it can only be hosted
        /// as sessions, each with its client's props.
        case needsProps(String)

        /// A one-line explanation for the log.
        package var description: String {
            switch self {
            case .unknownRoot(let name, let known): "unknown root workflow \"\(name)\" (known: \(known.joined(separator: ", ")))"
            case .rootNotNamed(let known):
                "no root workflow named: set coordinator.root or --root to one of \(known.joined(separator: ", "))"
            case .needsProps(let name): "root workflow \"\(name)\" needs props: it can only be hosted as sessions"
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
    /// The JSON props a session's client sent (`nil`: none, and always for the shared root).
    public var props: Data?
    /// The loop the root's host runs on, when not the runtime itself (a session's `SessionLoop`).
    package var loop: (any RuntimeLoop)?
    /// The sequence number the root's renderings continue after (a reactivated session's last).
    package var renderingSequence: UInt64 = 0
    /// What a session's sink tokens start with (`TreeMark`; `nil`: the shared root's have none).
    package var tokenMark: String?

    /// Creates a value.
    package init(runtime: RemoteRuntime, snapshot: TreeSnapshot?, logger: Logger, observers: [any WorkflowObserver] = []) {
        self.runtime = runtime
        self.snapshot = snapshot
        self.logger = logger
        self.observers = observers
    }
}
