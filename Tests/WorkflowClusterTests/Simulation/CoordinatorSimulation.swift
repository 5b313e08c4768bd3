import Foundation
import RemoteTestSupport
import WorkflowCluster

/// The coordinator's sessions and leases under a deterministic simulation: the real
/// `SessionLifecycle` (with its `SessionLeaseBook`, `IdleSessionQueue`, `SessionCounts` and
/// `CreationBudget`) of two coordinators sharing one simulated store in spread mode, and the real
/// `LeaderTerm` and `LeaseSchedule` of a leader and its standby on the same store. Only the
/// store (`SimulatedSessionStore`), the clock, the sessions' trees (`SimulatedTree`) and the
/// clients are simulated; `SimulatedCoordinator` drives each lifecycle as `SessionDirectory`
/// does, one callback per await.
///
/// One thread, one seed: every delay, fault and client action is drawn from the seed's
/// generator, every callback runs at its virtual instant in the order it was scheduled, and
/// the invariants (`checkInvariants`) are checked after every step. `run(steps:)` runs the
/// faults; `settle(limit:)` then turns them off and asks for every session: each must be served
/// within `CoordinatorSimulation.servedWithin` (the liveness mode).
final class CoordinatorSimulation {
    /// What the seed's faults are.
    struct Faults: CustomStringConvertible {
        /// A store request fails before the database applies it.
        var failBefore: Double
        /// A store request is applied, but its answer is lost (the caller sees a failure).
        var loseAnswer: Double
        /// A store request's way there or back takes this long at most (ms).
        var maxDelay: Int
        /// A store request stalls, past a lease, now and then.
        var stall: Double
        /// Per step: a coordinator's store connection breaks (its requests in flight fail).
        var disconnect: Double
        /// Per step: a spread coordinator is killed (SIGKILL), or stopped by its operator.
        var crash: Double
        var stop: Double

        var description: String {
            "fail \(failBefore), lose answer \(loseAnswer), delay ≤\(maxDelay) ms, stall \(stall), disconnect \(disconnect), kill \(crash), stop \(stop)"
        }

        /// No fault: what the liveness mode runs with.
        static let none = Faults(failBefore: 0, loseAnswer: 0, maxDelay: 5, stall: 0, disconnect: 0, crash: 0, stop: 0)
    }

    /// A broken invariant, with the seed and the command that replays it.
    struct Violation: Error, CustomStringConvertible {
        var seed: UInt64
        var step: Int
        var message: String

        var description: String {
            "coordinator simulation, seed \(seed), step \(step): \(message)\n  replay: scripts/simulate.sh --seed \(seed) --suite CoordinatorSimulationTests"
        }
    }

    /// What a run did, to show that it did it.
    struct Counts: CustomStringConvertible {
        var steps = 0
        var created = 0
        var accepted = 0
        var served = 0
        var redirected = 0
        var takenOver = 0
        var passivated = 0
        var termsLapsed = 0
        var creationsLeaseLost = 0
        var crashes = 0
        var stops = 0
        var leaderChanges = 0
        var fenced = 0

        /// Every count, to add runs up.
        static var all: [WritableKeyPath<Counts, Int>] {
            [
                \.steps, \.created, \.accepted, \.served, \.redirected, \.takenOver, \.passivated, \.termsLapsed, \.creationsLeaseLost,
                \.crashes, \.stops, \.leaderChanges, \.fenced,
            ]
        }

        mutating func add(_ other: Counts) {
            for count in Self.all { self[keyPath: count] += other[keyPath: count] }
        }

        var description: String {
            "\(created) created, \(accepted) events answered 202, \(served) served, \(redirected) redirected, \(takenOver) taken over, "
                + "\(passivated) passivated, \(termsLapsed) sessions of lapsed or ended terms stopped, \(creationsLeaseLost) creations whose lease was lost, "
                + "\(crashes) kills, \(stops) stops, \(leaderChanges) leader changes, \(fenced) commits fenced"
        }
    }

