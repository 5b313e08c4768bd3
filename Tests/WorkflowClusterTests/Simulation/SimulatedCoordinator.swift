import WorkflowCluster

/// One spread coordinator in the simulation: the real `SessionLifecycle` driven as
/// `SessionDirectory` drives it, each of the actor's awaits a callback of the simulated store
/// or clock. Every decision is the lifecycle's; what this does is what the actor does around
/// them: take the lease term and the leases, start and stop trees, renew the term on its
/// interval, passivate on the idle timer.
final class SimulatedCoordinator: SimulatedNode {
    /// A session's host is its tree's number; passivations and reactivations are named by
    /// their operation's number.
    typealias Lifecycle = SessionLifecycle<Int, Int, Int>

    let name: String
    unowned let simulation: CoordinatorSimulation
    var connection = 0
    private(set) var incarnation = 0
    private(set) var isUp = false
    /// `stopAll` ran: the process exits shortly, and answers no client meanwhile.
    private(set) var isStopping = false
    private var lifecycle: Lifecycle
    private var termWaiters: [(SessionLeaseTerm?) -> Void]?
    /// Operations under way (creations, passivations, reactivations): a tree one of them
    /// started is theirs to stop or hand over.
    private var operations: Set<Int> = []
    private var passivationWaiters: [Int: [(PassivatedSession?) -> Void]] = [:]
    private var reactivationWaiters: [Int: [(Result<Int, SessionError>) -> Void]] = [:]
    /// Reactivations whose session was removed meanwhile: what they start is stopped (as
    /// `SessionDirectory.stop` awaits the task and stops it).
    private var stopWhenDone: Set<Int> = []
    /// The clients' requests in progress, by number: each fails (the connection closed) if the
    /// process dies first.
    private var requests: [Int: () -> Void] = [:]
    /// Those waiting for a session's lease to be given up.
    private var releaseWaiters: [SessionID: [() -> Void]] = [:]

    init(name: String, simulation: CoordinatorSimulation) {
        self.name = name
        self.simulation = simulation
        self.lifecycle = Lifecycle(settings: CoordinatorSimulation.settings, now: simulation.now, leaseDuration: CoordinatorSimulation.lease)
    }

    /// This process's name in the leases (a new process, a new name).
    var holder: String { "\(name)#\(incarnation)" }
    var gateway: String { "http://\(name)" }
    private var store: SimulatedSessionStore { simulation.store }
    private var serving: Bool { isUp && !isStopping }

    // MARK: - Process

    /// Starts a new process: a fresh lifecycle, its idle and lease timers.
    func boot() {
        incarnation += 1
        isUp = true
        isStopping = false
        lifecycle = Lifecycle(settings: CoordinatorSimulation.settings, now: simulation.now, leaseDuration: CoordinatorSimulation.lease)
        termWaiters = nil
        passivateIdle()
        keepLeases()
    }

    /// SIGKILL: everything stops at once, nothing more is answered; a new process starts later.
    func kill() {
        isUp = false
        incarnation += 1
        operations = []
        passivationWaiters = [:]
        reactivationWaiters = [:]
        releaseWaiters = [:]
        stopWhenDone = []
        for tree in simulation.running.values where tree.coordinator === self { tree.die() }
        let cut = requests.sorted { $0.key < $1.key }.map(\.value)
        requests = [:]
        for fail in cut { simulation.after(.milliseconds(1), fail) }
        let dead = incarnation
        simulation.after(.milliseconds(simulation.int(200...2_000))) { [self] in
            if !isUp, incarnation == dead { boot() }
        }
    }

    /// The operator stops it: `stopAll`, its lease term ended in the store, then it exits.
    func stopAll() {
        isStopping = true
        let (slots, term) = lifecycle.stopAll()
        for (_, slot) in slots { stop(slot) }
        if let term { simulation.call(self, { [store] in store.endTerm(term) }) { _ in } }
        later(.seconds(3)) { [self] in kill() }
    }

    /// Runs `action` after `delay`, unless the process died meanwhile.
    private func later(_ delay: Duration, _ action: @escaping () -> Void) {
        let alive = incarnation
        simulation.after(delay) { [self] in
            if incarnation == alive { action() }
        }
    }

    private func startDelay() -> Duration { .milliseconds(simulation.int(1...20)) }

    private func newOperation() -> Int {
        let number = simulation.number()
        operations.insert(number)
        return number
    }

    // MARK: - Clients' requests

