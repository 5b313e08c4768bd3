/// The render passes waiting for remote children's renderings, kept as requests are sent and
/// answered: the parent's side of a settle (`RemoteEngine.settle()` and
/// `RemoteEngine.settle(tree:resuming:)`), a value so its rules are tested without sockets.
///
/// A START or UPDATE asks its child for a rendering (`asked`); until the answer comes
/// (`answered`) the child is *unclaimed*, and a settle in place (the shared root's, a worker's
/// hosted child's) holds the loop until none is left. A session's pass instead *claims* its own
/// tree's children (`claim`): the loop goes on serving other sessions, and when the last of them
/// answers (or the request deadline passes, `expired`) the pass's host is resumed. Each session
/// tree has at most one pending settle (its host renders nothing while one is pending), and what
/// each call costs follows the children it names, never the children held.
struct SettleWaits {
    /// A session pass waiting for its children's renderings.
    struct Pending {
        /// The children not answered yet.
        var waiting: Set<UInt64>
        /// Whether an answer changed what the tree renders (it renders again before publishing).
        var changed = false
        /// Whom to tell when it settles (`changed`).
        var resumes: [@Sendable (Bool) -> Void]
        /// Which claim of its tree this is (a deadline of an earlier one is stale).
        let number: UInt64
    }

    /// Asked, not answered, and claimed by no pending settle: what a settle in place waits for.
    private(set) var unclaimed: Set<UInt64> = []
    /// The session tree of each unclaimed child outside the shared root.
    private var unclaimedTree: [UInt64: String] = [:]
    /// The unclaimed children of each session tree.
    private var unclaimedByTree: [String: Set<UInt64>] = [:]
    /// The tree whose pending settle waits for each claimed child.
    private var claimedBy: [UInt64: String] = [:]
    private var pending: [String: Pending] = [:]
    /// The pending settles' deadlines in the order they were claimed (all wait the same request
    /// deadline, so the earliest is first), from `deadlineHead`.
    private var deadlines: [(at: ContinuousClock.Instant, tree: String, number: UInt64)] = []
    private var deadlineHead = 0
    private var claims: UInt64 = 0

    /// Whether a settle in place has anything left to wait for.
    var hasUnclaimed: Bool { !unclaimed.isEmpty }

    /// How many session passes wait.
    var pendingCount: Int { pending.count }

    /// A START or UPDATE of child `id` (of session tree `tree`; `""`: the shared root's) was
    /// sent. A child a pending settle already waits for stays with it: the answer ends that wait.
    mutating func asked(_ id: UInt64, tree: String) {
        guard pending.isEmpty || claimedBy[id] == nil else { return }
        unclaimed.insert(id)
        guard !tree.isEmpty else { return }
        unclaimedTree[id] = tree
        unclaimedByTree[tree, default: []].insert(id)
    }

    /// Child `id`'s rendering came (or it failed, moved or stopped): whether anything waited
    /// for it, and the pending settle it completed, if it was the last one that settle waited for
    /// (removed; the caller resumes it).
    mutating func answered(_ id: UInt64) -> (awaited: Bool, completed: Pending?) {
        if unclaimed.remove(id) != nil {
            if !unclaimedTree.isEmpty, let tree = unclaimedTree.removeValue(forKey: id) {
                unclaimedByTree[tree]?.remove(id)
                if unclaimedByTree[tree]?.isEmpty == true { unclaimedByTree[tree] = nil }
            }
            return (true, nil)
        }
        guard !pending.isEmpty, let tree = claimedBy.removeValue(forKey: id), var settle = pending[tree] else { return (false, nil) }
        settle.waiting.remove(id)
        guard settle.waiting.isEmpty else {
            pending[tree] = settle
            return (true, nil)
        }
        pending[tree] = nil
        return (true, settle)
    }

    /// Child `id`'s answer changed what its tree renders: the pending settle waiting for it
    /// renders again before it publishes.
    mutating func changed(_ id: UInt64) {
        guard !pending.isEmpty, let tree = claimedBy[id] else { return }
        pending[tree]?.changed = true
    }

    /// A pass of session tree `tree` ended: it waits for its unclaimed children, if any
    /// (`true`: pending until `deadline`, then `resume` is called), or is settled (`false`).
    mutating func claim(tree: String, deadline: ContinuousClock.Instant, resume: @escaping @Sendable (Bool) -> Void) -> Bool {
        guard let ids = unclaimedByTree.removeValue(forKey: tree) else { return false }
        for id in ids {
            unclaimed.remove(id)
            unclaimedTree[id] = nil
            claimedBy[id] = tree
        }
        if var earlier = pending[tree] {
            // Never while its host waits; kept whole all the same: one wait, both told.
            earlier.waiting.formUnion(ids)
            earlier.resumes.append(resume)
            pending[tree] = earlier
            return true
        }
        claims += 1
        pending[tree] = Pending(waiting: ids, resumes: [resume], number: claims)
        deadlines.append((deadline, tree, claims))
        return true
    }

    /// The pending settles whose deadline passed by `now`, removed with the children they
    /// waited for (the caller gives up on those and resumes them).
    mutating func expired(now: ContinuousClock.Instant) -> [Pending] {
        var expired: [Pending] = []
        while deadlineHead < deadlines.count, deadlines[deadlineHead].at <= now {
            let (_, tree, number) = deadlines[deadlineHead]
            deadlineHead += 1
            guard let settle = pending[tree], settle.number == number else { continue }
            pending[tree] = nil
            for id in settle.waiting { claimedBy[id] = nil }
            expired.append(settle)
        }
        if deadlineHead > 64, deadlineHead * 2 > deadlines.count {
            deadlines.removeFirst(deadlineHead)
            deadlineHead = 0
        }
        return expired
    }

    /// Gives up on every unclaimed child (a settle in place reached its deadline): returned.
    mutating func takeUnclaimed() -> Set<UInt64> {
        defer {
            unclaimed = []
            unclaimedTree = [:]
            unclaimedByTree = [:]
        }
        return unclaimed
    }

    /// Forgets everything (the loop ended): the pending settles are returned to be resumed.
    mutating func removeAll() -> [Pending] {
        let settles = Array(pending.values)
        self = SettleWaits()
        return settles
    }
}
