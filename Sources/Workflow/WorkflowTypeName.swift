/// Stable names for workflow types.
///
/// Snapshots and remote children must name a workflow type in a way two processes (or two builds)
/// agree on; `ObjectIdentifier` is neither stable nor meaningful across processes. The default is
/// the module-qualified type name; override it to survive a rename or a module move.
extension Workflow {
    /// The name this workflow type is known by in snapshots and on the wire.
    ///
    /// The text `String(reflecting: Self.self)` prints, read from the runtime's own cache of
    /// type names: printing a type checks the value against the printing protocols and builds
    /// a `Mirror` first (about 1 µs a call, asked for every new node and remote child).
    public static var workflowTypeName: String { _typeName(Self.self, qualified: true) }
}

/// Declares a stable type name and a state schema version for a workflow.
///
/// Conform when the default name (module-qualified Swift name) is not stable enough, or when
/// the snapshot format of `State` changes: a snapshot written with another version is not decoded
/// (misreading old bytes would be worse) unless the workflow is `StateMigrating` and the snapshot
/// is older. A rejected snapshot is reported (`WorkflowObserver.snapshotWasRejected`; a remote
/// child's worker refuses to start it, and the parent shows why).
public protocol StablyNamedWorkflow: Workflow {
    /// The stable name of the type.
    static var stableTypeName: String { get }
    /// The version of `State`'s snapshot encoding.
    static var stateVersion: Int { get }
}

extension StablyNamedWorkflow {
    public static var stateVersion: Int { 1 }
}

/// The name and version the runtime uses for `W`, honouring `StablyNamedWorkflow`.
func stableIdentity<W: Workflow>(of type: W.Type) -> (name: String, version: Int) {
    if let named = type as? any StablyNamedWorkflow.Type {
        return (named.stableTypeName, named.stateVersion)
    }
    return (W.workflowTypeName, 1)
}
