import Testing
import WorkflowCluster

/// The sessions' lifecycle as a value: each decision of `SessionDirectory` taken between two of
/// its awaits, from given times, with numbers for hosts and operations.
@Suite("Session lifecycle")
struct SessionLifecycleTests {
    typealias Lifecycle = SessionLifecycle<Int, Int, Int>

    static let start = ContinuousClock.now
    static let settings = SessionSettings(idleTimeout: .seconds(10), maxSessions: 2, maxCreationsPerSecond: 100)
    static let term = SessionLeaseTerm(number: 1, holder: "a")
    static func id(_ digit: Character) -> SessionID { SessionID(String(repeating: digit, count: 32))! }
    static func token(_ value: Int64) -> FencingToken { FencingToken(rawValue: value) }

    /// A spread lifecycle with a live term.
    static func spread() -> Lifecycle {
        var lifecycle = Lifecycle(settings: settings, now: start, leaseDuration: .seconds(3))
        _ = lifecycle.termBegan(term, askedAt: start)
        return lifecycle
    }

    /// `body`'s error, if it throws one.
    static func refusal(_ body: () throws(SessionError) -> Void) -> SessionError? {
        do throws(SessionError) {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test("creations under way count against max_sessions from their admission to their insertion, however many start at once")
    func creationsUnderWayCount() throws {
        var lifecycle = Self.spread()
        try lifecycle.admitCreation(now: Self.start)
        try lifecycle.admitCreation(now: Self.start)
        #expect(Self.refusal { () throws(SessionError) in try lifecycle.admitCreation(now: Self.start) } == .tooManySessions(limit: 2))
        let recorded = lifecycle.leaseAcquired(Self.id("1"), token: Self.token(1), under: Self.term)
        let step = lifecycle.creationStarted(Self.id("1"), root: "r", host: 1, leaseToken: Self.token(1), now: Self.start)
        #expect(recorded && step == .inserted)
        lifecycle.creationAbandoned()
        #expect(lifecycle.count == 1 && lifecycle.creationsUnderWay == 0)
        try lifecycle.admitCreation(now: Self.start)
        #expect(Self.refusal { () throws(SessionError) in try lifecycle.admitCreation(now: Self.start) } == .tooManySessions(limit: 2))
    }

    @Test("a creation whose host starts after stopAll is refused, not inserted: nothing is left running that no stop saw")
    func stopAllDuringACreation() throws {
        var lifecycle = Self.spread()
        try lifecycle.admitCreation(now: Self.start)
        _ = lifecycle.leaseAcquired(Self.id("1"), token: Self.token(1), under: Self.term)
        let (slots, term) = lifecycle.stopAll()
        #expect(slots.isEmpty && term == Self.term)
        let step = lifecycle.creationStarted(Self.id("1"), root: "r", host: 1, leaseToken: Self.token(1), now: Self.start)
        #expect(step == .stopping)
        #expect(lifecycle.count == 0 && lifecycle.creationsUnderWay == 0)
        #expect(Self.refusal { () throws(SessionError) in try lifecycle.admitCreation(now: Self.start) } == .unavailable("the coordinator is stopping"))
    }

    @Test("a creation whose lease was lost while its host started (the term lapsed) is refused: no session is held without its lease")
    func leaseLostDuringACreation() throws {
        var lifecycle = Self.spread()
        try lifecycle.admitCreation(now: Self.start)
        _ = lifecycle.leaseAcquired(Self.id("1"), token: Self.token(1), under: Self.term)
        let lost = lifecycle.expire(now: Self.start + .seconds(3))
        #expect(lost.isEmpty, "nothing inserted yet, nothing to stop")
        let step = lifecycle.creationStarted(Self.id("1"), root: "r", host: 1, leaseToken: Self.token(1), now: Self.start)
        #expect(step == .leaseLost)
        #expect(lifecycle.count == 0 && lifecycle.creationsUnderWay == 0)
    }

    @Test("a use claims, reactivates and waits; a passivation settles once; spread, a passivated session is forgotten and its lease given up")
    func useAndPassivation() throws {
        var lifecycle = Self.spread()
        let id = Self.id("2")
        guard case .claim = lifecycle.use(id, now: Self.start, reactivation: { _, _, _ in 0 }) else {
            Issue.record("expected a claim")
            return
        }
        _ = lifecycle.leaseAcquired(id, token: Self.token(7), under: Self.term)
        let claimed = lifecycle.claimed(id, token: Self.token(7), root: "r", sequence: 4)
        #expect(claimed == .taken)
        var asked: (UInt64, FencingToken?)?
        guard case .awaitReactivation(let operation) = lifecycle.use(id, now: Self.start, claimed: true, reactivation: { _, kept, token in
            asked = (kept.sequence, token)
            return 11
        }) else {
            Issue.record("expected a reactivation")
            return
        }
        #expect(operation == 11 && asked?.0 == 4 && asked?.1 == Self.token(7))
        let first = try lifecycle.settleReactivation(id, operation, .success(5), now: Self.start)
        let second = try lifecycle.settleReactivation(id, operation, .success(5), now: Self.start)
        #expect(first == "r" && second == nil, "settled once")
        let begun = lifecycle.beginIdlePassivations(now: Self.start + .seconds(10)) { _, host in host * 10 }
        #expect(begun.map(\.1) == [50])
        let passivated = lifecycle.settlePassivation(id, 50, PassivatedSession(kept: .store, sequence: 5), now: Self.start)
        let again = lifecycle.settlePassivation(id, 50, PassivatedSession(kept: .store, sequence: 5), now: Self.start)
        #expect(passivated == .passivated && again == .stale)
        let givenUp = lifecycle.giveUpLease(of: id)
        #expect(lifecycle.entry(id) == nil && givenUp == Self.token(7))
    }

    @Test("a lapsed term stops every session it held; a takeover finished after its lease was lost is refused")
    func lapsedTerm() {
        var lifecycle = Self.spread()
        let (one, two) = (Self.id("3"), Self.id("4"))
        _ = lifecycle.leaseAcquired(one, token: Self.token(1), under: Self.term)
        let taken = lifecycle.claimed(one, token: Self.token(1), root: "r", sequence: 0)
        _ = lifecycle.leaseAcquired(two, token: Self.token(2), under: Self.term)
        let stopped = lifecycle.expire(now: Self.start + .seconds(3))
        #expect(taken == .taken && stopped.count == 1 && lifecycle.count == 0)
        let late = lifecycle.claimed(two, token: Self.token(2), root: "r", sequence: 0)
        #expect(late == .refused(.unavailable("this session's lease was lost while it was taken; try again"), givesUpLease: false))
    }
}
