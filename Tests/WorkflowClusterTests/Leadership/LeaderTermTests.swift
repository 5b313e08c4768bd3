import Foundation
import Testing
import WorkflowCluster

/// The leader's lease as a value: when it renews, how long a renewal may take and when it steps
/// down, from given times (no clock is read).
@Suite("Leader term")
struct LeaderTermTests {
    static let start = ContinuousClock.now
    static let schedule = LeaseSchedule(lease: .milliseconds(1_500))

    static func lease(token: Int64 = 7, validFor duration: Duration = .milliseconds(1_500), from asked: ContinuousClock.Instant = start)
        -> CoordinatorLease
    {
        CoordinatorLease(holder: "a", token: FencingToken(rawValue: token), expiresAt: Date(), validUntil: asked + duration)
    }

    @Test("the schedule: renew every fifth of the lease, stop a fifth before its end, a standby asks every tenth")
    func schedule() {
        #expect(Self.schedule.renewalInterval == .milliseconds(300))
        #expect(Self.schedule.margin == .milliseconds(300))
        #expect(Self.schedule.standbyInterval == .milliseconds(150))
        #expect(Self.schedule.deadline(of: Self.lease()) == Self.start + .milliseconds(1_200))
    }

    @Test("a fresh term waits for the first renewal, which may take until the deadline")
    func waitsThenRenews() {
        let term = LeaderTerm(lease: Self.lease(), schedule: Self.schedule, now: Self.start)
        #expect(term.next(at: Self.start) == .wait(until: Self.start + .milliseconds(300)))
        #expect(term.next(at: Self.start + .milliseconds(299)) == .wait(until: Self.start + .milliseconds(300)))
        #expect(term.next(at: Self.start + .milliseconds(300)) == .renew(deadline: Self.start + .milliseconds(1_200)))
    }

    @Test("a renewal moves the deadline to its own lease, counted from when it was asked; the next is due an interval later")
    func renewalExtends() {
        var term = LeaderTerm(lease: Self.lease(), schedule: Self.schedule, now: Self.start)
        let asked = Self.start + .milliseconds(300)
        term.renewed(Self.lease(from: asked), askedAt: asked)
        #expect(term.deadline == asked + .milliseconds(1_200))
        #expect(term.next(at: asked + .milliseconds(50)) == .wait(until: asked + .milliseconds(300)))
        #expect(term.next(at: asked + .milliseconds(300)) == .renew(deadline: asked + .milliseconds(1_200)))
    }

    @Test("a late answer to an earlier renewal never shortens the lease")
    func lateAnswerKeepsLaterLease() {
        var term = LeaderTerm(lease: Self.lease(), schedule: Self.schedule, now: Self.start)
        let later = Self.start + .milliseconds(600)
        term.renewed(Self.lease(from: later), askedAt: later)
        term.renewed(Self.lease(from: Self.start + .milliseconds(300)), askedAt: Self.start + .milliseconds(300))
        #expect(term.deadline == later + .milliseconds(1_200))
    }

    @Test("failed renewals are retried soon, until the deadline; at the deadline the leader steps down")
    func failuresThenDeadline() {
        var term = LeaderTerm(lease: Self.lease(), schedule: Self.schedule, now: Self.start)
        var now = Self.start + .milliseconds(300)
        var attempts = 0
        while case .renew = term.next(at: now) {
            attempts += 1
            term.renewalFailed(at: now)
            #expect(term.next(at: now) == .wait(until: now + .milliseconds(75)))
            now = now + .milliseconds(75)
        }
        #expect(attempts == 12)
        #expect(term.next(at: now) == .stepDown(.deadlinePassed))
        #expect(term.next(at: Self.start + .milliseconds(1_200)) == .stepDown(.deadlinePassed))
    }

    @Test("a leader frozen past its deadline (SIGSTOP) steps down first thing when it wakes, renewal due or not")
    func wokenPastDeadline() {
        let term = LeaderTerm(lease: Self.lease(), schedule: Self.schedule, now: Self.start)
        #expect(term.next(at: Self.start + .seconds(30)) == .stepDown(.deadlinePassed))
    }

