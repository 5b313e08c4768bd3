/// A remote child's lifecycle, the parent role: one phase per child, held in its record
/// (`Child.phase`) and changed only here and by the placement, handover and departure
/// transitions. Each input (props rendered, placed on a worker, a refusal or failure, a message
/// from a worker, a worker joining) is answered with what to do: send START or UPDATE, nothing,
/// hold the props for the next placement, take the message or drop it as stale. The driver and
/// the child's proxy carry that out; neither keeps a phase of its own.
///
/// A stopped child has no phase: its record is forgotten (`forget(_:)`).
extension ParentStateMachine {
    /// Where a remote child is between its proxy's registration and its stop.
    enum Phase: Equatable {
        /// No worker hosts it (new, failed, or its worker left): its next render sends START.
        /// `movingFrom` names the worker that handed it over (a drain, a rebalance, a worker that
        /// left mid-handover): its next START is a move from that worker's final state, and while
        /// no worker takes it, it waits under `RemoteChildError.workerDrained`.
        case awaitingPlacement(movingFrom: String?)
        /// A worker refused its last props (unknown type, undecodable props or snapshot, at
        /// capacity): asking again on every render would spin, so START waits for new props or
        /// a joining worker (`retryPlacement(of:)`).
        case refused(movingFrom: String?)
        /// START went to `worker` in the child's current epoch: UPDATE and EVENT go there, and
        /// only its messages about the child in that epoch are taken.
        case placed(on: WorkerID)
        /// RELEASE went to `worker` (it drains, or a rebalance moves the child): its final flush
        /// is awaited; events and new props wait here for the next placement.
        case releasing(from: WorkerID)

        /// The worker whose copy of the child is current (placed there, or releasing from it).
        var host: WorkerID? {
            switch self {
            case .placed(let worker), .releasing(let worker): worker
            case .awaitingPlacement, .refused: nil
            }
        }

        /// The worker that handed the child over, while the child waits for its next placement.
        var movingFrom: String? {
            switch self {
            case .awaitingPlacement(let worker), .refused(let worker): worker
            case .placed, .releasing: nil
            }
        }
    }

    /// What props a render gave call for (`propsRendered(_:changed:)`).
    enum PropsAction: Equatable {
        /// Nothing to send: its placement has them already, or a worker refused them.
        case nothing
        /// Place the child: START with them.
        case start
        /// UPDATE with them to the child's placement on `worker`.
        case update(on: WorkerID)
        /// Its worker is releasing it: they go with the START on the next worker, which the
        /// render pass waits for.
        case holdForNextPlacement
    }

    /// `childID`'s phase; `nil` once it stopped (or before its proxy registered).
    func phase(of childID: UInt64) -> Phase? {
        children[childID]?.phase
    }

    /// The worker whose copy of `childID` is current (placed there or releasing from it), if any.
    func host(of childID: UInt64) -> WorkerID? {
        children[childID]?.phase.host
    }

    /// `childID`'s node rendered with props that differ from those last sent (`changed`) or not:
    /// START if it is unplaced (or its refused props changed), UPDATE if they changed on its
    /// placement, nothing otherwise.
    mutating func propsRendered(_ childID: UInt64, changed: Bool) -> PropsAction {
        guard let index = children.index(forKey: childID) else { return .nothing }
        switch children.values[index].phase {
        case .awaitingPlacement:
            return .start
        case .refused(let movingFrom):
            guard changed else { return .nothing }
            children.values[index].phase = .awaitingPlacement(movingFrom: movingFrom)
            return .start
        case .placed(let worker):
            return changed ? .update(on: worker) : .nothing
        case .releasing:
            return changed ? .holdForNextPlacement : .nothing
        }
    }

    /// `childID` cannot run (`error`): it no longer has a worker and waits for its next START;
    /// a refusal of its props waits for new props or a joining worker. A child being moved stays
    /// a move.
    mutating func childFailed(_ childID: UInt64, with error: RemoteChildError) {
        guard let index = children.index(forKey: childID) else { return }
        let movingFrom = children.values[index].phase.movingFrom
        switch error {
        case .unknownType, .undecodableProps, .undecodableSnapshot, .refused, .workerAtCapacity:
            children.values[index].phase = .refused(movingFrom: movingFrom)
        default:
            children.values[index].phase = .awaitingPlacement(movingFrom: movingFrom)
        }
    }

    /// A worker that may take `childID` joined (or the placement grace ended): a refusal is
    /// forgotten. Returns whether the child is unplaced, so its node is to render again (which
    /// sends START).
    mutating func retryPlacement(of childID: UInt64) -> Bool {
        guard let index = children.index(forKey: childID) else { return false }
        switch children.values[index].phase {
        case .awaitingPlacement:
            return true
        case .refused(let movingFrom):
            children.values[index].phase = .awaitingPlacement(movingFrom: movingFrom)
            return true
        case .placed, .releasing:
            return false
        }
    }

    /// Epoch fencing: whether a message about `childID` in `epoch` from the worker on `id` is
    /// taken. Only the child's current copy (placed there, or releasing from it) in its current
    /// epoch speaks for it; anything else is from another worker or an earlier placement: stale.
    func accepts(from id: WorkerID, about childID: UInt64, epoch: UInt64) -> Bool {
        guard let child = children[childID], child.epoch == epoch, child.phase.host == id else { return false }
        return true
    }

    /// Where `childID`'s due events go: its placement's worker and epoch, and the last event
    /// already sent there. `nil` while it has no placement or is being released (its events wait
    /// here for the next one).
    func eventTarget(of childID: UInt64) -> (worker: WorkerID, epoch: UInt64, lastSent: UInt64)? {
        guard let child = children[childID], case .placed(let worker) = child.phase else { return nil }
        return (worker, child.epoch, child.lastSentEvent)
    }
}
