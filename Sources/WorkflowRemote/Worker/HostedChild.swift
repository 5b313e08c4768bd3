@_spi(WorkflowRuntime) import Workflow

/// Creates the worker-side host of a child from its type name's registration.
protocol HostedChildFactory: Sendable {
    /// Decodes `props` and starts the child on `engine`'s loop. Throws `RemoteChildError`.
    func start(
        childID: UInt64, path: String, props: UnsafeRawBufferPointer, propsSequence: UInt64,
        snapshot: TreeSnapshot?, engine: RemoteEngine
    ) throws -> any AnyHostedChild
}

struct TypedHostedChildFactory<W: RemotableWorkflow>: HostedChildFactory {
    func start(
        childID: UInt64, path: String, props: UnsafeRawBufferPointer, propsSequence: UInt64,
        snapshot: TreeSnapshot?, engine: RemoteEngine
    ) throws -> any AnyHostedChild {
        let workflow: W
        do {
            workflow = try engine.codec.decode(W.self, from: props, reusing: engine.codingScratch)
        } catch {
            throw RemoteChildError.undecodableProps(typeName: W.remoteTypeName, reason: "\(error)")
        }
        // A snapshot this build cannot read is refused, not replaced by a fresh state: the parent
        // keeps it for a worker that can (a newer build, in a rolling upgrade).
        if let snapshot, snapshot.state != nil {
            do {
                _ = try StateCoding.decode(snapshot, for: W.self)
            } catch {
                throw RemoteChildError.undecodableSnapshot(typeName: W.remoteTypeName, reason: error.description)
            }
        }
        return HostedChild(childID: childID, path: path, workflow: workflow, propsSequence: propsSequence, snapshot: snapshot, engine: engine)
    }
}

/// A child this process hosts for a parent elsewhere: a `WorkflowHost` on the runtime's loop
/// whose every rendering and output is forwarded to the parent.
final class HostedChild<W: RemotableWorkflow>: AnyHostedChild {
    let childID: UInt64
    let path: String
    let exporter: SinkTable
    var epoch: UInt64 = 0
    private var host: WorkflowHost<HostedRoot<W>>?
    unowned let engine: RemoteEngine
    /// Where the child's outputs go, made once (`HostedRoot.forwardOutput`).
    private let forwardOutput: @Sendable (W.Output) -> Void

    init(childID: UInt64, path: String, workflow: W, propsSequence: UInt64, snapshot: TreeSnapshot?, engine: RemoteEngine) {
        self.childID = childID
        self.path = path
        self.engine = engine
        let exporter = SinkTable()
        self.exporter = exporter
        let forwarder = engine.forwarder(childID: childID, path: path, exporter: exporter)
        let forwardOutput: @Sendable (W.Output) -> Void = { forwarder.output($0) }
        self.forwardOutput = forwardOutput
        host = WorkflowHost(
            workflow: HostedRoot(child: workflow, propsSequence: propsSequence, forwardOutput: forwardOutput),
            options: .optimized,
            observers: engine.configuration.hostedChildObservers,
            snapshot: snapshot.map { HostedRoot<W>.wrap($0) },
            loop: engine.runtime.map { HostedChildLoop(runtime: $0, scope: path) },
            listener: HostListener(
                onRendering: { forwarder.rendering($0.rendering, propsSequence: $0.propsSequence) },
                // The root emits nothing itself: its child's outputs go by `forwardOutput`.
                onOutput: { _ in }))
    }

    func update(props: UnsafeRawBufferPointer, propsSequence: UInt64) throws {
        do {
            let workflow = try engine.codec.decode(W.self, from: props, reusing: engine.codingScratch)
            host?.updateOnLoop(workflow: HostedRoot(child: workflow, propsSequence: propsSequence, forwardOutput: forwardOutput))
        } catch {
            throw RemoteChildError.undecodableProps(typeName: W.remoteTypeName, reason: "\(error)")
        }
    }

    func route(for token: String) -> HostedEventRoute? {
        if let route = exporter.route(for: token) { return .sink(route) }
        return engine.forwardingRoute(for: token).map { .forward(childID: $0.childID, token: $0.token) }
    }