    /// `answer`, called once: by the request, or with a failure if the process dies first.
    private func request<T>(_ answer: @escaping (Result<T, SessionError>) -> Void) -> (Result<T, SessionError>) -> Void {
        let number = simulation.number()
        requests[number] = { answer(.failure(.unavailable("the connection closed"))) }
        return { [self] result in
            if requests.removeValue(forKey: number) != nil { answer(result) }
        }
    }

    /// `POST /api/sessions`.
    func create(root: String, _ client: @escaping (Result<SessionID, SessionError>) -> Void) {
        let answer = request(client)
        guard serving else { return answer(.failure(.unavailable("down"))) }
        do {
            try lifecycle.admitCreation(now: simulation.now)
        } catch {
            return answer(.failure(error))
        }
        let id = simulation.newSessionID()
        let operation = newOperation()
        takeLease(of: id, creating: true) { [self] attempt in
            guard case .acquired(let token)? = attempt else {
                lifecycle.creationAbandoned()
                operations.remove(operation)
                return answer(.failure(.unavailable("no lease")))
            }
            later(startDelay()) { [self] in
                let tree = startTree(id, root: root, token: token, operation: operation, checkpoint: nil, sequence: 0)
                operations.remove(operation)
                switch lifecycle.creationStarted(id, root: root, host: tree.number, leaseToken: token, now: simulation.now) {
                case .inserted:
                    tree.owner = .directory
                case .stopping:
                    tree.stop()
                    releaseLease(of: id)
                    return answer(.failure(.unavailable("stopping")))
                case .leaseLost:
                    tree.stop()
                    simulation.count.creationsLeaseLost += 1
                    return answer(.failure(.unavailable("lease lost")))
                }
                tree.awaitDurable { [self] durable in
                    guard durable else {
                        if lifecycle.creationNotRecorded(id) != nil {
                            tree.stop()
                            releaseLease(of: id)
                        }
                        return answer(.failure(.unavailable("not recorded")))
                    }
                    lifecycle.release(id, now: simulation.now)
                    simulation.count.created += 1
                    simulation.note(1)
                    answer(.success(id))
                }
            }
        }
    }

    /// `GET /api/sessions/ID`: its latest published rendering.
    func get(_ id: SessionID, _ client: @escaping (Result<(events: Int, sequence: UInt64), SessionError>) -> Void) {
        serve(id, client) { tree, answer in answer(tree.published) }
    }

    /// `POST /api/sessions/ID/events`: the rendering after it once it is durable (202), `nil`
    /// if it is not (503).
    func send(_ event: Int, to id: SessionID, _ client: @escaping (Result<(events: Int, sequence: UInt64)?, SessionError>) -> Void) {
        serve(id, client) { tree, answer in
            tree.apply(event) { durable in answer(durable ? tree.published : nil) }
        }
    }

    /// `SessionDirectory.use`: `body` runs with the session's tree, which counts as used until
    /// `body` answers.
    private func serve<T>(
        _ id: SessionID, _ client: @escaping (Result<T, SessionError>) -> Void,
        _ body: @escaping (SimulatedTree, @escaping (T) -> Void) -> Void
    ) {
        let answer = request(client)
        guard serving else { return answer(.failure(.unavailable("down"))) }
        use(id) { [self] found in
            switch found {
            case .failure(let error):
                answer(.failure(error))
            case .success(let tree):
                body(tree) { [self] value in
                    lifecycle.release(id, now: simulation.now)
                    answer(.success(value))
                }
            }
        }
    }

    /// `DELETE /api/sessions/ID`.
    func end(_ id: SessionID, _ client: @escaping (SessionError?) -> Void) {
        let answered: (Result<Void, SessionError>) -> Void = request { result in
            if case .failure(let error) = result { client(error) } else { client(nil) }
        }
        let answer = { (error: SessionError?) in answered(error.map { .failure($0) } ?? .success(())) }
        ending(id, answer)
    }

    private func ending(_ id: SessionID, _ answer: @escaping (SessionError?) -> Void) {
        guard serving else { return answer(.unavailable("down")) }
        let proceed = { [self] in
            guard let ended = lifecycle.end(id) else {
                return answer(lifecycle.isStopped ? .unavailable("the coordinator is stopping") : .unknownSession(id.text))
            }
            let (entry, leaseToken) = ended
            let sequence = stop(entry.slot)
            guard let leaseToken else {
                _ = lifecycle.endFailed(id, root: entry.root, sequence: sequence)
                return answer(.unavailable("no lease"))
            }
            simulation.call(self, { [store] in store.remove(id, token: leaseToken) }) { [self] removed in
                if removed == true {
                    lifecycle.ended(id)
                    answer(nil)
                } else {
                    if lifecycle.endFailed(id, root: entry.root, sequence: sequence) { releaseLease(of: id) }
                    answer(.unavailable("not removed"))
                }
            }
        }
        guard !lifecycle.isReleasing(id) else {
            releaseWaiters[id, default: []].append { [self] in ending(id, answer) }
            return
        }
        guard lifecycle.endNeedsClaim(id) else { return proceed() }
        claim(id) { error in
            if let error { answer(error) } else { proceed() }
        }
    }