    @Test("fenced by the store, or renewed under another token: steps down at once, however much time is left")
    func fenced() {
        var term = LeaderTerm(lease: Self.lease(), schedule: Self.schedule, now: Self.start)
        term.fenced()
        #expect(term.next(at: Self.start) == .stepDown(.fenced))
        var other = LeaderTerm(lease: Self.lease(), schedule: Self.schedule, now: Self.start)
        other.renewed(Self.lease(token: 8), askedAt: Self.start)
        #expect(other.next(at: Self.start) == .stepDown(.fenced))
    }

    @Test("the next step never waits past the deadline")
    func waitBoundedByDeadline() {
        var term = LeaderTerm(lease: Self.lease(validFor: .milliseconds(400)), schedule: Self.schedule, now: Self.start)
        #expect(term.next(at: Self.start) == .wait(until: Self.start + .milliseconds(100)))
        term.renewalFailed(at: Self.start)
        #expect(term.next(at: Self.start + .milliseconds(100)) == .stepDown(.deadlinePassed))
    }

    @Test("while a renewal is on its way nothing else is sent: the next step is its deadline; its answer or failure resumes the schedule")
    func oneRenewalAtATime() {
        var term = LeaderTerm(lease: Self.lease(), schedule: Self.schedule, now: Self.start)
        let asked = Self.start + .milliseconds(300)
        #expect(term.next(at: asked) == .renew(deadline: Self.start + .milliseconds(1_200)))
        term.renewalSent()
        #expect(term.isRenewing)
        #expect(term.next(at: asked) == .wait(until: Self.start + .milliseconds(1_200)))
        #expect(term.next(at: asked + .milliseconds(600)) == .wait(until: Self.start + .milliseconds(1_200)))
        term.renewed(Self.lease(from: asked), askedAt: asked)
        #expect(!term.isRenewing)
        #expect(term.next(at: asked + .milliseconds(10)) == .wait(until: asked + .milliseconds(300)))

        #expect(term.next(at: asked + .milliseconds(300)) == .renew(deadline: asked + .milliseconds(1_200)))
        term.renewalSent()
        term.renewalFailed(at: asked + .milliseconds(320))
        #expect(!term.isRenewing)
        #expect(term.next(at: asked + .milliseconds(320)) == .wait(until: asked + .milliseconds(395)))
    }

    @Test("a renewal on its way when the deadline passes does not hold the leader: it steps down at the deadline")
    func unansweredRenewalStepsDownAtDeadline() {
        var term = LeaderTerm(lease: Self.lease(), schedule: Self.schedule, now: Self.start)
        term.renewalSent()
        #expect(term.next(at: Self.start + .milliseconds(1_199)) == .wait(until: Self.start + .milliseconds(1_200)))
        #expect(term.next(at: Self.start + .milliseconds(1_200)) == .stepDown(.deadlinePassed))
    }

    @Test("the lease's connection closed: steps down at once, however much time is left, a renewal on its way or not")
    func connectionLost() {
        var term = LeaderTerm(lease: Self.lease(), schedule: Self.schedule, now: Self.start)
        term.renewalSent()
        term.connectionLost()
        #expect(term.next(at: Self.start) == .stepDown(.leaseConnectionLost))
        #expect(LeaderTerm.StepDownReason.leaseConnectionLost.description == "the connection that holds the lease closed")
    }

    @Test("the recommended lease: a renewal every 400 ms, the leader's deadline 1.6 s after its last renewal was asked, a standby asking every 200 ms")
    func recommendedSchedule() {
        let schedule = LeaseSchedule(lease: StoreSettings.recommendedLease)
        #expect(StoreSettings.recommendedLease == .seconds(2))
        #expect(schedule.renewalInterval == .milliseconds(400))
        #expect(schedule.deadline(of: Self.lease(validFor: StoreSettings.recommendedLease)) == Self.start + .milliseconds(1_600))
        #expect(schedule.standbyInterval == .milliseconds(200))
    }
}
