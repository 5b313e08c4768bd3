import Testing
import WorkflowRemote

/// The rebalance rules as values: which children move, how many at once, in which order.
@Suite struct RebalancePlanTests {
    let placement = PoolPlacement(configuredMembers: ["p": ["w1", "w2", "w3"]])

    func poolChildren(_ counts: [String: Int], moving: Int = 0) -> [RebalancePlan.Child] {
        var children: [RebalancePlan.Child] = []
        for (worker, count) in counts.sorted(by: { $0.key < $1.key }) {
            for index in 0..<count {
                children.append(
                    .init(id: UInt64(children.count + 1), path: "/b/\(worker)-\(index)", pool: "p", isHashed: false, worker: worker, isMoving: false))
            }
        }
        for index in 0..<moving { children[index].isMoving = true }
        return children
    }

    func workers(_ counts: [String: Int]) -> [RebalancePlan.Worker] {
        counts.map { .init(name: $0.key, pool: "p", load: $0.value) }
    }

    @Test("a worker joining a busy least-loaded pool takes children, at most movesAtOnce at a time, from the most loaded")
    func joiningWorkerTakesItsShare() {
        let counts = ["w1": 30, "w2": 0]
        let children = poolChildren(counts)
        let moves = RebalancePlan.moves(children: children, workers: workers(counts), placement: placement, policy: RebalancePolicy(movesAtOnce: 4))
        #expect(moves.count == 4)
        #expect(moves.allSatisfy { id in children.first { $0.id == id }?.worker == "w1" })
        let all = RebalancePlan.moves(children: children, workers: workers(counts), placement: placement, policy: RebalancePolicy(movesAtOnce: 100))
        #expect(all.count == 15, "30/0 evens out at 15/15")
    }

    @Test("moves already under way count against movesAtOnce; a pool within the spread stays put")
    func budgetAndSpread() {
        let counts = ["w1": 30, "w2": 0]
        #expect(RebalancePlan.moves(children: poolChildren(counts, moving: 3), workers: workers(counts), placement: placement, policy: RebalancePolicy(movesAtOnce: 4)).count == 1)
        let even = ["w1": 11, "w2": 10, "w3": 10]
        #expect(RebalancePlan.moves(children: poolChildren(even), workers: workers(even), placement: placement, policy: RebalancePolicy()).isEmpty)
        #expect(RebalancePolicy(spread: 1).spread == 2, "a spread of 1 would move children back and forth")
    }

    @Test("a hashed child running away from its owner moves back once the owner is there; one on its owner stays")
    func hashedChildMovesBackToItsOwner() {
        let paths = (0..<30).map { "/b/c\($0)" }
        let owners = paths.map { PoolPlacement.ranked(["w1", "w2", "w3"], for: $0)[0] }
        // Placed while w3 was away: its children run on their next-ranked member.
        let children = paths.enumerated().map { index, path in
            let worker = owners[index] == "w3" ? PoolPlacement.ranked(["w1", "w2", "w3"], for: path)[1] : owners[index]
            return RebalancePlan.Child(id: UInt64(index), path: path, pool: "p", isHashed: true, worker: worker, isMoving: false)
        }
        let away = RebalancePlan.moves(
            children: children, workers: workers(["w1": 15, "w2": 15]), placement: placement, policy: RebalancePolicy(movesAtOnce: 100))
        #expect(away.isEmpty, "while w3 is away every child is where its ranking puts it")
        let back = RebalancePlan.moves(
            children: children, workers: workers(["w1": 15, "w2": 15, "w3": 0]), placement: placement, policy: RebalancePolicy(movesAtOnce: 100))
        #expect(Set(back) == Set(paths.indices.filter { owners[$0] == "w3" }.map(UInt64.init)))
    }
}