    // MARK: - The directory's steps

    /// `SessionDirectory.acquire`: the session's tree, once it runs here.
    private func use(_ id: SessionID, claimed: Bool = false, _ body: @escaping (Result<SimulatedTree, SessionError>) -> Void) {
        let step = lifecycle.use(id, now: simulation.now, claimed: claimed) { root, passivated, token in
            self.beginReactivation(id, root: root, passivated, token: token)
        }
        switch step {
        case .claim:
            claim(id) { [self] error in
                if let error { body(.failure(error)) } else { use(id, claimed: true, body) }
            }
        case .unknown:
            body(.failure(.unknownSession(id.text)))
        case .stopping:
            body(.failure(.unavailable("the coordinator is stopping")))
        case .awaitRelease:
            releaseWaiters[id, default: []].append { [self] in use(id, body) }
        case .use(let number):
            body(.success(simulation.trees[number]!))
        case .awaitPassivation(let operation):
            passivationWaiters[operation, default: []].append { [self] outcome in
                _ = settlePassivation(id, operation, outcome)
                use(id, body)
            }
        case .awaitReactivation(let operation):
            reactivationWaiters[operation, default: []].append { [self] outcome in
                do throws(SessionError) {
                    if try lifecycle.settleReactivation(id, operation, outcome, now: simulation.now) != nil, case .success(let number) = outcome {
                        simulation.trees[number]?.owner = .directory
                    }
                } catch {
                    return body(.failure(error))
                }
                use(id, body)
            }
        }
    }

    /// `SessionDirectory.claim`: takes `id` over from the store.
    private func claim(_ id: SessionID, _ claimDone: @escaping (SessionError?) -> Void) {
        lifecycle.claimBegan(id)
        let done = { [self] (error: SessionError?) in
            lifecycle.claimEnded(id)
            claimDone(error)
        }
        takeLease(of: id, creating: false) { [self] attempt in
            guard let attempt else { return done(.unavailable("the store did not answer")) }
            guard case .acquired(let token) = attempt else { return done(Self.refusal(attempt, id)) }
            simulation.call(self, { [store] in store.checkpoint(of: id) }) { [self] read in
                guard let read else { return done(.unavailable("the store did not answer")) }
                switch lifecycle.claimed(id, token: token, root: read?.root, sequence: read?.sequence ?? 0) {
                case .taken:
                    simulation.count.takenOver += 1
                    done(nil)
                case .alreadyHere:
                    done(nil)
                case .refused(let error, let givesUpLease):
                    if givesUpLease { releaseLease(of: id) }
                    done(error)
                }
            }
        }
    }

    private static func refusal(_ attempt: SessionLeaseAttempt, _ id: SessionID) -> SessionError {
        switch attempt {
        case .heldBy(_, let gateway): .ownedElsewhere(gateway: gateway)
        case .noSuchSession: .unknownSession(id.text)
        case .termEnded, .acquired: .unavailable("this coordinator's lease term ended; try again")
        }
    }

    /// `SessionDirectory.takeLease`: `nil` if the store did not answer.
    private func takeLease(of id: SessionID, creating: Bool, tries: Int = 2, _ done: @escaping (SessionLeaseAttempt?) -> Void) {
        guard tries > 0 else { return done(.termEnded) }
        liveTerm { [self] term in
            guard let term else { return done(nil) }
            simulation.call(self, { [store, simulation] in store.acquire(id, term: term, creating: creating, at: simulation.elapsed) }) { [self] attempt in
                switch attempt {
                case nil:
                    done(nil)
                case .termEnded?:
                    drop(lifecycle.termEnded(term))
                    takeLease(of: id, creating: creating, tries: tries - 1, done)
                case .acquired(let token)?:
                    if lifecycle.leaseAcquired(id, token: token, under: term) { return done(attempt) }
                    takeLease(of: id, creating: creating, tries: tries - 1, done)
                case .heldBy?, .noSuchSession?:
                    done(attempt)
                }
            }
        }
    }

