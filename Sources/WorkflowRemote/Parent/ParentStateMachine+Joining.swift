/// Joining and leaving, the parent role: HELLO answered or refused, a worker's departure
/// decided child by child.
extension ParentStateMachine {
    /// What to do with a HELLO (its name and size already checked, its protocol negotiated).
    enum Admission: Equatable {
        /// A new worker: it joins (`join(_:as:)`), after the connection `replacing` (the same
        /// process on an older connection, or an old one found gone) is removed.
        case join(replacing: WorkerID?)
        /// HELLO again on a connection that has joined: welcomed again, keeping its children.
        case welcomeAgain
        /// The connection joined under another name: one connection cannot pose as many workers.
        case refuseRenaming(joinedAs: String)
        /// Another process under the name of the worker on `existing`: probe that connection (a
        /// send to a peer that has gone fails at once and removes it), then ask again with
        /// `probed: true`.
        case probe(existing: WorkerID)
        /// Another process under the name of a live worker: refused while the old one is alive
        /// (letting each evict the other would swap them over and over); its liveness window decides.
        case refuseNameTaken
    }

    /// What a HELLO's terms (its names' sizes, the protocol versions it offers) call for, before
    /// its name is looked at (`admit(name:instance:from:probed:)`).
    enum HelloTerms: Equatable {
        /// Acceptable, speaking `protocolVersion` (the highest both sides speak).
        case agreed(protocolVersion: Int)
        /// Refused: a worker or pool name is too long (`reason` says which limit).
        case nameTooLong(reason: String)
        /// Refused: no protocol version in common (`reason` names both sides' versions).
        case noCommonVersion(reason: String)
    }

    /// Checks a HELLO naming worker `name` in `pool` and offering protocol versions `offered`
    /// against this parent's `supported` ones: names go into log lines and placement decisions,
    /// so a peer cannot make them as long as a message (`WorkerPeer.maxNameBytes`).
    static func terms(ofHelloNaming name: String, pool: String, offering offered: [Int], supported: ClosedRange<Int>) -> HelloTerms {
        guard name.utf8.count <= WorkerPeer.maxNameBytes, pool.utf8.count <= WorkerPeer.maxNameBytes else {
            return .nameTooLong(reason: "a worker or pool name is longer than \(WorkerPeer.maxNameBytes) bytes")
        }
        guard let version = RemoteProtocol.negotiate(offered: offered, supported: supported) else {
            return .noCommonVersion(
                reason: "no common protocol version: the worker speaks \(offered.sorted().map(String.init).joined(separator: ", ")), "
                    + "this parent \(supported.map(String.init).joined(separator: ", "))")
        }
        return .agreed(protocolVersion: version)
    }

    /// Decides on a HELLO from `id` naming `name`, sent by the process `instance`.
    func admit(name: String, instance: String, from id: WorkerID, probed: Bool = false) -> Admission {
        if let known = workers[id] {
            return known.name == name ? .welcomeAgain : .refuseRenaming(joinedAs: known.name)
        }
        guard let (oldID, old) = workers.byConnection.first(where: { $0.value.name == name && $0.key != id }) else { return .join(replacing: nil) }
        guard old.instance != instance else { return .join(replacing: oldID) }
        return probed ? .refuseNameTaken : .probe(existing: oldID)
    }

    /// The worker on `id` has joined.
    mutating func join(_ id: WorkerID, as worker: Worker) {
        workers.join(id, as: worker)
    }

    /// What becomes of a child of a worker that left.
    enum ChildAfterDeparture: Equatable {
        /// Its handover had begun (a drain, a rebalance): it moves on as planned, from its last
        /// acknowledged state with every later event replayed, and is never shown unavailable,
        /// whichever of its final flush and its worker's departure arrived first.
        case moveOn
        /// It failed with its worker: unavailable until placed again.
        case fail
    }

    /// A worker that left, as it was, and what becomes of each of its children.
    struct Departure: Equatable {
        let worker: Worker
        /// Its children in id order, each with what becomes of it.
        let children: [(id: UInt64, after: ChildAfterDeparture)]

        static func == (lhs: Departure, rhs: Departure) -> Bool {
            lhs.worker == rhs.worker && lhs.children.elementsEqual(rhs.children) { $0.id == $1.id && $0.after == $1.after }
        }
    }

    /// The worker on `id` left (GOODBYE, its connection closed, declared dead, replaced): it is
    /// forgotten with its children. `nil` if it was not joined.
    mutating func workerLeft(_ id: WorkerID) -> Departure? {
        guard let worker = workers.remove(id) else { return nil }
        var departing: [(id: UInt64, after: ChildAfterDeparture)] = []
        for child in worker.children.sorted() {
            outputsMessageNumbers.forget(child)
            awaitingAcknowledgement.end(for: child)
            let after = worker.releasing.contains(child) ? ChildAfterDeparture.moveOn : .fail
            // Counted there, but its current copy is elsewhere: nothing of it left with the worker.
            guard children.hostLeft(child, from: id, movingFrom: after == .moveOn ? worker.name : nil) else { continue }
            departing.append((id: child, after: after))
        }
        return Departure(worker: worker, children: departing)
    }
}
