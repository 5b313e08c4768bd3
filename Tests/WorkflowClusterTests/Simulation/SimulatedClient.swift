import WorkflowCluster

/// A client of the spread coordinators: creates sessions, sends them events, reads their
/// renderings, ends some, goes idle now and then (so they passivate and move), follows
/// redirects, and checks what it is shown: a rendering never goes back, an event answered 202
/// is in the store's state, a session it created and did not end is never unknown.
final class SimulatedClient {
    let number: Int
    unowned let simulation: CoordinatorSimulation
    /// Its sessions, in the order created, with the coordinator it asks for each.
    private var sessions: [(id: SessionID, at: Int)] = []
    /// The events answered 202, by session.
    private(set) var accepted: [SessionID: [Int]] = [:]
    /// The sessions it asked to end (their events may be gone).
    private(set) var ending: Set<SessionID> = []
    /// The latest rendering it saw of each session.
    private var seen: [SessionID: (events: Int, sequence: UInt64)] = [:]
    /// Once the faults end: the sessions it still has to be served.
    private var toServe: [SessionID]?
    /// The latest refusal it got, in words.
    private var lastRefusal = "none"

    init(number: Int, simulation: CoordinatorSimulation) {
        self.number = number
        self.simulation = simulation
    }

    /// Served every session it asked for since the faults ended.
    var isSettled: Bool { toServe?.isEmpty ?? false }

    func describeWaiting() -> String {
        guard let first = toServe?.first, let entry = sessions.first(where: { $0.id == first }) else { return "client \(number): nothing" }
        return "client \(number) asks \(simulation.coordinators[entry.at].holder) for session \(first.text.prefix(8)) (last refusal: \(lastRefusal); lease: \(simulation.store.describeLease(of: first, at: simulation.elapsed)))"
    }

    /// The faults ended: from now on it only asks for each of its sessions, until served.
    func settle() {
        toServe = sessions.map(\.id).filter { !ending.contains($0) }
    }

    /// Waits a while (now and then long enough for its sessions to passivate), then acts.
    func think() {
        let pause: Duration = simulation.chance(0.03) ? .milliseconds(simulation.int(900...3_000)) : .milliseconds(simulation.int(2...120))
        simulation.after(pause) { [self] in act() }
    }

    private func act() {
        if let toServe {
            guard let id = toServe.first else { return }
            return ask(for: id) { [self] served in
                if served { self.toServe?.removeFirst() }
                think()
            }
        }
        let coordinator = simulation.int(0...1)
        if sessions.count < 2 || simulation.chance(0.06) {
            simulation.coordinators[coordinator].create(root: "counter") { [self] created in
                if case .success(let id) = created { sessions.append((id, coordinator)) }
                think()
            }
            return
        }
        let index = simulation.int(0...(sessions.count - 1))
        let id = sessions[index].id
        guard !ending.contains(id) else { return think() }
        let roll = simulation.int(0...99)
        if roll < 60 {
            let event = simulation.number()
            simulation.coordinators[sessions[index].at].send(event, to: id) { [self] answer in
                switch answer {
                case .success(let rendering?):
                    accepted[id, default: []].append(event)
                    simulation.count.accepted += 1
                    simulation.note(event)
                    if simulation.store.checkpoint(of: id)?.events.contains(event) != true {
                        simulation.violation = simulation.violation ?? "event \(event) of session \(id.text.prefix(8)) answered 202, but the store's state lacks it"
                    }
                    saw(rendering, of: id)
                case .success(nil):
                    break
                case .failure(let error):
                    refused(error, id)
                }
                think()
            }
        } else if roll < 98 {
            ask(for: id) { [self] _ in think() }
        } else {
            ending.insert(id)
            simulation.coordinators[sessions[index].at].end(id) { [self] _ in think() }
        }
    }

    /// Asks for `id`'s rendering; whether it was served.
    private func ask(for id: SessionID, _ done: @escaping (Bool) -> Void) {
        guard let index = sessions.firstIndex(where: { $0.id == id }) else { return done(true) }
        simulation.coordinators[sessions[index].at].get(id) { [self] answer in
            switch answer {
            case .success(let rendering):
                simulation.count.served += 1
                saw(rendering, of: id)
                done(true)
            case .failure(let error):
                refused(error, id)
                done(false)
            }
        }
    }

    /// A rendering of `id` shown to this client: never behind one it saw.
    private func saw(_ rendering: (events: Int, sequence: UInt64), of id: SessionID) {
        if let before = seen[id], rendering.events < before.events || rendering.sequence < before.sequence {
            simulation.violation =
                simulation.violation
                ?? "client \(number) was shown session \(id.text.prefix(8)) at \(rendering.events) events (rendering \(rendering.sequence)) after \(before.events) (rendering \(before.sequence)): it went back"
        }
        seen[id] = rendering
    }

    /// A refusal: follow a redirect, try the other coordinator when one is down, and never
    /// hear that a live session is unknown.
    private func refused(_ error: SessionError, _ id: SessionID) {
        guard let index = sessions.firstIndex(where: { $0.id == id }) else { return }
        lastRefusal = "\(error)"
        switch error {
        case .ownedElsewhere(let gateway):
            simulation.count.redirected += 1
            if let other = simulation.coordinators.firstIndex(where: { $0.gateway == gateway }) { sessions[index].at = other }
        case .unknownSession:
            if !ending.contains(id) {
                simulation.violation = simulation.violation ?? "client \(number) was told its session \(id.text.prefix(8)) is unknown: it was lost (asked \(simulation.coordinators[sessions[index].at].describe()); lease: \(simulation.store.describeLease(of: id, at: simulation.elapsed)))"
            }
        default:
            if simulation.chance(0.5) { sessions[index].at = 1 - sessions[index].at }
        }
    }
}