    /// How long, once the faults end, a session a client asks for may take to be served.
    static let servedWithin: Duration = .seconds(12)
    /// The sessions' settings: few sessions, so the limit is reached; a short idle timeout, so
    /// they passivate and move.
    static let settings = SessionSettings(idleTimeout: .milliseconds(800), maxSessions: 6, maxCreationsPerSecond: 20)
    /// The spread lease term's length, and the leader's lease.
    static let lease: Duration = .milliseconds(900)

    let seed: UInt64
    var faults: Faults
    var random: SplitMix64
    /// The virtual time since the start, and the instant it stands for (only differences of
    /// instants are ever used, so the real clock's reading at `base` changes nothing).
    private(set) var elapsed: Duration = .zero
    let base = ContinuousClock.now
    var now: ContinuousClock.Instant { base + elapsed }
    private var queue = SimulationAgenda()
    private(set) var trace = CoordinatorTrace()
    var count = Counts()
    let store = SimulatedSessionStore()
    private(set) var coordinators: [SimulatedCoordinator] = []
    private(set) var leaders: SimulatedLeaderPair!
    private(set) var clients: [SimulatedClient] = []
    /// The first violation found (a callback cannot throw through the agenda).
    var violation: String?
    /// Trees by number, on every coordinator, and those running.
    var trees: [Int: SimulatedTree] = [:]
    var running: [Int: SimulatedTree] = [:]
    var nextNumber = 0
    /// Once set, clients only ask for their sessions, and each must be served in time.
    private(set) var settling: ContinuousClock.Instant?

    /// A simulation of `seed`, its faults drawn from it.
    init(seed: UInt64) {
        self.seed = seed
        var random = SplitMix64(seed: seed)
        func draw(_ scale: Double) -> Double { Double(random.next() >> 11) / Double(1 << 53) * scale }
        faults = Faults(
            failBefore: draw(0.08), loseAnswer: draw(0.05), maxDelay: 2 + Int(random.next() % 60), stall: draw(0.01),
            disconnect: draw(0.0008), crash: draw(0.0003), stop: draw(0.0002))
        self.random = random
        coordinators = ["a", "b"].map { SimulatedCoordinator(name: $0, simulation: self) }
        leaders = SimulatedLeaderPair(simulation: self)
        clients = (0..<8).map { SimulatedClient(number: $0, simulation: self) }
        for coordinator in coordinators { coordinator.boot() }
        leaders.boot()
        for client in clients { client.think() }
    }

    // MARK: - Time and randomness

    /// Runs `action` after `delay` (ties in the order scheduled).
    func after(_ delay: Duration, _ action: @escaping () -> Void) {
        queue.push(at: elapsed + delay, action)
    }

