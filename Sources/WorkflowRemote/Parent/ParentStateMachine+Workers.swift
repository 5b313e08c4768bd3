/// The joined workers, the parent role: each worker's record as the protocol sees it (its pool,
/// hosted types and process, when it was last heard from and sent to, the children counted on it,
/// its drain) and the only code that changes one. The machine's operations that touch workers and
/// children at once (a placement, a drain, a departure) call these methods by the event's name;
/// the driver and the inspector read the records.
extension ParentStateMachine {
    /// A joined worker as the protocol sees it. Its fields change only through the methods in
    /// this file (`JoinedWorkers`).
    struct Worker: Equatable {
        let name: String
        let pool: String
        /// The HELLO's instance: a HELLO under this name from another instance is another process.
        let instance: String
        let hostedTypes: Set<String>
        /// The state version it reads and writes, per hosted type (empty: version 1 for all).
        let stateVersions: [String: Int]
        fileprivate(set) var lastHeard: Instant
        fileprivate(set) var lastSent: Instant
        /// The children placed on it.
        fileprivate(set) var children: Set<UInt64> = []
        /// Set once it asked to drain: nothing new is placed on it, its children are moving.
        fileprivate(set) var isDraining = false
        /// Its children sent RELEASE and not yet answered with their final flush.
        fileprivate(set) var releasing: Set<UInt64> = []
        /// Of its released children: how many another worker could take at once, and how many wait.
        fileprivate(set) var drainMoved = 0
        fileprivate(set) var drainWaiting = 0

        init(name: String, pool: String, instance: String, hostedTypes: Set<String>, stateVersions: [String: Int] = [:], joinedAt now: Instant) {
            self.name = name
            self.pool = pool
            self.instance = instance
            self.hostedTypes = hostedTypes
            self.stateVersions = stateVersions
            lastHeard = now
            lastSent = now
        }

        /// It as the placement and rebalance rules see it.
        var placementCandidate: PlacementCandidate {
            PlacementCandidate(name: name, pool: pool, load: children.count, stateVersions: stateVersions)
        }

        /// Whether a child of `typeName` may be placed on it now (it hosts the type, is not leaving).
        func takes(_ typeName: String) -> Bool {
            hostedTypes.contains(typeName) && !isDraining
        }

        /// Whether a release of `childID` from it is over (it no longer waits for it) and that
        /// ended its drain.
        fileprivate mutating func releaseEnded(_ childID: UInt64) -> Bool {
            guard releasing.remove(childID) != nil else { return false }
            return releasing.isEmpty && isDraining
        }
    }

    /// The joined workers, by connection.
    struct JoinedWorkers {
        private var workers: [WorkerID: Worker] = [:]

        /// Every joined worker by connection, for the placement and rebalance rules and inspection.
        var byConnection: [WorkerID: Worker] { workers }
        var count: Int { workers.count }
        var isEmpty: Bool { workers.isEmpty }

        subscript(id: WorkerID) -> Worker? { workers[id] }

        /// The worker on `id` has joined.
        mutating func join(_ id: WorkerID, as worker: Worker) {
            workers[id] = worker
        }

        /// The worker on `id` left: its record, as it was.
        mutating func remove(_ id: WorkerID) -> Worker? {
            workers.removeValue(forKey: id)
        }

        /// A message from `id` arrived.
        mutating func heard(from id: WorkerID, at now: Instant) {
            // Through the values' index, in place: `workers[id]?.lastHeard = now` moves the whole
            // record out of the dictionary and back, thousands of instructions a message.
            guard let index = workers.index(forKey: id) else { return }
            workers.values[index].lastHeard = now
        }

        /// A message to `id` left.
        mutating func sent(to id: WorkerID, at now: Instant) {
            guard let index = workers.index(forKey: id) else { return }
            workers.values[index].lastSent = now
        }

        /// `childID` was placed on `id`: counted there.
        mutating func placed(_ childID: UInt64, on id: WorkerID) {
            guard let index = workers.index(forKey: id) else { return }
            workers.values[index].children.insert(childID)
        }

        /// `childID` no longer runs on `id` (stopped, refused, no answer in time): no longer
        /// counted there, nor awaited in a release. Returns whether that ended `id`'s drain.
        mutating func unplaced(_ childID: UInt64, from id: WorkerID) -> Bool {
            guard let index = workers.index(forKey: id) else { return false }
            workers.values[index].children.remove(childID)
            return workers.values[index].releaseEnded(childID)
        }

        /// DRAIN from `id`: it takes nothing new; its children are those of `placedThere`, each
        /// of them now being released. `nil` if it is not joined or drains already; otherwise
        /// whether the drain is over at once (nothing to release).
        mutating func drainBegun(by id: WorkerID, placedThere: [UInt64]) -> Bool? {
            guard let index = workers.index(forKey: id), !workers.values[index].isDraining else { return nil }
            workers.values[index].isDraining = true
            workers.values[index].children = Set(placedThere)
            workers.values[index].releasing.formUnion(placedThere)
            return workers.values[index].releasing.isEmpty
        }

        /// RELEASE of `childID` went to `id` (a rebalance moves it).
        mutating func releaseBegun(_ childID: UInt64, on id: WorkerID) {
            guard let index = workers.index(forKey: id) else { return }
            workers.values[index].releasing.insert(childID)
        }

        /// `childID` no longer waits for its release on `id`. Returns whether that ended `id`'s drain.
        mutating func releaseEnded(_ childID: UInt64, on id: WorkerID) -> Bool {
            guard let index = workers.index(forKey: id) else { return false }
            return workers.values[index].releaseEnded(childID)
        }

        /// The final flush of `childID` released from `id` was taken: no longer counted there;
        /// `canMoveAtOnce` counts it as moved or waiting for the drain's report. Returns whether
        /// that ended `id`'s drain.
        mutating func released(_ childID: UInt64, from id: WorkerID, canMoveAtOnce: Bool) -> Bool {
            guard let index = workers.index(forKey: id) else { return false }
            workers.values[index].children.remove(childID)
            if canMoveAtOnce {
                workers.values[index].drainMoved += 1
            } else {
                workers.values[index].drainWaiting += 1
            }
            return workers.values[index].releaseEnded(childID)
        }
    }
}
