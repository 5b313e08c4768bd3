import Foundation
import WorkflowCluster

/// A leader and its standby on the simulated store, each with the real `LeaderTerm` and
/// `LeaseSchedule` driven as `LeaseKeeper` drives them (renew when told, a renewal not answered
/// by the deadline counts as lost, step down when told) and, as a standby, asking for the lease
/// every `LeaseSchedule.standbyInterval`. The leader commits the shared root while its term says
/// it leads. The rule checked: while a coordinator believes it leads, the store's lease is its
/// own and has not run out (unless the connection holding it closed and it has not heard yet:
/// its writes are fenced then); and each root token has one writer.
final class SimulatedLeaderPair {
    final class Member: SimulatedNode {
        let name: String
        var connection = 0
        var incarnation = 0
        var term: LeaderTerm?
        /// The connection holding the lease closed; the member hears of it a little later.
        var connectionClosed = false
        /// Bumped whenever the keeper's single timer is replaced.
        var timer = 0

        init(name: String) {
            self.name = name
        }
    }

    unowned let simulation: CoordinatorSimulation
    let members = [Member(name: "leader-a"), Member(name: "leader-b")]
    let schedule = LeaseSchedule(lease: CoordinatorSimulation.lease)

    init(simulation: CoordinatorSimulation) {
        self.simulation = simulation
    }

    func boot() {
        for member in members { standBy(member) }
    }

    /// Whether `member` believes it leads now.
    private func leads(_ member: Member) -> Bool {
        guard let term = member.term else { return false }
        if case .stepDown = term.next(at: simulation.now) { return false }
        return true
    }

    private func standBy(_ member: Member) {
        member.term = nil
        member.timer += 1
        let timer = member.timer
        simulation.after(schedule.standbyInterval) { [self] in
            guard member.timer == timer else { return }
            let asked = simulation.now
            simulation.call(member, { [simulation] in simulation.store.acquireWriter(holder: member.name, lease: self.schedule.lease, at: simulation.elapsed) }) { [self] attempt in
                guard member.timer == timer else { return }
                guard let attempt, attempt.acquired else { return standBy(member) }
                let lease = CoordinatorLease(
                    holder: member.name, token: attempt.lease.token, expiresAt: Date(timeIntervalSince1970: 0), validUntil: asked + schedule.lease)
                member.term = LeaderTerm(lease: lease, schedule: schedule, now: simulation.now)
                member.connectionClosed = false
                simulation.count.leaderChanges += 1
                keep(member)
                write(member)
            }
        }
    }

    /// `LeaseKeeper.step`: does what the term says now, with one timer.
    private func keep(_ member: Member) {
        guard var term = member.term else { return }
        member.timer += 1
        let timer = member.timer
        switch term.next(at: simulation.now) {
        case .wait(let until):
            simulation.after(max(.zero, until - simulation.now)) { [self] in if member.timer == timer { keep(member) } }
        case .renew(let deadline):
            term.renewalSent()
            member.term = term
            let asked = simulation.now
            let lease = term.lease
            simulation.after(max(.zero, deadline - simulation.now)) { [self] in if member.timer == timer { keep(member) } }
            simulation.call(member, { [simulation, schedule] in simulation.store.renewWriter(token: lease.token, lease: schedule.lease, at: simulation.elapsed) }) { [self] renewed in
                guard member.timer == timer, var term = member.term else { return }
                switch renewed {
                case true?:
                    var longer = lease
                    longer.validUntil = asked + schedule.lease
                    term.renewed(longer, askedAt: asked)
                case false?: term.fenced()
                case nil: term.renewalFailed(at: simulation.now)
                }
                member.term = term
                keep(member)
            }
        case .stepDown:
            standBy(member)
        }
    }

    /// Commits the shared root every 50 ms while it believes it leads.
    private func write(_ member: Member) {
        guard leads(member), let token = member.term?.lease.token else { return }
        simulation.call(member, { [simulation] in simulation.store.commitRoot(token: token, writer: member.name) }) { [self] committed in
            if committed == false { simulation.count.fenced += 1 }
        }
        simulation.after(.milliseconds(50)) { [self] in write(member) }
    }

    /// The leader's lease connection closes: the store lets the lease go at once, the leader
    /// hears of it a little later (`LeaderTerm.connectionLost`).
    func breakLeaderConnection() {
        guard let member = members.first(where: leads), let token = member.term?.lease.token else { return }
        member.connection += 1
        member.connectionClosed = true
        simulation.store.writerConnectionClosed(token: token)
        simulation.after(.milliseconds(simulation.int(1...30))) { [self] in
            guard member.term?.lease.token == token else { return }
            member.term?.connectionLost()
            keep(member)
        }
    }

    /// While a member believes it leads, the store's lease is its own and live.
    func brokenInvariant() -> String? {
        for member in members where leads(member) && !member.connectionClosed {
            guard let writer = simulation.store.writer, let term = member.term, writer.token == term.lease.token, writer.expiresAt > simulation.elapsed else {
                return "\(member.name) believes it leads with token \(member.term?.lease.token.description ?? "-") but the store's writer lease is \(String(describing: simulation.store.writer))"
            }
        }
        return nil
    }
}