    /// `SessionDirectory.liveTerm`: one request begins a term however many ask.
    private func liveTerm(_ done: @escaping (SessionLeaseTerm?) -> Void) {
        drop(lifecycle.expire(now: simulation.now))
        if let term = lifecycle.liveTerm(now: simulation.now) { return done(term) }
        if termWaiters != nil {
            termWaiters?.append(done)
            return
        }
        termWaiters = [done]
        let asked = simulation.now
        let (holder, gateway) = (holder, gateway)
        simulation.call(self, { [store, simulation] in store.beginTerm(holder: holder, gateway: gateway, lease: CoordinatorSimulation.lease, at: simulation.elapsed) }) { [self] term in
            let waiters = termWaiters ?? []
            termWaiters = nil
            for waiter in waiters {
                guard let term else {
                    waiter(nil)
                    continue
                }
                drop(lifecycle.termBegan(term, askedAt: asked))
                waiter(term)
            }
        }
    }

    /// `SessionDirectory.releaseLease`.
    private func releaseLease(of id: SessionID) {
        guard let token = lifecycle.giveUpLease(of: id) else { return }
        simulation.call(self, { [store] in store.release(id, token: token) }) { [self] _ in
            lifecycle.leaseGivenUp(id)
            for waiter in releaseWaiters.removeValue(forKey: id) ?? [] { waiter() }
        }
    }

    /// `SessionDirectory.keepLeases`: a renewal per interval, not waited for past it.
    private func keepLeases() {
        let interval = lifecycle.leaseBook?.renewalInterval ?? .seconds(1)
        later(interval) { [self] in
            guard let term = lifecycle.leaseTerm else {
                drop(lifecycle.expire(now: simulation.now))
                return keepLeases()
            }
            let asked = simulation.now
            var settled = false
            let finish = { [self] (renewed: Bool?) in
                guard !settled else { return }
                settled = true
                switch renewed {
                case true?: lifecycle.termRenewed(term, askedAt: asked)
                case false?: drop(lifecycle.termEnded(term))
                case nil: break
                }
                drop(lifecycle.expire(now: simulation.now))
                keepLeases()
            }
            simulation.call(self, { [store, simulation] in store.renewTerm(term, lease: CoordinatorSimulation.lease, at: simulation.elapsed) }) { finish($0) }
            later(interval) { finish(nil) }
        }
    }

    /// `SessionDirectory.drop`: the sessions of a lost term stop here.
    private func drop(_ slots: [Lifecycle.Slot]) {
        simulation.count.termsLapsed += slots.count
        for slot in slots { stop(slot) }
    }

    /// `SessionDirectory.stop`: stops what runs of a removed session; its rendering's number.
    @discardableResult
    private func stop(_ slot: Lifecycle.Slot) -> UInt64 {
        switch slot {
        case .active(let running):
            let tree = simulation.trees[running.host]!
            tree.stop()
            return tree.sequence
        case .passivating(let running, _):
            return simulation.trees[running.host]!.sequence
        case .passivated(let passivated):
            return passivated.sequence
        case .reactivating(let passivated, let operation):
            stopWhenDone.insert(operation)
            return passivated.sequence
        }
    }

    /// `SessionDirectory.passivateIdle`, every quarter of the idle timeout.
    private func passivateIdle() {
        later(CoordinatorSimulation.settings.idleTimeout / 4) { [self] in
            let begun = lifecycle.beginIdlePassivations(now: simulation.now) { _, number in beginPassivation(of: number) }
            for (id, operation) in begun {
                passivationWaiters[operation, default: []].append { [self] outcome in
                    if settlePassivation(id, operation, outcome) == .passivated { simulation.count.passivated += 1 }
                    releaseLease(of: id)
                }
            }
            passivateIdle()
        }
    }

    private func settlePassivation(_ id: SessionID, _ operation: Int, _ outcome: PassivatedSession?) -> Lifecycle.PassivationEnd {
        lifecycle.settlePassivation(id, operation, outcome, now: simulation.now)
    }

    /// Stops the tree `number`, its last checkpoint committed: kept in the store.
    private func beginPassivation(of number: Int) -> Int {
        let operation = newOperation()
        let tree = simulation.trees[number]!
        tree.stop { [self] in
            later(startDelay()) { [self] in
                complete(passivation: operation, PassivatedSession(kept: .store, sequence: tree.sequence))
            }
        }
        return operation
    }

    private func complete(passivation operation: Int, _ outcome: PassivatedSession?) {
        operations.remove(operation)
        for waiter in shuffled(passivationWaiters.removeValue(forKey: operation) ?? []) { waiter(outcome) }
    }