    func deliver(event bytes: UnsafeRawBufferPointer, via route: HostedEventRoute) -> Bool {
        switch route {
        case .sink(let route): exporter.deliver(bytes: bytes, via: route, codec: engine.codec)
        case .forward(let childID, let token): engine.forward(event: Array(bytes), token: token, toChild: childID)
        }
    }

    func holdingDrains(_ body: () -> Void) {
        guard let host else { return body() }
        host.holdingDrains(body)
    }

    func drain() {
        host?.drainOnLoop()
    }

    func apply() {
        host?.applyOnLoop()
    }

    func render() {
        host?.renderOnLoop()
    }

    func snapshot() -> TreeSnapshot? {
        host?.snapshotOnLoop().children.first?.snapshot
    }

    func stop() {
        host?.stopOnLoop()
        host = nil
    }
}

/// The engine's type-erased view of a hosted child.
protocol AnyHostedChild: AnyObject {
    var childID: UInt64 { get }
    var path: String { get }
    /// The fencing token of the placement this copy belongs to (from its START): messages about
    /// the child carry it both ways, and one for another placement is dropped.
    var epoch: UInt64 { get set }
    /// Applies new props (after anything queued) without rendering: `render()` renders.
    func update(props: UnsafeRawBufferPointer, propsSequence: UInt64) throws
    /// Where events for `token` go (`nil`: a token the child does not know), resolved once per
    /// batch of events.
    func route(for token: String) -> HostedEventRoute?
    func deliver(event bytes: UnsafeRawBufferPointer, via route: HostedEventRoute) -> Bool
    /// Runs `body`, which delivers events and applies each (`apply()`), with the host's drains
    /// held: a delivered event schedules no drain job of its own.
    func holdingDrains(_ body: () -> Void)
    /// Applies queued actions now and renders.
    func drain()
    /// Applies queued actions now (the event just delivered) without rendering: the engine
    /// renders once per batch of events (`render()`), so only the rendering after the last one
    /// is made and sent.
    func apply()
    /// Renders if anything was applied since the last render.
    func render()
    /// The child's state snapshot, for acknowledgements.
    func snapshot() -> TreeSnapshot?
    func stop()
}

/// Where an event for a hosted child goes.
enum HostedEventRoute {
    /// To a sink of one of the child's renderings (or, for a token of another incarnation, the
    /// sink in the same slot of its latest): decoded and sent there.
    case sink(SinkTable.ResolvedToken)
    /// To a remote child of the hosted child, for a sink this process passed on in a rendering
    /// the hosted child's table does not hold (it restarted since): passed on as it is.
    case forward(childID: UInt64, token: String)
}

/// The root a worker hosts a child under: it tags each rendering with the props sequence it was
/// computed for, so the parent can tell a rendering of current props from a stale one.
struct HostedRoot<W: RemotableWorkflow>: Workflow, Sendable {
    let child: W
    let propsSequence: UInt64
    /// Sends each of the child's outputs to the parent as the child emits it (to the engine's
    /// forwarder, which tags it with the event being applied), without an action of this root
    /// per output. Made once per hosted child and handed to every root: a closure written in
    /// `render` captures the generic context, an allocation per render pass.
    let forwardOutput: @Sendable (W.Output) -> Void

    struct Tagged: Sendable {
        let rendering: W.Rendering
        let propsSequence: UInt64
    }

    typealias Output = W.Output

    func render(state: Void, context: RenderContext<HostedRoot<W>>) -> Tagged {
        Tagged(rendering: context.render(workflow: child, key: "", passingOutputsTo: forwardOutput), propsSequence: propsSequence)
    }

    /// A snapshot of the child as a snapshot of this root, so the child restores when rendered.
    static func wrap(_ childSnapshot: TreeSnapshot) -> TreeSnapshot {
        TreeSnapshot(workflowType: workflowTypeName, state: nil, children: [.init(key: "", snapshot: childSnapshot)])
    }
}
