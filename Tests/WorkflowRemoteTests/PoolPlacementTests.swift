import Testing
import WorkflowRemote

/// The pool placement rules as values: rendezvous ranking, the grace's waits, the fallbacks.
@Suite struct PoolPlacementTests {
    let members = ["w1", "w2", "w3"]
    var paths: [String] { (0..<300).map { "/Board/Remote<Counter>[c\($0)]" } }

    @Test("a child's hashed owner depends on its path and the configured members, not on who is connected first")
    func ownerIsStable() {
        let policy = PoolPlacement(configuredMembers: ["p": members])
        for path in paths {
            let owner = PoolPlacement.ranked(members, for: path)[0]
            #expect(PoolPlacement.ranked(members.reversed(), for: path)[0] == owner)
            #expect(policy.hashed(pool: "p", path: path, connected: Set(members), withinGrace: false) == .worker(owner))
        }
    }

    @Test("hashed owners spread: each of three members owns between a quarter and two fifths of 300 paths")
    func ownersSpread() {
        var owned: [String: Int] = [:]
        for path in paths { owned[PoolPlacement.ranked(members, for: path)[0], default: 0] += 1 }
        for member in members { #expect((75...120).contains(owned[member] ?? 0), "\(owned)") }
    }

    @Test("a missing owner: wait during the grace, then the next-ranked member; only its children move")
    func missingOwner() {
        let policy = PoolPlacement(configuredMembers: ["p": members])
        var moved = 0
        for path in paths {
            let ranking = PoolPlacement.ranked(members, for: path)
            let connected = Set(members).subtracting(["w2"])
            let during = policy.hashed(pool: "p", path: path, connected: connected, withinGrace: true)
            let after = policy.hashed(pool: "p", path: path, connected: connected, withinGrace: false)
            if ranking[0] == "w2" {
                moved += 1
                #expect(during == .wait)
                #expect(after == .worker(ranking[1]))
            } else {
                #expect(during == .worker(ranking[0]))
                #expect(after == .worker(ranking[0]))
            }
        }
        #expect(moved > 0)
    }

    @Test("least-loaded waits for the pool's listed members during the grace, then takes the emptiest")
    func leastLoaded() {
        let policy = PoolPlacement(configuredMembers: ["p": members])
        let two = [(name: "w1", children: 3), (name: "w3", children: 1)]
        #expect(policy.leastLoaded(pool: "p", connected: two, withinGrace: true) == .wait)
        #expect(policy.leastLoaded(pool: "p", connected: two, withinGrace: false) == .worker("w3"))
        let all = two + [(name: "w2", children: 1)]
        #expect(policy.leastLoaded(pool: "p", connected: all, withinGrace: true) == .worker("w2"), "ties go by name")
        #expect(policy.leastLoaded(pool: "p", connected: [], withinGrace: false) == .none)
    }

    @Test("a pool the configuration does not list ranks whoever is connected and never waits")
    func unlistedPool() {
        let policy = PoolPlacement(configuredMembers: [:])
        let path = paths[0]
        let connected: Set = ["a", "b"]
        #expect(policy.hashed(pool: "q", path: path, connected: connected, withinGrace: true) == .worker(PoolPlacement.ranked(["a", "b"], for: path)[0]))
        #expect(policy.hashed(pool: "q", path: path, connected: [], withinGrace: true) == .none)
        #expect(policy.leastLoaded(pool: "q", connected: [(name: "b", children: 0)], withinGrace: true) == .worker("b"))
    }
}
