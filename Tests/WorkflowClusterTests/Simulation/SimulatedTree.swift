import WorkflowCluster

/// A session's tree as the simulation runs it, in place of `WorkflowRootSession` and its
/// `CheckpointCommitter`: it applies events in order, commits them in batches with its token
/// (one commit at a time, as the group commit does), answers each event once the checkpoint
/// holding it is committed, and publishes a rendering only then. A failed or fenced commit
/// fails its batch and every later event (nothing is published after it), as the committer does.
final class SimulatedTree {
    /// Who must stop it: the operation that started it (a creation or a reactivation, until it
    /// hands it over), or the directory that holds it.
    enum Owner: Equatable {
        case operation(Int)
        case directory
    }

    let number: Int
    let session: SessionID
    let root: String
    unowned let coordinator: SimulatedCoordinator
    let token: FencingToken
    var owner: Owner
    private(set) var events: [Int]
    private(set) var sequence: UInt64
    /// The rendering clients see: how many events it reflects, and its number.
    private(set) var published: (events: Int, sequence: UInt64)
    private(set) var isRunning = true
    private var isBroken = false
    private var isCommitting = false
    private var waiting: [(Bool) -> Void] = []
    private var onDrained: [() -> Void] = []

    /// A tree of `session` started from `checkpoint` (`nil`: a new one) at `sequence`.
    init(
        number: Int, session: SessionID, root: String, coordinator: SimulatedCoordinator, token: FencingToken, owner: Owner,
        checkpoint: SimulatedSessionStore.Checkpoint?, sequence: UInt64
    ) {
        self.number = number
        self.session = session
        self.root = root
        self.coordinator = coordinator
        self.token = token
        self.owner = owner
        self.events = checkpoint?.events ?? []
        self.sequence = max(sequence, checkpoint?.sequence ?? 0)
        // A restored tree's first rendering is its checkpoint's: durable already.
        self.published = (events.count, self.sequence)
    }

    /// Applies `event` and answers whether it is durable.
    func apply(_ event: Int, _ answer: @escaping (Bool) -> Void) {
        guard isRunning else { return answer(false) }
        events.append(event)
        sequence += 1
        guard !isBroken else { return answer(false) }
        waiting.append(answer)
        commitIfIdle()
    }

    /// Answers once the tree as it is now is committed (a creation's first checkpoint).
    func awaitDurable(_ answer: @escaping (Bool) -> Void) {
        guard !isBroken else { return answer(false) }
        waiting.append(answer)
        commitIfIdle()
    }

    /// Stops it: nothing more is applied; what waits is committed, then `drained` runs.
    func stop(drained: @escaping () -> Void = {}) {
        isRunning = false
        coordinator.simulation.running[number] = nil
        onDrained.append(drained)
        finishIfDrained()
    }

    /// Its process died: nothing more is applied, committed or answered.
    func die() {
        isRunning = false
        coordinator.simulation.running[number] = nil
        waiting = []
        onDrained = []
    }

    private func finishIfDrained() {
        guard !isCommitting, waiting.isEmpty || isBroken else { return }
        let callbacks = onDrained
        onDrained = []
        for callback in callbacks { callback() }
    }

    private func commitIfIdle() {
        guard !isCommitting, !waiting.isEmpty, !isBroken else { return finishIfDrained() }
        let batch = waiting
        waiting = []
        let checkpoint = SimulatedSessionStore.Checkpoint(root: root, events: events, sequence: sequence)
        isCommitting = true
        let (store, session, token, writer) = (coordinator.simulation.store, session, token, coordinator.holder)
        coordinator.simulation.call(coordinator, { store.commit(session, checkpoint, token: token, writer: writer) }) { [self] committed in
            isCommitting = false
            if committed == true {
                published = (checkpoint.events.count, checkpoint.sequence)
                for answer in batch { answer(true) }
            } else {
                if committed == false { coordinator.simulation.count.fenced += 1 }
                isBroken = true
                let failed = batch + waiting
                waiting = []
                for answer in failed { answer(false) }
            }
            commitIfIdle()
        }
    }
}
