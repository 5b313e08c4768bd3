import Foundation
import Logging
@_spi(WorkflowRuntime) import Workflow

/// The parent-side stand-in for a child that runs in another process.
///
/// Rendered like any child, it keeps the child's lifecycle by its keyed identity: the first pass
/// that renders it sends START with the props, a pass with different props sends UPDATE, and the
/// first pass that no longer renders it ends its side effect, which sends STOP. Each flush of the
/// worker (outputs, then the rendering after them) arrives as one action that installs the
/// rendering and forwards every output to the parent, so one render pass shows both.
public struct RemoteWorkflow<Child: RemotableWorkflow>: Workflow {
    public typealias Rendering = Child.Rendering
    public typealias Output = Child.Output

    /// The child's props.
    public var child: Child
    /// Where it runs.
    public var placement: RemotePlacement

    public init(child: Child, placement: RemotePlacement) {
        self.child = child
        self.placement = placement
    }

    /// Holds the proxy across render passes. A class because the proxy is created lazily by the
    /// first render (it needs the node's path and the host's loop, which only a render knows).
    ///
    /// `Codable` so the parent's tree snapshot carries the remote child's state: the child's last
    /// acknowledged snapshot *and* the events sent to it that it has not acknowledged yet. A host
    /// restored from it starts the child on its worker from that snapshot and sends it those
    /// events again, so an event the parent accepted is part of the parent's state. That matters
    /// in the middle of a tree of three processes: the middle acknowledges an event to its own
    /// parent as soon as it has passed it on to the grandchild's worker, so if the middle fails
    /// over before the grandchild acknowledged it, the middle's snapshot is the only place the
    /// event still is. It also keeps the child's last rendering (as its worker encoded it), so a
    /// restored host shows that rendering at once, with status `reconnecting`, rather than the
    /// child's placeholder until the worker answers: the first frame after a restart is the last
    /// one before it.
    public final class State: Codable {
        var proxy: RemoteChildProxy<Child>?
        /// The child's snapshot this state was restored with, until a proxy takes it over.
        var restoredSnapshot: TreeSnapshot?
        /// The unacknowledged events this state was restored with, until a proxy takes them over.
        var restoredEvents: [PendingRemoteEvent] = []
        /// The child's last rendering this state was restored with, until a proxy takes it over.
        var restoredRendering: [UInt8]?
        /// Set once this node has warned that its host cannot run it remotely.
        var warnedRunningLocally = false
        /// The placement the last pass was given and what it resolved to (`nil`: local): the
        /// node's type, path and runtime (whose placement table is fixed) do not change, so
        /// the table's rules are matched again only when the placement given does.
        var resolved: (given: RemotePlacement, placement: RemotePlacement?)?

        init() {}

        private enum CodingKeys: String, CodingKey {
            case snapshot, pendingEvents, rendering
        }

        public init(from decoder: any Decoder) throws {
            // Snapshots written before pending events were kept hold the child's snapshot alone
            // (a `TreeSnapshot`, which has no `pendingEvents` key, or null).
            if let keyed = try? decoder.container(keyedBy: CodingKeys.self), keyed.contains(.pendingEvents) {
                restoredSnapshot = try keyed.decodeIfPresent(TreeSnapshot.self, forKey: .snapshot)
                restoredEvents = try keyed.decode([PendingRemoteEvent].self, forKey: .pendingEvents)
                // Absent from snapshots written before the last rendering was kept.
                restoredRendering = try keyed.decodeIfPresent(Data.self, forKey: .rendering).map { [UInt8]($0) }
            } else {
                restoredSnapshot = try decoder.singleValueContainer().decode(TreeSnapshot?.self)
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(saved.snapshot, forKey: .snapshot)
            try container.encode(saved.events, forKey: .pendingEvents)
            try container.encodeIfPresent(saved.rendering.map { Data($0) }, forKey: .rendering)
        }

        /// What a snapshot of this state saves: the proxy's, or what it was restored with.
        var saved: (snapshot: TreeSnapshot?, events: [PendingRemoteEvent], rendering: [UInt8]?) {
            if let proxy { return (proxy.snapshot, proxy.pendingEvents, proxy.renderingBytes) }
            return (restoredSnapshot, restoredEvents, restoredRendering)
        }
    }

    public func makeInitialState() -> State { State() }

