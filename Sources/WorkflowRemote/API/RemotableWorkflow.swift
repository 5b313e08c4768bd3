import Workflow

/// A workflow that can run in another process.
///
/// Its props (the workflow value), rendering and output cross the wire, so they are `Codable`;
/// `State` should be `Codable` too if the child is to survive moving between workers. Sinks in
/// the rendering need nothing special: a `Sink` made by the child's `RenderContext` is encoded as
/// a token and calls back into the child's process.
public protocol RemotableWorkflow: Workflow, Codable, Sendable
where Rendering: Codable & Sendable, Output: Codable & Sendable {
    /// What the parent uses for this child while the worker has not rendered it yet (the first
    /// pass of a new child, whose rendering is still on the wire) or cannot (no worker hosts the
    /// type). It lets a render pass start every new remote child at once instead of waiting a
    /// round trip per child, and gives screens something honest to show when a worker is gone.
    /// Renderings that contain a placeholder for a pending child are never published.
    ///
    /// Put `Sink.inert` where the rendering has sinks: it refuses what it is sent (`send` returns
    /// `false`, so a tap on a placeholder screen does not claim it was taken) and, unlike
    /// `Sink { _ in }`, it encodes, so a worker can forward a rendering that holds the
    /// placeholder of its own not-yet-placed remote child.
    func placeholderRendering() -> Rendering
}

extension RemotableWorkflow {
    /// The name a child of this type is known by between processes: in START, in a worker's
    /// registry and HELLO, and in placement rules. Its `StablyNamedWorkflow.stableTypeName` when
    /// it declares one, as its snapshots do, so that a build that renames or moves the type, or
    /// changes its state version (a worker of the next build in a rolling upgrade), still hosts
    /// the children of the build before; else `workflowTypeName`.
    static var remoteTypeName: String {
        (Self.self as? any StablyNamedWorkflow.Type)?.stableTypeName ?? workflowTypeName
    }

    /// Marks this child to run where `placement` says. The parent renders the result exactly like
    /// the child itself (`.rendered(in:key:)`, with or without an output map) and gets the child's
    /// rendering back.
    ///
    /// A placement other than `.local` needs the host to run on a `RemoteRuntime`; on any other
    /// loop the child renders in the parent's process and a warning is logged once per child
    /// (see `RemoteWorkflow.render(state:context:)` for why that is a fallback, not a crash).
    public func remote(on placement: RemotePlacement) -> RemoteChild<Self> {
        RemoteChild(child: self, placement: placement)
    }
}

/// A child marked to run where its placement says.
///
/// `.local` renders the child itself (same identity, same node as if it had not been marked), so
/// switching a placement to local changes nothing else; any other placement renders a
/// `RemoteWorkflow` proxy for it.
public struct RemoteChild<Child: RemotableWorkflow>: AnyWorkflowConvertible {
    /// The child's props.
    public var child: Child
    /// Where it runs.
    public var placement: RemotePlacement

    public func asAnyWorkflow() -> AnyWorkflow<Child.Rendering, Child.Output> {
        if placement == .local { return child.asAnyWorkflow() }
        return RemoteWorkflow(child: child, placement: placement).asAnyWorkflow()
    }

    /// Renders the child, or its `RemoteWorkflow` proxy, straight through the context: the same
    /// node as through `asAnyWorkflow()` (a child is identified by its concrete workflow type and
    /// key), without the type-erased wrapper and its closures, which would be allocated for
    /// every remote child on every render pass.
    public func renderAsChild<Parent>(
        in context: RenderContext<Parent>,
        key: String,
        outputMap: @escaping (Child.Output) -> AnyWorkflowAction<Parent>
    ) -> Child.Rendering {
        if placement == .local { return child.renderAsChild(in: context, key: key, outputMap: outputMap) }
        return RemoteWorkflow(child: child, placement: placement).renderAsChild(in: context, key: key, outputMap: outputMap)
    }
}