    /// Reads the session's checkpoint and starts its tree from it.
    private func beginReactivation(_ id: SessionID, root: String, _ passivated: PassivatedSession, token: FencingToken?) -> Int {
        let operation = newOperation()
        guard let token else {
            later(startDelay()) { [self] in complete(reactivation: operation, .failure(.unavailable("no lease"))) }
            return operation
        }
        simulation.call(self, { [store] in store.checkpoint(of: id) }) { [self] read in
            guard let read else { return complete(reactivation: operation, .failure(.unavailable("the store did not answer"))) }
            guard let checkpoint = read else { return complete(reactivation: operation, .failure(.unknownSession(id.text))) }
            later(startDelay()) { [self] in
                let tree = startTree(id, root: root, token: token, operation: operation, checkpoint: checkpoint, sequence: passivated.sequence)
                complete(reactivation: operation, .success(tree.number))
            }
        }
        return operation
    }

    private func complete(reactivation operation: Int, _ outcome: Result<Int, SessionError>) {
        operations.remove(operation)
        if stopWhenDone.remove(operation) != nil, case .success(let number) = outcome { simulation.trees[number]?.stop() }
        for waiter in shuffled(reactivationWaiters.removeValue(forKey: operation) ?? []) { waiter(outcome) }
    }

    private func startTree(
        _ id: SessionID, root: String, token: FencingToken, operation: Int, checkpoint: SimulatedSessionStore.Checkpoint?, sequence: UInt64
    ) -> SimulatedTree {
        let tree = SimulatedTree(
            number: simulation.number(), session: id, root: root, coordinator: self, token: token, owner: .operation(operation),
            checkpoint: checkpoint, sequence: sequence)
        simulation.trees[tree.number] = tree
        simulation.running[tree.number] = tree
        return tree
    }

    /// Waiters in an order drawn from the seed: whoever resumes first settles.
    private func shuffled<T>(_ waiters: [T]) -> [T] {
        var waiters = waiters
        if waiters.count > 1 { waiters.shuffle(using: &simulation.random) }
        return waiters
    }

    /// What it holds, in words, for a violation's message.
    func describe() -> String {
        let slots = lifecycle.listed { id, entry -> String in
            let slot: String =
                switch entry.slot {
                case .active(let running): "active(\(running.clients) clients)"
                case .passivating: "passivating"
                case .passivated: "passivated"
                case .reactivating: "reactivating"
                }
            return "\(id.text.prefix(8)) \(slot)"
        }
        return "\(holder)\(isUp ? "" : " down")\(isStopping ? " stopping" : ""): \(slots.sorted().joined(separator: ", ")), \(lifecycle.creationsUnderWay) creating"
    }

    // MARK: - Invariants

    /// The sessions held (and created) within the limit, each under a lease held here, each
    /// active one served by no other coordinator while this one's term is live.
    func brokenInvariant() -> String? {
        // One copy of the value for the whole check (each read of the property copies it).
        let lifecycle = lifecycle
        if lifecycle.placesTaken > CoordinatorSimulation.settings.maxSessions {
            return "\(holder) holds \(lifecycle.count) sessions, creates \(lifecycle.creationsUnderWay), past max_sessions \(CoordinatorSimulation.settings.maxSessions)"
        }
        let live = lifecycle.liveTerm(now: simulation.now) != nil
        let problems = lifecycle.listed { id, entry -> String? in
            guard let token = lifecycle.leaseToken(of: id) else { return "\(holder) holds session \(id.text.prefix(8)) without its lease" }
            guard live, entry.slot.isActive else { return nil }
            guard let lease = store.lease(of: id, at: simulation.elapsed), lease.token == token, lease.live else {
                return "\(holder) serves session \(id.text.prefix(8)) with token \(token) while its term is live, but the store's lease is \(store.describeLease(of: id, at: simulation.elapsed)) (this term: \(lifecycle.leaseTerm?.number ?? -1))"
            }
            return nil
        }
        return problems.compactMap { $0 }.min()
    }

    /// Why `tree`, running, is an orphan (nobody will stop it), if it is.
    func orphaned(_ tree: SimulatedTree) -> String? {
        let lifecycle = lifecycle
        switch tree.owner {
        case .operation(let operation):
            return operations.contains(operation) ? nil : "\(holder): the tree of session \(tree.session.text.prefix(8)) runs, and its operation ended without handing it over"
        case .directory:
            if let entry = lifecycle.entry(tree.session), case .active(let running) = entry.slot, running.host == tree.number { return nil }
            return "\(holder): the tree of session \(tree.session.text.prefix(8)) runs, and the directory does not hold it (nothing will stop it)"
        }
    }
}
