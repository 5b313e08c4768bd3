/// A remote child's lifecycle, the parent role: one phase per child, held in its record
/// (`Child.phase`) with its epoch, its events sent and its delivered outputs; the records
/// (`ChildRecords`) are changed only by their methods here, which the placement, handover and
/// departure transitions call. Each input (props rendered, placed on a worker, a refusal or
/// failure, a message from a worker, a worker joining) is answered with what to do: send START or
/// UPDATE, nothing, hold the props for the next placement, take the message or drop it as stale.
/// The driver and the child's proxy carry that out; neither keeps a phase of its own.
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
        children.propsRendered(childID, changed: changed)
    }

    /// `childID` cannot run (`error`): it no longer has a worker and waits for its next START;
    /// a refusal of its props waits for new props or a joining worker. A child being moved stays
    /// a move.
    mutating func childFailed(_ childID: UInt64, with error: RemoteChildError) {
        children.failed(childID, with: error)
    }

    /// A worker that may take `childID` joined (or the placement grace ended): a refusal is
    /// forgotten. Returns whether the child is unplaced, so its node is to render again (which
    /// sends START).
    mutating func retryPlacement(of childID: UInt64) -> Bool {
        children.retryPlacement(of: childID)
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

    /// A remote child as this machine keeps it, from its proxy's registration to its stop. Its
    /// fields change only through `ChildRecords`.
    struct Child: Equatable {
        /// The fencing token of its current placement: raised by every START, carried by every
        /// message about the child both ways; a message with another epoch is stale.
        fileprivate(set) var epoch: UInt64 = 0
        /// The last event sent to the current placement (0: none yet); events after it are due.
        fileprivate(set) var lastSentEvent: UInt64 = 0
        fileprivate(set) var outputs = OutputOrder()
        /// Where it is in its lifecycle.
        fileprivate(set) var phase = Phase.awaitingPlacement(movingFrom: nil)
    }

    /// The remote children whose proxies exist, by id, and every transition of their records.
    struct ChildRecords {
        private var records: [UInt64: Child] = [:]

        var count: Int { records.count }

        subscript(childID: UInt64) -> Child? { records[childID] }

        /// A remote child's proxy exists: its placements, events and outputs are kept from now on.
        mutating func add(_ childID: UInt64) {
            records[childID] = Child()
        }

        /// The child `childID` is stopped for good: its record is forgotten.
        mutating func forget(_ childID: UInt64) {
            records[childID] = nil
        }

        /// START for `childID` is about to leave: its next epoch (`nil` if it is not kept), no
        /// event sent there yet, and a flush the earlier placement left incomplete forgotten.
        mutating func newPlacement(of childID: UInt64) -> UInt64? {
            guard let index = records.index(forKey: childID) else { return nil }
            records.values[index].epoch += 1
            records.values[index].lastSentEvent = 0
            records.values[index].outputs.discardPartialFlush()
            return records.values[index].epoch
        }

        /// START for `childID` went to `id`. Returns the worker it moved from, if this placement
        /// ends a handover.
        mutating func placed(_ childID: UInt64, on id: WorkerID) -> String? {
            guard let index = records.index(forKey: childID) else { return nil }
            let movedFrom = records.values[index].phase.movingFrom
            records.values[index].phase = .placed(on: id)
            return movedFrom
        }

        /// Events of `childID` up to `sequence` went to its placement.
        mutating func eventsSent(to childID: UInt64, through sequence: UInt64) {
            guard let index = records.index(forKey: childID) else { return }
            records.values[index].lastSentEvent = sequence
        }

        /// An OUTPUTS message of `childID` tagged `causes`/`ordinals` arrived; `continues`: more
        /// of its flush follow. Per output, whether it is new (`nil`: all are, or the child is
        /// not kept); the flush's last message counts its outputs as delivered.
        mutating func outputsArrived(for childID: UInt64, causes: [UInt64], ordinals: [UInt32], continues: Bool) -> [Bool]? {
            guard let index = records.index(forKey: childID) else { return nil }
            var kept: [Bool]?
            for output in causes.indices where !records.values[index].outputs.take(cause: causes[output], ordinal: ordinals[output]) {
                if kept == nil { kept = Array(repeating: true, count: causes.count) }
                kept?[output] = false
            }
            if !continues { records.values[index].outputs.flushEnded() }
            return kept
        }

        /// RELEASE of `childID`, placed on `id`, went there.
        mutating func releaseBegun(_ childID: UInt64, from id: WorkerID) {
            guard let index = records.index(forKey: childID), records.values[index].phase == .placed(on: id) else { return }
            records.values[index].phase = .releasing(from: id)
        }

        /// The final flush of `childID` released from `id` was taken: it waits for its next
        /// placement, a move from `worker` (the name of the worker on `id`).
        mutating func released(_ childID: UInt64, from id: WorkerID, worker: String?) {
            guard let index = records.index(forKey: childID), records.values[index].phase == .releasing(from: id) else { return }
            records.values[index].phase = .awaitingPlacement(movingFrom: worker)
        }

        /// The worker on `id` (named `movingFrom` if its handover of `childID` had begun) left.
        /// Returns whether the child's current copy was there (counted there, its current copy
        /// may be elsewhere); if so, it waits for its next placement.
        mutating func hostLeft(_ childID: UInt64, from id: WorkerID, movingFrom: String?) -> Bool {
            guard let index = records.index(forKey: childID) else { return true }
            guard records.values[index].phase.host == id else { return false }
            records.values[index].phase = .awaitingPlacement(movingFrom: movingFrom)
            return true
        }

        /// See `ParentStateMachine.propsRendered(_:changed:)`.
        mutating func propsRendered(_ childID: UInt64, changed: Bool) -> PropsAction {
            guard let index = records.index(forKey: childID) else { return .nothing }
            switch records.values[index].phase {
            case .awaitingPlacement:
                return .start
            case .refused(let movingFrom):
                guard changed else { return .nothing }
                records.values[index].phase = .awaitingPlacement(movingFrom: movingFrom)
                return .start
            case .placed(let worker):
                return changed ? .update(on: worker) : .nothing
            case .releasing:
                return changed ? .holdForNextPlacement : .nothing
            }
        }

        /// See `ParentStateMachine.childFailed(_:with:)`.
        mutating func failed(_ childID: UInt64, with error: RemoteChildError) {
            guard let index = records.index(forKey: childID) else { return }
            let movingFrom = records.values[index].phase.movingFrom
            switch error {
            case .unknownType, .undecodableProps, .undecodableSnapshot, .refused, .workerAtCapacity:
                records.values[index].phase = .refused(movingFrom: movingFrom)
            default:
                records.values[index].phase = .awaitingPlacement(movingFrom: movingFrom)
            }
        }

        /// See `ParentStateMachine.retryPlacement(of:)`.
        mutating func retryPlacement(of childID: UInt64) -> Bool {
            guard let index = records.index(forKey: childID) else { return false }
            switch records.values[index].phase {
            case .awaitingPlacement:
                return true
            case .refused(let movingFrom):
                records.values[index].phase = .awaitingPlacement(movingFrom: movingFrom)
                return true
            case .placed, .releasing:
                return false
            }
        }
    }
}