    /// A number in `range`.
    func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(random.next() % UInt64(range.count))
    }

    /// True with probability `probability`.
    func chance(_ probability: Double) -> Bool {
        probability > 0 && Double(random.next() >> 11) / Double(1 << 53) < probability
    }

    /// A fresh session id, from the seed.
    func newSessionID() -> SessionID {
        let digits = String(random.next(), radix: 16) + String(random.next(), radix: 16)
        return SessionID(String(repeating: "0", count: max(0, 32 - digits.count)) + digits)!
    }

    /// A number for a tree or an operation.
    func number() -> Int {
        nextNumber += 1
        return nextNumber
    }

    /// Mixes `word` into the trace.
    func note(_ word: Int) { trace.mix(word) }

    // MARK: - The store, over a network

    /// Sends a store request from `node`: applied by the database after a delay (unless it
    /// fails first), answered after another (unless the answer is lost, or the node's connection
    /// broke meanwhile, which the caller sees as a failure); nothing is answered to a node that
    /// died meanwhile.
    func call<T>(_ node: SimulatedNode, _ apply: @escaping () -> T, _ answer: @escaping (T?) -> Void) {
        let connection = node.connection
        let incarnation = node.incarnation
        let there = delay()
        let back = delay()
        let failsBefore = chance(faults.failBefore)
        let losesAnswer = chance(faults.loseAnswer)
        after(there) { [self] in
            guard !failsBefore, node.connection == connection else {
                after(back) { if node.incarnation == incarnation { answer(nil) } }
                return
            }
            let value = apply()
            after(back) {
                guard node.incarnation == incarnation else { return }
                answer(losesAnswer || node.connection != connection ? nil : value)
            }
        }
    }

    /// One way of a store request.
    func delay() -> Duration {
        if chance(faults.stall) { return .milliseconds(int(900...2_500)) }
        return .milliseconds(int(1...faults.maxDelay))
    }

    // MARK: - Running

    /// Runs `steps` steps with the seed's faults; the first violation, if any.
    func run(steps: Int) -> Violation? {
        for _ in 0..<steps {
            if let violation = step() { return violation }
            injectFaults()
        }
        return nil
    }

    /// Ends the faults, restarts what is down, then asks for every session: each must be served
    /// within `servedWithin`; finally every event answered 202 must be in the store's state once.
    func settle(limit: Int) -> Violation? {
        faults = .none
        settling = now
        for coordinator in coordinators where !coordinator.isUp { coordinator.boot() }
        for client in clients { client.settle() }
        var steps = 0
        while clients.contains(where: { !$0.isSettled }) {
            if steps >= limit { return fail("no progress: \(clients.filter { !$0.isSettled }.count) clients not served after \(limit) steps") }
            if let violation = step() ?? overdue() { return violation }
            steps += 1
        }
        return finalCheck()
    }

    /// One callback of the agenda, then the invariants.
    private func step() -> Violation? {
        guard let (at, action) = queue.pop() else { return fail("nothing left to do") }
        elapsed = at
        action()
        count.steps += 1
        trace.mix(elapsed)
        trace.mix(Int(truncatingIfNeeded: random.state))
        if let violation { return fail(violation) }
        return checkInvariants()
    }

    private func injectFaults() {
        for coordinator in coordinators where coordinator.isUp {
            if chance(faults.disconnect) { coordinator.connection += 1 }
            if chance(faults.crash) {
                count.crashes += 1
                coordinator.kill()
            } else if chance(faults.stop) {
                count.stops += 1
                coordinator.stopAll()
            }
        }
        if chance(faults.disconnect) { leaders.breakLeaderConnection() }
    }

    /// A client not served within the bound once the faults ended.
    private func overdue() -> Violation? {
        guard let settling, now - settling > Self.servedWithin else { return nil }
        let waiting = clients.filter { !$0.isSettled }.map { $0.describeWaiting() }
        return fail(
            "liveness: not served \(Self.servedWithin) after the faults ended: \(waiting.joined(separator: "; ")); "
                + coordinators.map { $0.describe() }.joined(separator: "; "))
    }

    func fail(_ message: String) -> Violation {
        Violation(seed: seed, step: count.steps, message: message)
    }

    // MARK: - Invariants

    /// Checked after every step.
    private func checkInvariants() -> Violation? {
        for coordinator in coordinators where coordinator.isUp {
            if let message = coordinator.brokenInvariant() { return fail(message) }
        }
        for tree in running.values {
            if let message = tree.coordinator.orphaned(tree) { return fail(message) }
        }
        if let message = store.brokenInvariant() { return fail(message) }
        if let message = leaders.brokenInvariant() { return fail(message) }
        return nil
    }

    /// Every event answered 202 is in its session's state in the store exactly once.
    private func finalCheck() -> Violation? {
        for client in clients {
            for (id, events) in client.accepted where !client.ending.contains(id) {
                guard let checkpoint = store.checkpoint(of: id) else { return fail("session \(id.text.prefix(8)) lost from the store") }
                for event in events {
                    let times = checkpoint.events.count(where: { $0 == event })
                    if times != 1 { return fail("event \(event) of session \(id.text.prefix(8)), answered 202, is in its state \(times) times") }
                }
            }
        }
        return nil
    }
}
