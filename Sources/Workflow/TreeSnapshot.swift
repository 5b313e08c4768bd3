import Foundation

/// The saved state of a workflow tree: a node's state plus its children's, recursively.
///
/// A host can produce one on demand and start from one. Children are matched by stable type name
/// and key, so a restored tree picks up each child's state the first time the parent renders the
/// same child again. Only `Codable` states are saved; other nodes restart from
/// `makeInitialState()`. Bytes are JSON, which keeps snapshots inspectable and portable between
/// processes and builds.
public struct TreeSnapshot: Codable, Sendable, Equatable {
    /// A child's snapshot together with the key it was rendered with.
    public struct Child: Codable, Sendable, Equatable {
        /// The key the parent rendered the child with.
        public var key: String
        /// The child's own snapshot (which names its type).
        public var snapshot: TreeSnapshot

        public init(key: String, snapshot: TreeSnapshot) {
            self.key = key
            self.snapshot = snapshot
        }
    }

    /// The stable type name of the workflow (see `Workflow.workflowTypeName`).
    public var workflowType: String
    /// The version of the state encoding (see `StablyNamedWorkflow.stateVersion`).
    public var stateVersion: Int
    /// The JSON-encoded state, or `nil` when the state is not `Codable`.
    public var state: Data?
    /// The children, in the order they were rendered.
    public var children: [Child]

    public init(workflowType: String, stateVersion: Int = 1, state: Data?, children: [Child] = []) {
        self.workflowType = workflowType
        self.stateVersion = stateVersion
        self.state = state
        self.children = children
    }

    /// The child snapshot saved for a child of `type` rendered with `key`.
    public func child(type: String, key: String) -> TreeSnapshot? {
        children.first { $0.key == key && $0.snapshot.workflowType == type }?.snapshot
    }

    /// Encodes the snapshot for storage.
    public func encoded() throws -> Data {
        Data(jsonBytes())
    }

    /// Decodes a stored snapshot; throws `SnapshotError.corrupt` on bad bytes.
    public static func decode(from data: Data) throws(SnapshotError) -> TreeSnapshot {
        do {
            return try JSONDecoder().decode(TreeSnapshot.self, from: data)
        } catch {
            throw .corrupt(String(describing: error))
        }
    }
}

/// Why a snapshot could not be used.
public enum SnapshotError: Error, Equatable, CustomStringConvertible {
    /// The bytes are not a snapshot.
    case corrupt(String)
    /// The snapshot is of another workflow type.
    case typeMismatch(expected: String, found: String)
    /// The snapshot's state was written by another state version.
    case versionMismatch(type: String, expected: Int, found: Int)
    /// The state bytes do not decode as the workflow's `State`.
    case undecodableState(type: String, reason: String)

    public var description: String {
        switch self {
        case .corrupt(let reason): "corrupt snapshot: \(reason)"
        case .typeMismatch(let expected, let found): "snapshot is of \(found), expected \(expected)"
        case .versionMismatch(let type, let expected, let found):
            "snapshot of \(type) has state version \(found), expected \(expected)"
        case .undecodableState(let type, let reason): "snapshot state of \(type) does not decode: \(reason)"
        }
    }
}

/// A state that writes its snapshot JSON itself, as its `Codable` conformance would encode it
/// (what `Decodable` reads back is the same value): the runtime's own states that every durable
/// checkpoint encodes (a remote child's stand-in), where an encoder's containers cost more than
/// the bytes.
package protocol SnapshotJSONWriting {
    func snapshotJSON() -> [UInt8]
}

/// Encoding and decoding of a node's state, for whatever `State` turns out to be `Codable`.
/// `package`: a worker checks a snapshot before it starts a child from it (`WorkflowRemote`).
package enum StateCoding {
    /// The state's snapshot JSON, keys sorted (the same bytes for the same state, in every
    /// process), or `nil` when the state is not `Encodable` or its encoding throws. Written by
    /// `DirectJSONEncoder`, or by `JSONEncoder` (`.sortedKeys`, the same bytes) for a state holding
    /// what only `JSONEncoder` writes exactly: every durable checkpoint encodes its nodes' states,
    /// and `JSONEncoder`'s boxes cost more than the bytes.
    static func encode<State>(_ state: State) -> Data? {
        if let writing = state as? any SnapshotJSONWriting { return Data(writing.snapshotJSON()) }
        guard let encodable = state as? any Encodable else { return nil }
        return encodeOpened(encodable)
    }

    private static func encodeOpened<T: Encodable>(_ value: T) -> Data? {
        if let bytes = try? DirectJSONEncoder(escapingSlashes: true).encode(value) { return Data(bytes) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try? encoder.encode(value)
    }

    /// The state `snapshot` holds for a node of `W`: decoded, or migrated from an earlier state
    /// version (`StateMigrating`). Throws why it cannot be.
    package static func decode<W: Workflow>(_ snapshot: TreeSnapshot, for type: W.Type) throws(SnapshotError) -> W.State {
        let identity = stableIdentity(of: W.self)
        guard snapshot.workflowType == identity.name else {
            throw .typeMismatch(expected: identity.name, found: snapshot.workflowType)
        }
        if snapshot.stateVersion < identity.version, let migrating = W.self as? any StateMigrating.Type, let data = snapshot.state {
            do {
                guard let state = try migrating.migratedState(from: data, version: snapshot.stateVersion) as? W.State else {
                    throw SnapshotError.undecodableState(type: identity.name, reason: "the migrated value has another type")
                }
                return state
            } catch let error as SnapshotError {
                throw error
            } catch {
                throw .undecodableState(
                    type: identity.name, reason: "migrating from state version \(snapshot.stateVersion): \(String(describing: error))")
            }
        }
        guard snapshot.stateVersion == identity.version else {
            throw .versionMismatch(type: identity.name, expected: identity.version, found: snapshot.stateVersion)
        }
        guard let data = snapshot.state, let decodable = W.State.self as? any Decodable.Type else {
            throw .undecodableState(type: identity.name, reason: "state is not Codable or was not saved")
        }
        do {
            guard let state = try decodeOpened(decodable, from: data) as? W.State else {
                throw SnapshotError.undecodableState(type: identity.name, reason: "decoded value has another type")
            }
            return state
        } catch let error as SnapshotError {
            throw error
        } catch {
            throw .undecodableState(type: identity.name, reason: String(describing: error))
        }
    }

    private static func decodeOpened<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try JSONDecoder().decode(type, from: data)
    }
}
