/// What the parent knows about one remote child.
public enum RemoteChildStatus: Sendable, Equatable, CustomStringConvertible {
    /// Started, waiting for the worker's first rendering.
    case starting
    /// Restored from a snapshot (its parent restarted, or took over, from a store or a snapshot
    /// file) and showing the child's last rendering from before, until the worker's first
    /// rendering replaces it. Events sent to that rendering's sinks are kept, with the child's
    /// state, and delivered once the child runs again.
    case reconnecting
    /// The worker renders it; the parent has its rendering for the current props.
    case running(worker: String)
    /// It cannot run: the parent keeps its last rendering (or the placeholder) and reports why.
    case unavailable(RemoteChildError)

    /// The status without its detail: `starting`, `reconnecting`, `running` or `unavailable`
    /// (for log metadata and machine-readable output).
    public var name: String {
        switch self {
        case .starting: "starting"
        case .reconnecting: "reconnecting"
        case .running: "running"
        case .unavailable: "unavailable"
        }
    }

    public var description: String {
        switch self {
        case .starting: "starting"
        case .reconnecting: "reconnecting (showing its last rendering)"
        case .running(let worker): "running on \(worker)"
        case .unavailable(let error): "unavailable: \(error)"
        }
    }
}

/// Why a remote child is not running. Failures are values: the host keeps serving the rest of
/// the tree and reports these through `RemoteRuntime.statuses` and the log.
public enum RemoteChildError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connected worker hosts the type (or the named worker/pool is absent).
    case noWorker(typeName: String, placement: String)
    /// The worker does not know the type name.
    case unknownType(String)
    /// The worker could not decode the props.
    case undecodableProps(typeName: String, reason: String)
    /// The worker cannot read the state the child's snapshot holds (written by another build:
    /// a newer state version, or an older one with no migration). The child is not started
    /// afresh in its place: it waits, with the snapshot kept, for a worker that can read it.
    case undecodableSnapshot(typeName: String, reason: String)
    /// The parent could not decode what the worker sent.
    case undecodableRendering(typeName: String, reason: String)
    /// The worker did not answer within the request deadline, or went away. `reason` completes
    /// a sentence whose subject is the worker: `worker-2 stopped answering (no heartbeat for 1.0 s)`.
    case workerUnavailable(worker: String, reason: String)
    /// The worker refused for another reason (limits).
    case refused(String)
    /// The worker its placement chose holds `capacity` children already (the capacity its HELLO
    /// announced): the child is not sent there, and waits, with its state, until a worker joins
    /// or its props change. Said once per worker in the log (a warning), not once per child.
    case workerAtCapacity(worker: String, capacity: Int)
    /// Its worker drained (left in order) and handed the child's final state back, and no other
    /// worker its placement allows is connected: it waits, with that state, for one to join.
    /// `waitingFor` says which (`a worker of pool inbox`).
    case workerDrained(worker: String, waitingFor: String)
    /// Its snapshot holds state version `stateVersion`, written by a newer build than any
    /// connected worker its placement allows (a rolling upgrade in progress, or its upgraded
    /// worker lost): it is not started where its state cannot be read, and waits, with that
    /// state, for a worker that reads it to join.
    case noWorkerReadsState(typeName: String, stateVersion: Int, placement: String)

    public var description: String {
        switch self {
        case .noWorker(let type, let placement): "no worker hosts \(type) (placement \(placement))"
        case .unknownType(let type): "the worker does not know the workflow type \(type)"
        case .undecodableProps(let type, let reason): "the worker could not decode props of \(type): \(reason)"
        case .undecodableSnapshot(let type, let reason):
            "the worker cannot read the snapshot of \(type) (\(reason)); its state is kept for a worker that can"
        case .undecodableRendering(let type, let reason): "could not decode the rendering of \(type): \(reason)"
        case .workerUnavailable(let worker, let reason): "\(worker) \(reason)"
        case .refused(let reason): "the worker refused: \(reason)"
        case .workerAtCapacity(let worker, let capacity): "\(worker) is at capacity (\(capacity) children); waiting for a worker with room"
        case .workerDrained(let worker, let waitingFor): "waiting for \(waitingFor) after \(worker) drained; its state is kept"
        case .noWorkerReadsState(let type, let version, let placement):
            "waiting for a worker that reads state version \(version) of \(type) (placement \(placement)); its state is kept"
        }
    }
}
