import Workflow

/// The remotable workflow types a worker can host, by stable type name.
///
/// Both processes must agree on a type's name (its `StablyNamedWorkflow.stableTypeName` when it
/// declares one, else `Workflow.workflowTypeName`); the worker looks the name in START up here.
/// A name it does not know is answered with an `unknownType` error, never a crash.
public struct RemotableRegistry: Sendable {
    private var factories: [String: any HostedChildFactory] = [:]
    /// The state version of each registered type (`StablyNamedWorkflow.stateVersion`, else 1).
    package private(set) var stateVersions: [String: Int] = [:]

    public init() {}

    /// Makes `type` hostable under its stable type name, in place of any type registered under
    /// that name before.
    public mutating func register<W: RemotableWorkflow>(_ type: W.Type) {
        factories[W.remoteTypeName] = TypedHostedChildFactory<W>()
        stateVersions[W.remoteTypeName] = (W.self as? any StablyNamedWorkflow.Type)?.stateVersion ?? 1
    }

    /// The same registry with `type` registered.
    public func registering<W: RemotableWorkflow>(_ type: W.Type) -> RemotableRegistry {
        var copy = self
        copy.register(type)
        return copy
    }

    /// The registered type names, sorted (what a worker announces).
    public var typeNames: [String] { factories.keys.sorted() }

    func factory(for typeName: String) -> (any HostedChildFactory)? {
        factories[typeName]
    }
}
