/// How a child placed in a pool picks its worker, as a value with no I/O and no clock (the
/// parent's driver passes what it sees: who is connected, their load, whether the start's grace runs).
///
/// Two rules make placement independent of the order in which workers happen to join:
/// - **Hashed** (`.hashed(pool)`): the child's worker is the first of the pool's *configured*
///   members in its rendezvous ranking (highest random weight: each member scored by a hash of
///   the child's path and the member's name) that is connected. The owner is a function of the
///   path and the configuration alone, so the same child lands on the same worker across
///   restarts; when a member is missing, only the children it owns go elsewhere, each to its
///   next-ranked member.
/// - **Least-loaded** (`.pool(pool)`): the connected member with the fewest children.
///
/// Both wait while the start's grace runs and a configured member they would consider has not
/// joined yet (`.wait`): a cold start or a restore then spreads its children over the pool
/// instead of piling them onto the first worker to join.
package struct PoolPlacement {
    /// The workers the configuration lists, by pool. A pool with none listed ranks its
    /// connected members (and never waits).
    package var configuredMembers: [String: [String]]

    /// A policy over the pools the configuration lists.
    package init(configuredMembers: [String: [String]]) {
        self.configuredMembers = configuredMembers
    }

    /// What a placement decided.
    package enum Choice: Equatable {
        /// Place the child on the worker of this name.
        case worker(String)
        /// Not yet: a member the rule considers may still join within the grace.
        case wait
        /// No connected member can take it.
        case none
        /// Connected members would take it, but none reads the state version of its snapshot
        /// (they run an older build of its type): it waits for one that does.
        case noReader
    }

    /// Where `placement` puts a child of `typeName` at `path` whose snapshot holds state version
    /// `stateVersion`, among `candidates` (the connected workers that host the type and are not
    /// draining). Only a worker that reads that version is chosen, so a child whose state a
    /// newer build already wrote never goes back to an older build, which could not read it:
    /// among the others the rule is the same (the hashed owner's next-ranked reader, the least
    /// loaded reader). The grace waits for members to join whatever they read (the pool is still
    /// filling); once it is over, a child no candidate reads is `.noReader`.
    package func choose(
        _ placement: RemotePlacement, typeName: String, path: String, stateVersion: Int, among candidates: [PlacementCandidate],
        withinGrace: Bool
    ) -> Choice {
        if withinGrace, rule(placement, path: path, among: candidates, withinGrace: true) == .wait { return .wait }
        let readers = candidates.filter { $0.reads(typeName, stateVersion: stateVersion) }
        let choice = rule(placement, path: path, among: readers, withinGrace: false)
        guard choice == .none, readers.count < candidates.count else { return choice }
        return rule(placement, path: path, among: candidates, withinGrace: false) == .none ? .none : .noReader
    }

    /// `placement`'s rule among `candidates`.
    private func rule(_ placement: RemotePlacement, path: String, among candidates: [PlacementCandidate], withinGrace: Bool) -> Choice {
        switch placement {
        case .local, .configured: return .none
        case .anyWorker:
            return leastLoaded(pool: nil, connected: candidates.map { ($0.name, $0.load) }, withinGrace: false)
        case .worker(let name): return candidates.contains { $0.name == name } ? .worker(name) : .none
        case .pool(let pool):
            let members = candidates.filter { $0.pool == pool }.map { (name: $0.name, children: $0.load) }
            return leastLoaded(pool: pool, connected: members, withinGrace: withinGrace)
        case .hashed(let pool):
            let members = Set(candidates.filter { $0.pool == pool }.map(\.name))
            return hashed(pool: pool, path: path, connected: members, withinGrace: withinGrace)
        }
    }

    /// The owner first: `members` ranked for `path` by rendezvous hashing.
    package static func ranked(_ members: [String], for path: String) -> [String] {
        members.map { (name: $0, score: score(path: path, member: $0)) }
            .sorted { ($0.score, $0.name) > ($1.score, $1.name) }
            .map(\.name)
    }

    /// The weight of `member` for `path`: FNV-1a over both, then a 64-bit finaliser so that
    /// paths differing in one character spread over the whole range.
    package static func score(path: String, member: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in path.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        hash = (hash ^ 0xff) &* 0x0000_0100_0000_01b3
        for byte in member.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        hash = (hash ^ (hash >> 30)) &* 0xbf58_476d_1ce4_e5b9
        hash = (hash ^ (hash >> 27)) &* 0x94d0_49bb_1331_11eb
        return hash ^ (hash >> 31)
    }

    /// The hashed rule for the child at `path`, among the pool members that are `connected`
    /// (and can host the child).
    package func hashed(pool: String, path: String, connected: Set<String>, withinGrace: Bool) -> Choice {
        let configured = configuredMembers[pool] ?? []
        let members = configured.isEmpty ? Array(connected) : configured
        for member in Self.ranked(members, for: path) {
            if connected.contains(member) { return .worker(member) }
            // The owner (or a member ranked before the first connected one) may still join.
            if withinGrace { return .wait }
        }
        // A connected worker the configuration does not list in the pool: ranked after the
        // configured ones, so it takes children only when none of those is there.
        return Self.ranked(Array(connected.subtracting(members)), for: path).first.map(Choice.worker) ?? .none
    }

    /// The least-loaded rule among the pool members that are `connected`, with their child
    /// counts: the fewest children, then the name. `pool` `nil`: any worker (never waits).
    package func leastLoaded(pool: String?, connected: [(name: String, children: Int)], withinGrace: Bool) -> Choice {
        if withinGrace, let pool {
            let present = Set(connected.map(\.name))
            if (configuredMembers[pool] ?? []).contains(where: { !present.contains($0) }) { return .wait }
        }
        return connected.min { ($0.children, $0.name) < ($1.children, $1.name) }.map { .worker($0.name) } ?? .none
    }
}
