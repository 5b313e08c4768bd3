import Foundation
import Logging
import Synchronization

/// A coordinator's part in sharing a store with standbys: it waits as a standby until it takes
/// the lease, then keeps the lease, as `LeaderTerm` decides, until it must step down.
///
/// The thin I/O around `LeaderTerm`: it reads the clock, talks to the store and logs. Stepping
/// down is `onStepDown`'s: the daemon exits at once with `CoordinatorLeadership.steppedDownExitStatus`
/// (its process ends, so it accepts nothing more, writes nothing more and its endpoint is
/// unbound), and its supervisor starts it again, as a standby.
package struct CoordinatorLeadership: Sendable {
    /// The exit status of a leader that stepped down (75, `EX_TEMPFAIL`): not a failure of its
    /// own, so a supervisor restarts it, and it comes back as a standby.
    package static let steppedDownExitStatus: Int32 = 75

    /// The shared store.
    package let store: any LeasedCoordinatorStore
    /// What the store's name is in errors (the URL without its password).
    package let storeName: String
    /// This process's name in the lease (unique per process).
    package let holder: String
    /// The lease's times.
    package let schedule: LeaseSchedule
    /// Where it logs (acquiring, renewals that fail, stepping down).
    package let logger: Logger
    /// Called when the lease is lost (after logging why); ends the process.
    package let onStepDown: @Sendable (LeaderTerm.StepDownReason) -> Void

    /// Creates the leadership of `holder` over `store`.
    package init(
        store: any LeasedCoordinatorStore, storeName: String, holder: String, schedule: LeaseSchedule, logger: Logger,
        onStepDown: @escaping @Sendable (LeaderTerm.StepDownReason) -> Void
    ) {
        self.store = store
        self.storeName = storeName
        self.holder = holder
        self.schedule = schedule
        self.logger = logger
        self.onStepDown = onStepDown
    }

    /// Asks for the lease every `LeaseSchedule.standbyInterval` until this process gets it;
    /// throws `CancellationError` when cancelled first. Who holds it, and a store that cannot
    /// be reached, are logged when they change.
    package func acquire() async throws -> CoordinatorLease {
        var said: String?
        func say(_ text: String, _ level: Logger.Level) {
            guard text != said else { return }
            said = text
            logger.log(level: level, "\(text)")
        }
        while true {
            try Task.checkCancellation()
            do throws(CoordinatorStoreError) {
                switch try await store.acquireLease(holder: holder, for: schedule.lease) {
                case .acquired(var lease):
                    // An answer that took most of the lease (a loaded database, a row a dying
                    // leader's transaction still held) leaves a term already at its deadline:
                    // renew once before serving anything, rather than leading for an instant and
                    // stepping down. Safe: nothing was served under this lease yet, and a renewal
                    // succeeds only while no one has taken the lease since.
                    if schedule.deadline(of: lease) <= .now + schedule.renewalInterval {
                        lease = try await store.renewLease(lease, for: schedule.lease)
                    }
                    if schedule.deadline(of: lease) > .now + schedule.renewalInterval {
                        logger.notice(
                            "acquired the lease: leading",
                            metadata: ["token": "\(lease.token)", "lease-seconds": "\(Self.seconds(schedule.lease))"])
                        return lease
                    }
                    say("standby: the database answers too slowly to lead on a lease of \(Self.seconds(schedule.lease)) s; asking again", .warning)
                case .heldBy(let lease):
                    say("standby: the lease is held by \(lease.holder) (fencing token \(lease.token)); asking again until it runs out", .info)
                }
            } catch {
                say("standby: cannot ask for the lease: \(error)", .warning)
            }
            try await Task.sleep(for: schedule.standbyInterval)
        }
    }

    /// How holding a lease ended.
    package enum TermEnd: Sendable, Equatable {
        /// The lease is lost, or may be (`onStepDown` has been called).
        case steppedDown(LeaderTerm.StepDownReason)
        /// The caller cancelled (the coordinator is stopping); this lease is still held.
        case stopped(CoordinatorLease)
    }

    /// Renews `lease` as `LeaderTerm` says until it is lost (then calls `onStepDown`) or the
    /// caller cancels. Each renewal is bounded by the term's deadline, however long the store
    /// takes to answer.
    package func keep(_ lease: CoordinatorLease) async -> TermEnd {
        var term = LeaderTerm(lease: lease, schedule: schedule, now: .now)
        while true {
            switch term.next(at: .now) {
            case .stepDown(let reason):
                logger.critical(
                    "stepping down: \(reason); serving nothing more (exit \(Self.steppedDownExitStatus), to be restarted as a standby)",
                    metadata: ["token": "\(term.lease.token)"])
                onStepDown(reason)
                return .steppedDown(reason)
            case .wait(let until):
                do {
                    try await Task.sleep(until: until)
                } catch {
                    return .stopped(term.lease)
                }
            case .renew(let deadline):
                let asked = ContinuousClock.now
                switch await renew(term.lease, before: deadline) {
                case .renewed(let renewed): term.renewed(renewed, askedAt: asked)
                case .fenced: term.fenced()
                case .failed(let reason):
                    logger.warning(
                        "cannot renew the lease: \(reason)",
                        metadata: ["token": "\(term.lease.token)", "seconds-to-deadline": "\(Self.seconds(deadline - .now))"])
                    term.renewalFailed(at: .now)
                case .unanswered:
                    term.renewalFailed(at: .now)
                }
                if Task.isCancelled, !term.isFenced { return .stopped(term.lease) }
            }
        }
    }

    /// Gives `lease` up (a coordinator stopping in order), so a standby takes over at once
    /// instead of after the lease runs out; bounded by the lease's deadline. A failure is
    /// logged: the lease then simply runs out.
    package func release(_ lease: CoordinatorLease) async {
        let outcome = await FirstOf<CoordinatorStoreError?>.race(until: schedule.deadline(of: lease)) { [store] () async -> CoordinatorStoreError? in
            do throws(CoordinatorStoreError) {
                try await store.stepDown(lease)
                return nil
            } catch {
                return error
            }
        }
        switch outcome {
        case .none: logger.warning("the lease was not given up in time (it runs out instead)")
        case .some(.some(let error)): logger.warning("the lease was not given up (it runs out instead): \(error)")
        case .some(.none): logger.notice("gave up the lease", metadata: ["token": "\(lease.token)"])
        }
    }

    /// `duration` in seconds, as the log shows it.
    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private enum Renewal: Sendable {
        case renewed(CoordinatorLease)
        case fenced
        case failed(CoordinatorStoreError)
        case unanswered
    }

    /// One renewal, or `.unanswered` if `deadline` comes first.
    private func renew(_ lease: CoordinatorLease, before deadline: ContinuousClock.Instant) async -> Renewal {
        let outcome = await FirstOf<Renewal>.race(until: deadline) { [store, schedule] () async -> Renewal in
            do throws(CoordinatorStoreError) {
                return .renewed(try await store.renewLease(lease, for: schedule.lease))
            } catch {
                if case .fenced = error { return .fenced }
                return .failed(error)
            }
        }
        return outcome ?? .unanswered
    }
}
