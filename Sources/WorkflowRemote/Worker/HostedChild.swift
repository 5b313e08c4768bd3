@_spi(WorkflowRuntime) import Workflow
import WireProtocol

/// Creates the worker-side host of a child from its type name's registration.
protocol HostedChildFactory: Sendable {
    /// Decodes `props` and starts the child in `environment`. Throws `RemoteChildError`.
    func start(
        childID: UInt64, path: String, props: UnsafeRawBufferPointer, propsSequence: UInt64,
        snapshot: TreeSnapshot?, environment: HostedChildEnvironment
    ) throws -> any AnyHostedChild
}

/// What a hosted child is given by the worker's driver when it starts, instead of a reference to
/// the driver: the codec for its props and events, where its renderings and outputs go (a
/// channel tagged with its child id), the loop it renders on and its observers. The child
/// reaches nothing else of the driver; what is done with its events and products is the
/// driver's (`WorkerDriver.swift`).
struct HostedChildEnvironment {
    let codec: any WireCodec
    /// The coder storage the loop's decodes reuse.
    let codingScratch: WireCodingScratch
    /// The sinks of the child's renderings, by token: where the parent's events for it go.
    let exporter: SinkTable
    /// Where the child's renderings and outputs go (queued for the next flush).
    let forwarder: HostedChildForwarder
    /// The loop the child's host runs on (`nil` once the runtime is gone).
    let loop: HostedChildLoop?
    let observers: [any WorkflowObserver]
}

struct TypedHostedChildFactory<W: RemotableWorkflow>: HostedChildFactory {
    func start(
        childID: UInt64, path: String, props: UnsafeRawBufferPointer, propsSequence: UInt64,
        snapshot: TreeSnapshot?, environment: HostedChildEnvironment
    ) throws -> any AnyHostedChild {
        let workflow: W
        do {
            workflow = try environment.codec.decode(W.self, from: props, reusing: environment.codingScratch)
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
        return HostedChild(childID: childID, path: path, workflow: workflow, propsSequence: propsSequence, snapshot: snapshot, environment: environment)
    }
}

/// A child this process hosts for a parent elsewhere: a `WorkflowHost` on the runtime's loop
/// whose every rendering and output is forwarded to the parent.
final class HostedChild<W: RemotableWorkflow>: AnyHostedChild {
    let childID: UInt64
    let path: String
    let exporter: SinkTable
    private var host: WorkflowHost<HostedRoot<W>>?
    private let codec: any WireCodec
    private let codingScratch: WireCodingScratch
    /// Where the child's outputs go, made once (`HostedRoot.forwardOutput`).
    private let forwardOutput: @Sendable (W.Output) -> Void

    init(childID: UInt64, path: String, workflow: W, propsSequence: UInt64, snapshot: TreeSnapshot?, environment: HostedChildEnvironment) {
        self.childID = childID
        self.path = path
        self.exporter = environment.exporter
        self.codec = environment.codec
        self.codingScratch = environment.codingScratch
        let forwarder = environment.forwarder
        let forwardOutput: @Sendable (W.Output) -> Void = { forwarder.output($0) }
        self.forwardOutput = forwardOutput
        host = WorkflowHost(
            workflow: HostedRoot(child: workflow, propsSequence: propsSequence, forwardOutput: forwardOutput),
            options: .optimized,
            observers: environment.observers,
            snapshot: snapshot.map { HostedRoot<W>.wrap($0) },
            loop: environment.loop,
            listener: HostListener(
                onRendering: { forwarder.rendering($0.rendering, propsSequence: $0.propsSequence) },
                // The root emits nothing itself: its child's outputs go by `forwardOutput`.
                onOutput: { _ in }))
    }

    func update(props: UnsafeRawBufferPointer, propsSequence: UInt64) throws {
        do {
            let workflow = try codec.decode(W.self, from: props, reusing: codingScratch)
            host?.updateOnLoop(workflow: HostedRoot(child: workflow, propsSequence: propsSequence, forwardOutput: forwardOutput))
        } catch {
            throw RemoteChildError.undecodableProps(typeName: W.remoteTypeName, reason: "\(error)")
        }
    }

    func route(for token: String) -> SinkTable.ResolvedToken? {
        exporter.route(for: token)
    }

    func deliver(event bytes: UnsafeRawBufferPointer, via route: SinkTable.ResolvedToken) -> Bool {
        exporter.deliver(bytes: bytes, via: route, codec: codec, reusing: codingScratch)
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

/// The worker driver's type-erased view of a hosted child.
protocol AnyHostedChild: AnyObject {
    var childID: UInt64 { get }
    var path: String { get }
    /// Applies new props (after anything queued) without rendering: `render()` renders.
    func update(props: UnsafeRawBufferPointer, propsSequence: UInt64) throws
    /// The sink of the child's renderings events for `token` go to (`nil`: a token its table
    /// does not hold), resolved once per batch of events.
    func route(for token: String) -> SinkTable.ResolvedToken?
    /// Decodes an event and sends it to the sink `route` names; `false` if that sink is gone.
    func deliver(event bytes: UnsafeRawBufferPointer, via route: SinkTable.ResolvedToken) -> Bool
    /// Runs `body`, which delivers events and applies each (`apply()`), with the host's drains
    /// held: a delivered event schedules no drain job of its own.
    func holdingDrains(_ body: () -> Void)
    /// Applies queued actions now and renders.
    func drain()
    /// Applies queued actions now (the event just delivered) without rendering: the driver
    /// renders once per batch of events (`render()`), so only the rendering after the last one
    /// is made and sent.
    func apply()
    /// Renders if anything was applied since the last render.
    func render()
    /// The child's state snapshot, for acknowledgements.
    func snapshot() -> TreeSnapshot?
    func stop()
}

/// The root a worker hosts a child under: it tags each rendering with the props sequence it was
/// computed for, so the parent can tell a rendering of current props from a stale one.
struct HostedRoot<W: RemotableWorkflow>: Workflow, Sendable {
    let child: W
    let propsSequence: UInt64
    /// Sends each of the child's outputs to the parent as the child emits it (to the driver's
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
