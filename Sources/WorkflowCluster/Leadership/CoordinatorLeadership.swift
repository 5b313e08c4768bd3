import Foundation
import Logging
import Synchronization

/// A coordinator's part in sharing a store with standbys: it waits as a standby until it takes
/// the lease, then keeps the lease, as `LeaderTerm` decides, until it must step down.
///
/// The thin I/O around `LeaderTerm`: it reads the clock, talks to the store and logs; the
/// leader's renewals run on the lease connection's event loop (`LeaseKeeper`). Stepping
/// down is `onStepDown`'s: the daemon exits at once with `CoordinatorLeadership.steppedDownExitStatus`
/// (its process ends, so it accepts nothing more, writes nothing more and its endpoint is
/// unbound), and its supervisor starts it again, as a standby.
package struct CoordinatorLeadership: Sendable {
    /// The exit status of a leader that stepped down (75, `EX_TEMPFAIL`): not a failure of its
    /// own, so a supervisor restarts it, and it comes back as a standby.
    package static let steppedDownExitStatus: Int32 = 75

    /// The shared store.
    package let store: any EventLoopLeasedCoordinatorStore
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
        store: any EventLoopLeasedCoordinatorStore, storeName: String, holder: String, schedule: LeaseSchedule, logger: Logger,
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
                            metadata: ["token": "\(lease.token)", "lease-seconds": "\(LeaseSchedule.seconds(schedule.lease))"])
                        return lease
                    }
                    say("standby: the database answers too slowly to lead on a lease of \(LeaseSchedule.seconds(schedule.lease)) s; asking again", .warning)
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
    /// caller cancels. The renewals run on the lease connection's event loop (`LeaseKeeper`),
    /// each bounded by the term's deadline, however long the store takes to answer and however
    /// busy this process's concurrency pool is.
    package func keep(_ lease: CoordinatorLease) async -> TermEnd {
        let keeper = LeaseKeeper(lease: lease, schedule: schedule, store: store, logger: logger, onStepDown: onStepDown)
        return await withTaskCancellationHandler {
            keeper.start()
            return (try? await keeper.ended.get()) ?? .stopped(lease)
        } onCancel: {
            keeper.stop()
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
}