    /// Renders the child through its proxy on the host's `RemoteRuntime`.
    ///
    /// On a host whose loop is not a `RemoteRuntime` (a plain `WorkflowHost`, a test, a preview)
    /// the child renders in this process instead, as a local child of this node, and the node
    /// logs a warning the first time (once per child, not once per pass). A fallback rather than
    /// a crash because the child's behaviour is the same either way (that is the point of a
    /// remote child): only process isolation is lost, so tests and previews can render a tree
    /// that names worker placements without a runtime. The warning keeps the misconfiguration
    /// from going unnoticed in production. `.configured` is local by definition when no
    /// placement table (none without a runtime) has an entry for the child, and does not warn.
    public func render(state: State, context: RenderContext<RemoteWorkflow<Child>>) -> Child.Rendering {
        let runtime: RemoteRuntime
        let scope: String
        // A session's children are known to the runtime under its prefix (see `SessionLoop`).
        var pathPrefix = ""
        switch context.loop {
        case let loop as RemoteRuntime: (runtime, scope) = (loop, "")
        case let loop as HostedChildLoop: (runtime, scope) = (loop.runtime, loop.scope)
        case let loop as SessionLoop: (runtime, scope, pathPrefix) = (loop.runtime, "", loop.pathPrefix)
        default:
            if !state.warnedRunningLocally, placement != .configured {
                state.warnedRunningLocally = true
                Logger(label: "workflow.remote").warning(
                    "a remote child renders in this process: its host does not run on a RemoteRuntime",
                    metadata: ["path": "\(context.nodePath)", "type": "\(Child.remoteTypeName)", "placement": "\(placement)"])
            }
            return child.rendered(in: context, key: "")
        }
        // Resolved once per placement given. The type name (kept by the parent role per type)
        // and path only matter for `.configured`; rules match the path within this host's
        // tree, without a session's prefix.
        let parentRole = runtime.parentRole
        let resolved: RemotePlacement?
        if let last = state.resolved, last.given == placement {
            resolved = last.placement
        } else {
            resolved = parentRole.resolve(placement, typeName: parentRole.remoteTypeName(of: Child.self), path: context.nodePath)
            state.resolved = (placement, resolved)
        }
        guard let placement = resolved else {
            return child.rendered(in: context, key: "")
        }
        let proxy: RemoteChildProxy<Child>
        if let existing = state.proxy, existing.placement == placement {
            proxy = existing
        } else {
            // A new placement (or the first render): the new proxy starts the child from the
            // last acknowledged state and sends it every event that state does not include, and
            // shows the child's last rendering until the new placement renders it.
            let (snapshot, events, rendering) =
                state.proxy?.handOver(requests: parentRole) ?? (state.restoredSnapshot, state.restoredEvents, state.restoredRendering)
            state.restoredEvents = []
            state.restoredRendering = nil
            proxy = parentRole.makeProxy(
                of: Child.self, path: pathPrefix + context.nodePath, scope: scope, placement: placement,
                snapshot: snapshot, pendingEvents: events, lastRendering: rendering)
            state.proxy = proxy
        }
        // Declared again every pass, as any sink must be to stay live: a sink the latest pass did
        // not declare again drops what it is sent (workflow-swift's rule), and the proxy's events
        // and renderings reach this node through it. The proxy's sink is kept rather than made
        // again (its closure captures nothing of the pass): six allocations less per pass. Its
        // kind is named once, with the sink: naming it costs a run-time metadata lookup.
        let kept = proxy.sink != nil && proxy.sinkKind.map { context.keepSinks(ofKind: $0) } == true
        if !kept {
            proxy.sink = makeProxySink(context)
            proxy.sinkKind = context.sinkKind(
                of: ProxyEvent<Child.Rendering, Child.Output>.self, actionType: AnyWorkflowAction<RemoteWorkflow<Child>>.self)
        }
        context.runSideEffect(key: proxy.sideEffectKey) { lifetime in
            // The parent role held weakly: the node's side effects may outlive it (a hosted
            // child's host is the loop's), and a stop then has nobody left to tell.
            lifetime.onEnded { [weak parentRole] in
                if let parentRole { proxy.stop(requests: parentRole) }
            }
        }
        return proxy.render(props: child, requests: parentRole)
    }

    private func makeProxySink(_ context: RenderContext<RemoteWorkflow<Child>>) -> Sink<ProxyEvent<Child.Rendering, Child.Output>> {
        context.makeSink(of: ProxyEvent<Child.Rendering, Child.Output>.self) { event in
            switch event {
            case .flush(let flush):
                // One action for the worker's whole flush: the rendering is installed and every
                // output cascades through the parent before the next render pass.
                AnyWorkflowAction<RemoteWorkflow<Child>> { state, context in
                    if let proxy = state.proxy, proxy.childID == flush.childID { proxy.apply(flush) }
                    for output in flush.outputs { context.emitOutput(output) }
                    return nil
                }
            case .refresh:
                // A refresh the node's last pass already answered (it rendered the proxy after
                // the request) renders nothing: when a worker with a thousand children is lost,
                // each proxy asks once, and the first pass answers them all (a render pass of the
                // whole tree per refresh was quadratic in the number of children).
                AnyWorkflowAction<RemoteWorkflow<Child>> { state, context in
                    if state.proxy?.isRefreshPending != true { context.rendersNothing() }
                    return nil
                }
            }
        }
    }
}

extension RemoteWorkflow: StablyNamedWorkflow {
    public static var stableTypeName: String { "Remote<\(Child.remoteTypeName)>" }
}

/// What a proxy feeds back into its node: a worker's flush to apply as one step, or "render
/// again" (a rendering installed directly, a failure, a worker that joined).
enum ProxyEvent<Rendering: Sendable, Output: Sendable>: Sendable {
    case flush(ProxyFlush<Rendering, Output>)
    case refresh
}

/// A worker's flush, decoded: the outputs in emission order and the rendering after them.
struct ProxyFlush<Rendering: Sendable, Output: Sendable>: Sendable {
    /// The proxy that received it: a node that has since replaced its proxy (a new placement)
    /// still forwards the outputs but does not install an old placement's rendering.
    let childID: UInt64
    let outputs: [Output]
    let rendering: (rendering: Rendering, sequence: UInt64, bytes: [UInt8])?
    /// What the worker acknowledged with these outputs: it holds once they are applied.
    let acknowledgement: Acknowledgement
}

/// An event sent to a remote child and not acknowledged by its worker yet, as a snapshot keeps
/// it: the sink's token and the encoded event.
struct PendingRemoteEvent: Codable, Sendable, Equatable {
    var token: String
    var bytes: Data
}
