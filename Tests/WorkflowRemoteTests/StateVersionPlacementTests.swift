import Testing
import WorkflowRemote

/// Placement and rebalancing during a rolling upgrade, as values: a child goes, and moves, only to
/// a worker that reads the state version of its snapshot (`PoolPlacement.choose`,
/// `RebalancePlan.moves`), so a state a newer build migrated never lands on an older build.
@Suite struct StateVersionPlacementTests {
    static let type = "Ledger"
    let placement = PoolPlacement(configuredMembers: ["p": ["w1", "w2", "w3"]])

    /// A member of pool `p` with `load` children whose build writes `version` of the type.
    func worker(_ name: String, version: Int, load: Int = 0) -> PlacementCandidate {
        PlacementCandidate(name: name, pool: "p", load: load, stateVersions: [Self.type: version])
    }

    func choose(_ rule: RemotePlacement, path: String = "/b/c", version: Int, _ candidates: [PlacementCandidate], withinGrace: Bool = false)
        -> PoolPlacement.Choice
    {
        placement.choose(rule, typeName: Self.type, path: path, stateVersion: version, among: candidates, withinGrace: withinGrace)
    }

    @Test("a worker reads its own state version and older ones, never a newer one; one that announces none reads version 1")
    func readsOwnAndOlderVersions() {
        let next = worker("w1", version: 2)
        #expect(next.reads(Self.type, stateVersion: 1) && next.reads(Self.type, stateVersion: 2))
        #expect(!next.reads(Self.type, stateVersion: 3))
        let silent = PlacementCandidate(name: "w2", pool: "p", load: 0)
        #expect(silent.stateVersion(of: Self.type) == 1)
        #expect(silent.reads(Self.type, stateVersion: 1) && !silent.reads(Self.type, stateVersion: 2))
    }

    @Test("least-loaded: a child of state version 2 goes to the least loaded worker that reads it, a child of version 1 to the least loaded of all")
    func leastLoadedReader() {
        let pool = [worker("w1", version: 1), worker("w2", version: 2, load: 5), worker("w3", version: 1, load: 1)]
        #expect(choose(.pool("p"), version: 2, pool) == .worker("w2"))
        #expect(choose(.pool("p"), version: 1, pool) == .worker("w1"))
        #expect(choose(.anyWorker, version: 2, pool) == .worker("w2"))
        #expect(choose(.worker("w2"), version: 2, pool) == .worker("w2"))
    }

    @Test("hashed: a child of state version 2 whose owner runs the old build goes to its highest-ranked member that reads it")
    func hashedReader() {
        let pool = [worker("w1", version: 1), worker("w2", version: 2), worker("w3", version: 2)]
        var ownerIsOld = 0
        for path in (0..<100).map({ "/b/c\($0)" }) {
            let ranking = PoolPlacement.ranked(["w1", "w2", "w3"], for: path)
            if ranking[0] == "w1" { ownerIsOld += 1 }
            #expect(choose(.hashed(pool: "p"), path: path, version: 1, pool) == .worker(ranking[0]))
            #expect(choose(.hashed(pool: "p"), path: path, version: 2, pool) == .worker(ranking.first { $0 != "w1" }!))
        }
        #expect(ownerIsOld > 0)
    }

    @Test("no connected worker reads the child's state version: noReader (it waits for one), not none, whatever the rule")
    func noReader() {
        let old = [worker("w1", version: 1), worker("w2", version: 1)]
        for rule: RemotePlacement in [.pool("p"), .hashed(pool: "p"), .anyWorker, .worker("w1")] {
            #expect(choose(rule, version: 2, old) == .noReader, "\(rule)")
            #expect(choose(rule, version: 2, []) == .none, "\(rule): nobody to wait for a newer build of")
        }
        #expect(choose(.worker("w9"), version: 2, old) == .none, "the named worker is not there at all")
    }

    @Test("during the start's grace a child waits for the pool's listed members whatever they read, then goes to a reader")
    func graceWaitsForMembers() {
        let twoOfThree = [worker("w1", version: 1), worker("w2", version: 2)]
        #expect(choose(.pool("p"), version: 2, twoOfThree, withinGrace: true) == .wait)
        let all = twoOfThree + [worker("w3", version: 1)]
        #expect(choose(.pool("p"), version: 2, all, withinGrace: true) == .worker("w2"))
        #expect(choose(.pool("p"), version: 1, all, withinGrace: true) == .worker("w1"))
        let oldOnly = [worker("w1", version: 1), worker("w2", version: 1), worker("w3", version: 1)]
        #expect(choose(.pool("p"), version: 2, oldOnly, withinGrace: true) == .noReader)
    }

