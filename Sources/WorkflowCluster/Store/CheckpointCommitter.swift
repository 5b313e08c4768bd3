import Foundation
import Logging
import Synchronization
import Tracing
import Workflow

/// Makes accepted events durable in batches: the group commit between one tree's render passes
/// and the store.
///
/// One committer per tree the coordinator hosts (the shared root, each session), each writing its
/// own `CheckpointScope` with its token (the coordinator's, or spread its session lease's). The
/// store, in turn, puts the checkpoints of all trees that commit at the same time in one
/// transaction (`GroupCommit`): one fsync for events spread over many sessions too.
///
/// An event is handed to its sink first (queued on the root's loop), then its sender waits in
/// `awaitDurable()`. The commit task takes every waiting sender at once, asks the session for a
/// checkpoint taken on the loop *after* those events were queued (so the tree it captures has
/// applied them: to the root's state, or to a remote child's list of events not yet acknowledged
/// by its worker, which a restore sends again), commits it in one transaction and then answers
/// them all. Senders that arrive while a commit is running share the next one: one fsync per
/// batch, however many events.
///
/// Renderings follow the same rule: the session hands a settled rendering to clients only once
/// a checkpoint that reflects it is committed (`publish` of a `Capture`), so no client ever sees
/// a state that a crash could take back.
///
/// A failed or fenced commit fails its batch and every later sender (`CheckpointFailure`, which
/// the session answers as `RootEventError.notDurable`), and no rendering is published after it:
/// the coordinator can no longer promise durability, says so (a critical log line) and accepts
/// nothing more until it is restarted.
package final class CheckpointCommitter: Sendable {
    /// What the session captures on its loop for one commit.
    package struct Capture: Sendable {
        /// The tree's snapshot after every queued event was applied.
        package var snapshot: TreeSnapshot
        /// The sequence number of the latest rendering the snapshot reflects.
        package var renderingSequence: UInt64
        /// That rendering's JSON, kept with the checkpoint (`CheckpointRendering`); `nil` when
        /// it is not known.
        package var rendering: Data?
        /// Hands that rendering to clients (called once the checkpoint is committed).
        package var publish: @Sendable () -> Void

        package init(snapshot: TreeSnapshot, renderingSequence: UInt64, rendering: Data? = nil, publish: @escaping @Sendable () -> Void) {
            self.snapshot = snapshot
            self.renderingSequence = renderingSequence
            self.rendering = rendering
            self.publish = publish
        }
    }

    /// Why an accepted event could not be made durable.
    package struct CheckpointFailure: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    private struct State {
        var waiting: [CheckedContinuation<Result<Void, CheckpointFailure>, Never>] = []
        var renderingPending = false
        var wake: CheckedContinuation<Bool, Never>?
        var stopping = false
        /// `run` has returned: no checkpoint will be taken any more.
        var ended = false
        var failure: CheckpointFailure?
        /// How many accepted events the waiting senders sent (a waiter for a checkpoint alone,
        /// such as a session's creation, sent none).
        var waitingEvents: Int64 = 0
        var number: Int64
        var acceptedEvents: Int64
    }

    /// The store checkpoints go to.
    package let store: any CoordinatorStore
    /// This writer's token: every commit carries it.
    package let token: FencingToken
    /// The tree whose checkpoints it commits.
    package let scope: CheckpointScope
    /// What rebuilds a session's workflow, stored with its checkpoints (`nil`: the shared root).
    package let origin: SessionOrigin?
    /// The checkpoint this tree started from (`nil`: it started fresh).
    package let restored: CoordinatorCheckpoint?
    /// The tree's stream run, the same in every checkpoint of the tree (`CheckpointRendering.run`):
    /// the restored checkpoint's, or a new one.
    package let streamRun: String
    /// The rendering kept with the restored checkpoint (of its `renderingSequence`), from which
    /// a resuming client gets a delta; `nil` when it kept none.
    package let restoredRendering: RootRenderingJSON?
    private let logger: Logger
    private let state: Mutex<State>
    /// Where the wait for an event's durability is traced (`SpanNames.commit`); `nil`: off.
    package let tracer: (any Tracer)?
    /// How long a session's capture waits for its remote children to acknowledge the events it
    /// commits, so that one checkpoint holds them and the rendering their answers bring
    /// (`SessionLoop.whenEventsAcknowledged(within:_:)`); past it, the rendering takes a
    /// checkpoint of its own, as without the wait.
    package let acknowledgementWait: Duration

    /// The default `acknowledgementWait`: a worker's answer takes well under a millisecond
    /// on an idle machine and tens of them on a loaded one; a child whose worker is gone
    /// delays its events' answers by at most this.
    package static let defaultAcknowledgementWait: Duration = .milliseconds(50)

    /// A committer writing `scope`'s checkpoints (with `origin`) to `store` with `token`,
    /// numbering after `restored`.
    package init(
        store: any CoordinatorStore, token: FencingToken, scope: CheckpointScope = .shared, origin: SessionOrigin? = nil,
        restored: CoordinatorCheckpoint?, logger: Logger, tracer: (any Tracer)? = nil,
        acknowledgementWait: Duration = defaultAcknowledgementWait
    ) {
        self.tracer = tracer
        self.acknowledgementWait = acknowledgementWait
        self.store = store
        self.token = token
        self.scope = scope
        self.origin = origin
        self.restored = restored
        // The run goes on only with the frame of the restored sequence: without it, no client
        // can resume from there, and a new run keeps a client's frame of this tree's earlier
        // renderings from ever being taken for one of this run.
        if let restored, let kept = CheckpointRendering.kept(in: restored.snapshot), kept.sequence == restored.renderingSequence,
            let json = kept.rendering
        {
            self.streamRun = kept.run
            self.restoredRendering = RootRenderingJSON(sequence: kept.sequence, json: json)
        } else {
            self.streamRun = CheckpointRendering.newRun()
            self.restoredRendering = nil
        }
        self.logger = logger
        self.state = Mutex(State(number: restored?.number ?? 0, acceptedEvents: restored?.acceptedEvents ?? 0))
    }

    /// Returns once a checkpoint taken after this call is committed (so it reflects every event
    /// the caller queued before calling); throws if that commit failed or the committer stopped.
    /// `events`: how many accepted events the caller waits for (counted in the checkpoint's
    /// `acceptedEvents`; `0` to wait for a checkpoint of the tree as it is).
    package func awaitDurable(events: Int64 = 1) async throws(CheckpointFailure) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, CheckpointFailure>, Never>) in
            let (refused, wake) = state.withLock { state -> (CheckpointFailure?, CheckedContinuation<Bool, Never>?) in
                if let failure = state.failure { return (failure, nil) }
                if state.ended { return (CheckpointFailure(description: "the coordinator is stopping"), nil) }
                state.waiting.append(continuation)
                state.waitingEvents += events
                defer { state.wake = nil }
                return (nil, state.wake)
            }
            if let refused { continuation.resume(returning: .failure(refused)) }
            wake?.resume(returning: true)
        }
        try result.get()
    }

    /// Why commits stopped, once one failed (`nil` while they succeed).
    package var failure: CheckpointFailure? {
        state.withLock { $0.failure }
    }

    /// A rendering is waiting to be published: commit a checkpoint for it soon.
    package func renderingSettled() {
        change({ $0.renderingPending = true }, waking: true)
    }

    /// Called on the loop by the capture, once the rendering it publishes is taken: renderings
    /// settled before it need no further checkpoint.
    package func renderingTaken() {
        state.withLock { $0.renderingPending = false }
    }

    /// Commits checkpoints as senders and renderings ask for them, until `stop()`: then commits
    /// what is still waiting and returns. `capture` runs the session's loop job.
    package func run(capture: @escaping @Sendable () async -> Capture) async {
        while await nextBatch() {
            let (batch, events) = state.withLock { state in
                defer {
                    state.waiting.removeAll()
                    state.waitingEvents = 0
                }
                return (state.waiting, state.waitingEvents)
            }
            let captured = await capture()
            let result = await commit(captured, events: events)
            if case .success = result { captured.publish() }
            for waiter in batch { waiter.resume(returning: result) }
            if case .failure = result { break }
        }
        // Anyone still waiting (only after a failed commit) is answered with the failure.
        let (rest, failure) = state.withLock { state in
            defer { state.waiting.removeAll() }
            state.ended = true
            return (state.waiting, state.failure ?? CheckpointFailure(description: "the coordinator is stopping"))
        }
        for waiter in rest { waiter.resume(returning: .failure(failure)) }
    }

    /// Ends `run` after one last commit of whatever is waiting.
    package func stop() {
        change({ $0.stopping = true }, waking: false)
    }

    /// Applies `body` to the state, then resumes the commit task with `value` if it is idle
    /// (`true`: commit; `false`: nothing left, stop).
    private func change(_ body: (inout State) -> Void, waking value: Bool) {
        let wake = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            body(&state)
            defer { state.wake = nil }
            return state.wake
        }
        wake?.resume(returning: value)
    }

    /// Waits until there is something to commit; `false` once stopping with nothing left.
    private func nextBatch() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let ready = state.withLock { state -> Bool? in
                if !state.waiting.isEmpty || state.renderingPending { return true }
                if state.stopping { return false }
                state.wake = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func commit(_ capture: Capture, events: Int64) async -> Result<Void, CheckpointFailure> {
        let snapshot: Data
        do {
            snapshot = try CheckpointRendering.payload(
                capture.snapshot, with: CheckpointRendering(run: streamRun, sequence: capture.renderingSequence, rendering: capture.rendering))
        } catch {
            return fail("the tree snapshot cannot be encoded: \(error)")
        }
        let (number, accepted) = state.withLock { state in
            (state.number + 1, state.acceptedEvents + events)
        }
        let checkpoint = CoordinatorCheckpoint(
            scope: scope, origin: origin, number: number, renderingSequence: capture.renderingSequence, acceptedEvents: accepted,
            snapshot: snapshot)
        do {
            try await store.commit(checkpoint, fencedBy: token)
        } catch {
            logger.critical("accepted events can no longer be made durable: \(error)", metadata: ["scope": "\(scope)"])
            return fail("\(error)")
        }
        state.withLock { state in
            state.number = number
            state.acceptedEvents = accepted
        }
        return .success(())
    }

    private func fail(_ description: String) -> Result<Void, CheckpointFailure> {
        let failure = CheckpointFailure(description: description)
        state.withLock { $0.failure = failure }
        return .failure(failure)
    }
}