    /// `count` children of pool `p` on `worker`, each of `version`, ids from `firstID`.
    func children(on worker: String, _ count: Int, version: Int, firstID: UInt64 = 1, hashed: Bool = false) -> [RebalancePlan.Child] {
        (0..<count).map { index in
            RebalancePlan.Child(
                id: firstID + UInt64(index), path: "/b/\(worker)-\(index)", pool: "p", isHashed: hashed, worker: worker, isMoving: false,
                typeName: Self.type, stateVersion: version)
        }
    }

    @Test("rebalancing never moves a child a newer build migrated onto an older build: it evens out over the workers that read it")
    func migratedChildStaysOnNewBuilds() {
        let policy = RebalancePolicy(movesAtOnce: 100)
        // The first worker upgraded took every child and migrated it; the others are old.
        let migrated = children(on: "w1", 6, version: 2)
        let oldPool = [worker("w1", version: 2, load: 6), worker("w2", version: 1), worker("w3", version: 1)]
        #expect(RebalancePlan.moves(children: migrated, workers: oldPool, placement: placement, policy: policy).isEmpty)
        // A second worker of the new build joins: half the migrated children move there, none to w2.
        let upgraded = [worker("w1", version: 2, load: 6), worker("w2", version: 1), worker("w3", version: 2)]
        #expect(RebalancePlan.moves(children: migrated, workers: upgraded, placement: placement, policy: policy).count == 3)
    }

    @Test("children of the old build's state version move to any worker, the new build's included")
    func oldChildrenMoveAnywhere() {
        let policy = RebalancePolicy(movesAtOnce: 100)
        let old = children(on: "w1", 6, version: 1)
        let pool = [worker("w1", version: 1, load: 6), worker("w2", version: 2)]
        #expect(RebalancePlan.moves(children: old, workers: pool, placement: placement, policy: policy).count == 3)
        // Mixed: w1 holds 3 children of each version; w3 (new build) holds 5, w2 (old build) none.
        // Only a version-1 child may go to w2, and w3 is within the spread of w1.
        let mixed = children(on: "w1", 3, version: 1) + children(on: "w1", 3, version: 2, firstID: 10)
        let workers = [worker("w1", version: 2, load: 6), worker("w2", version: 1), worker("w3", version: 2, load: 5)]
        let moves = RebalancePlan.moves(children: mixed, workers: workers, placement: placement, policy: policy)
        #expect(moves == [3, 2, 1], "w1's version-1 children move to w2 (6/0 evens out at 3/3); no version-2 child does")
    }

    @Test("when the most loaded worker's children are all of the newer version, the next most loaded gives its older ones to the old build")
    func nextMostLoadedGives() {
        let policy = RebalancePolicy(movesAtOnce: 100)
        // w1 (new build) holds 4 migrated children; w3 (old) 2 of version 1; w2 (old) restarted empty.
        let children = children(on: "w1", 4, version: 2) + children(on: "w3", 2, version: 1, firstID: 10)
        let workers = [worker("w1", version: 2, load: 4), worker("w2", version: 1), worker("w3", version: 1, load: 2)]
        #expect(RebalancePlan.moves(children: children, workers: workers, placement: placement, policy: policy) == [11])
    }

    @Test("a hashed child a newer build migrated stays off its owner while the owner runs the old build, and moves back once it reads it")
    func hashedChildWaitsForItsOwnerToUpgrade() {
        let policy = RebalancePolicy(movesAtOnce: 100)
        let paths = (0..<30).map { "/b/c\($0)" }
        // Children whose owner is w1, running on their next-ranked member of the new build.
        let owned = paths.filter { PoolPlacement.ranked(["w1", "w2", "w3"], for: $0)[0] == "w1" }
        let children = owned.enumerated().map { index, path in
            RebalancePlan.Child(
                id: UInt64(index), path: path, pool: "p", isHashed: true, worker: PoolPlacement.ranked(["w2", "w3"], for: path)[0],
                isMoving: false, typeName: Self.type, stateVersion: 2)
        }
        #expect(!children.isEmpty)
        let ownerOld = [worker("w1", version: 1), worker("w2", version: 2), worker("w3", version: 2)]
        #expect(RebalancePlan.moves(children: children, workers: ownerOld, placement: placement, policy: policy).isEmpty)
        let ownerNew = [worker("w1", version: 2), worker("w2", version: 2), worker("w3", version: 2)]
        #expect(RebalancePlan.moves(children: children, workers: ownerNew, placement: placement, policy: policy).count == children.count)
    }
}
