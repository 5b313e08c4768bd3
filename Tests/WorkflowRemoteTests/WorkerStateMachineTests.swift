import Testing
@testable import WorkflowRemote

/// The worker role's state machine without sockets, threads or a clock: each input carries its
/// time, and what it decides is checked directly.
@Suite struct WorkerStateMachineTests {
    typealias Machine = WorkerStateMachine<String>
    let origin = ContinuousClock.now
    let interval = Duration.milliseconds(100)

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { origin + .milliseconds(milliseconds) }

    /// A welcomed worker (liveness window 300 ms) hosting child 1, epoch 1, heard at time 0.
    func hosting(capacity: Int = 10) -> Machine {
        var machine = Machine(
            configuration: .init(heartbeatInterval: interval, heartbeatLiveness: 3, capacity: capacity, hasParent: true), now: at(0))
        _ = machine.handshakeSucceeded(at: at(0))
        machine.welcomed(drains: true, startsCarryBase: true)
        machine.started(1, epoch: 1, path: "/child", child: "copy-1", appliedThrough: 0)
        return machine
    }

    /// Applies `count` events from `first` for child 1 at `time`, each emitting one output;
    /// returns what `nextEvent` said last.
    @discardableResult
    func apply(_ count: Int, from first: UInt64, epoch: UInt64 = 1, at time: ContinuousClock.Instant, to machine: inout Machine) -> Machine.NextEvent {
        guard var run = machine.beginEvents(for: 1, epoch: epoch, firstSequence: first, count: count) else { return .done }
        var last = Machine.NextEvent.done
        while true {
            last = machine.nextEvent(of: &run, at: time)
            guard case .apply(let sequence) = last else { break }
            machine.outputProduced([UInt8(sequence % 256)], childID: 1, path: "/child")
            machine.eventApplied(in: &run, delivered: true)
        }
        machine.endEvents(run)
        return last
    }

    @Test("outputs are tagged with their event; one flush carries them, the rendering after them and the cumulative acknowledgement")
    func flushCarriesOutputsRenderingAndAcknowledgement() throws {
        var machine = hosting()
        apply(3, from: 1, at: at(10), to: &machine)
        var order: [UInt64] = []
        machine.takeChildrenToRender(into: &order)
        #expect(order == [1])
        machine.renderingProduced([9], sequence: 4, childID: 1, path: "/child")
        machine.takeFlushOrder(into: &order)
        #expect(order == [1])
        let flushed = machine.flush(1)
        let flush = try #require(flushed)
        #expect(flush.outputs?.causes == [1, 2, 3])
        #expect(flush.outputs?.ordinals == [0, 0, 0])
        #expect(flush.rendering?.sequence == 4)
        #expect(flush.acknowledged == 3)
        #expect(flush.epoch == 1 && flush.carriesSnapshot && !flush.released)
        // Nothing new: nothing to flush; a rendering alone is a rendering-only step.
        #expect(machine.flush(1) == nil)
        machine.renderingProduced([10], sequence: 5, childID: 1, path: "/child")
        let renderingFlush = machine.flush(1)
        let renderingOnly = try #require(renderingFlush)
        #expect(renderingOnly.isRenderingOnly && renderingOnly.acknowledged == nil)
        // An output no event caused (a worker's result) is tagged 0.
        machine.outputProduced([1], childID: 1, path: "/child")
        #expect(machine.flush(1)?.outputs?.causes == [0])
    }

    @Test("a worker woken past its lease in the middle of a message applies none of its rest, and fences")
    func leaseIsCheckedBeforeEveryEvent() throws {
        var machine = hosting()
        guard var run = machine.beginEvents(for: 1, epoch: 1, firstSequence: 1, count: 5) else {
            Issue.record("no run for a hosted child")
            return
        }
        #expect(machine.nextEvent(of: &run, at: at(100)) == .apply(sequence: 1))
        machine.eventApplied(in: &run, delivered: true)
        // Stopped (SIGSTOP) between two events for longer than the liveness window.
        #expect(machine.nextEvent(of: &run, at: at(401)) == .leaseRanOut)
        machine.endEvents(run)
        let fenced = machine.fenceIfLeaseRanOut(at: at(401))
        let fence = try #require(fenced)
        guard case .reconnect(_, let attempt, false, let forgotten) = fence else {
            Issue.record("expected a reconnection, got \(fence)")
            return
        }
        #expect(attempt == 1)
        #expect(forgotten.children.map(\.child) == ["copy-1"])
        #expect(machine.hosting.children.isEmpty && !machine.isWelcomed && machine.pendingCount == 0)
        // The old copy's events find nobody.
        #expect(machine.beginEvents(for: 1, epoch: 1, firstSequence: 2, count: 4) == nil)
    }

    @Test("a slice of the parent's messages ends after its event limit, or after half a heartbeat interval however few events it applied")
    func sliceEndsByCountOrTime() {
        var machine = hosting()
        func continues(at time: ContinuousClock.Instant) -> Bool { machine.sliceContinues(limit: 4, at: time) }
        machine.heardFromParent(at: at(0))
        machine.beginSlice(at: at(0))
        #expect(continues(at: at(0)))
        apply(4, from: 1, at: at(1), to: &machine)
        #expect(!continues(at: at(1)), "a slice past its event limit went on")
        // A new slice: two slow events, then half an interval has passed since it began.
        machine.sentToParent(at: at(10))
        machine.beginSlice(at: at(10))
        apply(2, from: 5, at: at(40), to: &machine)
        #expect(continues(at: at(59)))
        #expect(!continues(at: at(60)), "a slice of slow events outlasted half a heartbeat interval")
        machine.beginSlice(at: at(60))
        #expect(continues(at: at(60)))
    }

    @Test("the lease holds while the worker both heard from and sent to its parent within the window; without children there is none")
    func leaseNeedsTrafficBothWays() {
        var machine = hosting()
        machine.sentToParent(at: at(250))
        machine.heardFromParent(at: at(250))
        #expect(machine.silenceBeyondLease(at: at(550)) == nil)
        // Heard from, but sent nothing since 250: the parent may have heard nothing since.
        machine.heardFromParent(at: at(500))
        #expect(machine.silenceBeyondLease(at: at(551)) != nil)
        _ = machine.discard(1)
        #expect(machine.silenceBeyondLease(at: at(5000)) == nil)
    }

    @Test("messages for another placement are dropped: events, STOP and RELEASE name their epoch")
    func otherEpochsAreRefused() {
        var machine = hosting()
        #expect(machine.beginEvents(for: 1, epoch: 2, firstSequence: 1, count: 1) == nil)
        #expect(machine.stopRequested(1, epoch: 2) == nil)
        #expect(machine.child(1, epoch: 1) == "copy-1")
        guard case .notHosted = machine.releaseRequested(1, epoch: 0, path: "/child", forwardedEventsUnacknowledged: false) else {
            Issue.record("a RELEASE for another epoch was taken")
            return
        }
        #expect(machine.stopRequested(1, epoch: 1)?.child == "copy-1")
        #expect(machine.hosting.children.isEmpty)
    }

    @Test("a START beyond the capacity is refused")
    func capacity() {
        var machine = hosting(capacity: 1)
        #expect(machine.startRequested() == .atCapacity)
        _ = machine.discard(1)
        #expect(machine.startRequested() == .place)
    }

    @Test("heartbeats on an idle link; a silent parent makes the worker reconnect, backing off; none before the handshake")
    func heartbeatsAndSilence() {
        var machine = Machine(
            configuration: .init(heartbeatInterval: interval, heartbeatLiveness: 3, capacity: 10, hasParent: true), now: at(0))
        // Not connected: no heartbeat, no silence.
        #expect(machine.tick(at: at(10_000)).fence == nil)
        #expect(machine.sendFailed(hello: true) == .notConnectedYet)
        // The HELLO that found no connection goes with the handshake.
        #expect(machine.handshakeSucceeded(at: at(10_000)).sendHello)
        machine.welcomed(drains: false, startsCarryBase: true)
        #expect(machine.tick(at: at(10_050)).sendHeartbeat == false)
        #expect(machine.tick(at: at(10_100)).sendHeartbeat)
        machine.sentToParent(at: at(10_100))
        // Window 300 ms + back-off 100 ms.
        #expect(machine.tick(at: at(10_400)).fence == nil)
        guard case .reconnect(_, 1, _, _)? = machine.tick(at: at(10_401)).fence else {
            Issue.record("no reconnection after the window")
            return
        }
        // Not welcomed since: four windows, and a doubled back-off.
        _ = machine.handshakeSucceeded(at: at(10_500))
        #expect(machine.tick(at: at(10_500 + 1400)).fence == nil)
        guard case .reconnect(_, 2, _, _)? = machine.tick(at: at(10_500 + 1401)).fence else {
            Issue.record("no second reconnection")
            return
        }
        machine.welcomed(drains: false, startsCarryBase: true)
        #expect(machine.reconnectAttempts == 0)
    }

    @Test("a parent with standbys: an endpoint that cannot be reached for the window is moved on from; the back-off grows per round of endpoints")
    func unreachableEndpointOfSeveral() {
        var machine = Machine(
            configuration: .init(heartbeatInterval: interval, heartbeatLiveness: 3, capacity: 10, hasParent: true, parentEndpoints: 2), now: at(0))
        // Never connected (a standby binds nothing): silent after the window + back-off (100 ms).
        #expect(machine.tick(at: at(400)).fence == nil)
        guard case .reconnect(_, 1, false, _)? = machine.tick(at: at(401)).fence else {
            Issue.record("no move to the next endpoint after the window")
            return
        }
        // The second endpoint, unreachable too: the back-off is still one interval (one round of two).
        #expect(machine.tick(at: at(401 + 400)).fence == nil)
        guard case .reconnect(_, 2, false, _)? = machine.tick(at: at(401 + 401)).fence else {
            Issue.record("no move back to the first endpoint")
            return
        }
        // A round done: the back-off doubles.
        #expect(machine.tick(at: at(802 + 500)).fence == nil)
        guard case .reconnect(_, 3, false, _)? = machine.tick(at: at(802 + 501)).fence else {
            Issue.record("no third move")
            return
        }
        // With a single endpoint an unreachable parent is waited for, however long.
        var single = Machine(configuration: .init(heartbeatInterval: interval, heartbeatLiveness: 3, capacity: 10, hasParent: true), now: at(0))
        #expect(single.tick(at: at(10_000)).fence == nil)
    }

    @Test("a parent with standbys: a welcomed worker whose connection closed moves on at once; with one endpoint, or before the WELCOME, it waits")
    func closedConnectionOfSeveralMovesOn() {
        var machine = Machine(
            configuration: .init(heartbeatInterval: interval, heartbeatLiveness: 3, capacity: 10, hasParent: true, parentEndpoints: 2), now: at(0))
        _ = machine.handshakeSucceeded(at: at(0))
        // Not welcomed yet: the HELLO is still to be answered, the silence rule covers it.
        #expect(machine.connectionClosed(at: at(10)) == nil)
        machine.welcomed(drains: true, startsCarryBase: true)
        machine.started(1, epoch: 1, path: "/child", child: "copy-1", appliedThrough: 0)
        apply(2, from: 1, at: at(20), to: &machine)
        // Well within the liveness window (300 ms) of the last word from the parent.
        guard case .reconnect(let silence, 1, false, let forgotten)? = machine.connectionClosed(at: at(30)) else {
            Issue.record("a closed connection was waited out")
            return
        }
        #expect(silence == .zero)
        #expect(forgotten.children.map(\.child) == ["copy-1"])
        #expect(machine.hosting.children.isEmpty && !machine.isWelcomed)
        // The move is done: a second report of the old connection changes nothing.
        #expect(machine.connectionClosed(at: at(31)) == nil)

        // One endpoint: libzmq reconnects to it, and the rejoin follows the handshake.
        var single = hosting()
        #expect(single.connectionClosed(at: at(10)) == nil)
        #expect(single.hosting.children.count == 1)
    }

    @Test("RECONNECT is ignored until welcomed, then stops every child")
    func reconnectRequest() {
        var machine = hosting()
        #expect(machine.reconnectRequested()?.children.map(\.child) == ["copy-1"])
        #expect(machine.reconnectRequested() == nil)
    }

    @Test("a drain: released children are counted; a RELEASE waits for forwarded events; the answer ends it after them")
    func drain() throws {
        var machine = hosting()
        machine.started(2, epoch: 7, path: "/other", child: "copy-2", appliedThrough: 0)
        guard case .begun(children: 2) = machine.beginDrain(deadline: .seconds(5), at: at(0)) else {
            Issue.record("the drain did not begin")
            return
        }
        guard case .alreadyRunning = machine.beginDrain(deadline: .seconds(5), at: at(0)) else {
            Issue.record("a second drain began")
            return
        }
        guard case .release(let child) = machine.releaseRequested(1, epoch: 1, path: "/child", forwardedEventsUnacknowledged: false) else {
            Issue.record("child 1 not released")
            return
        }
        #expect(child == "copy-1")
        #expect(machine.flush(1, releasing: true)?.released == true)
        #expect(machine.released(1)?.child == "copy-1")
        guard case .deferred = machine.releaseRequested(2, epoch: 7, path: "/other", forwardedEventsUnacknowledged: true) else {
            Issue.record("child 2's release not deferred")
            return
        }
        #expect(machine.drainAnswered() == nil)
        #expect(machine.takeDeferredReleases(forwardedEventsUnacknowledged: true).isEmpty)
        let deferred = machine.takeDeferredReleases(forwardedEventsUnacknowledged: false)
        #expect(deferred == [.init(childID: 2, epoch: 7, path: "/other")])
        _ = machine.released(2)
        let finished = machine.finishDrainIfAnswered()
        let outcome = try #require(finished)
        #expect(outcome == DrainOutcome(ending: .handedOver, children: 2, handedOver: 2))
        #expect(machine.leaving.drain == nil)
    }

    @Test("a drain ends at its deadline, or at once without a parent that drains")
    func drainEndings() {
        var machine = hosting()
        guard case .begun = machine.beginDrain(deadline: .seconds(1), at: at(0)) else {
            Issue.record("the drain did not begin")
            return
        }
        #expect(machine.drainDeadline(at: at(999)) == nil)
        #expect(machine.drainDeadline(at: at(1000))?.ending == .deadlinePassed)

        var old = Machine(
            configuration: .init(heartbeatInterval: interval, heartbeatLiveness: 3, capacity: 10, hasParent: true), now: at(0))
        guard case .finished(let notConnected) = old.beginDrain(deadline: .seconds(1), at: at(0)) else {
            Issue.record("a drain began unwelcomed")
            return
        }
        #expect(notConnected.ending == .notConnected)
        old.welcomed(drains: false, startsCarryBase: true)
        guard case .unsupportedByParent = old.beginDrain(deadline: .seconds(1), at: at(0)) else {
            Issue.record("a drain began with a parent that does not drain")
            return
        }
    }

    @Test("a leaving worker whose parent falls silent stops its children without reconnecting")
    func silenceWhileLeaving() {
        var machine = hosting()
        _ = machine.beginDrain(deadline: .seconds(10), at: at(0))
        guard case .stopWhileLeaving(_, let forgotten)? = machine.fenceIfLeaseRanOut(at: at(301)) else {
            Issue.record("no stop while leaving")
            return
        }
        #expect(forgotten.drain?.ending == .notConnected)
        #expect(machine.hosting.children.isEmpty)
    }

    @Test("events after a gap (messages lost in transit) are not applied: the worker fences and joins again")
    func eventsAfterAGapFence() {
        var machine = hosting()
        apply(2, from: 1, at: at(10), to: &machine)
        guard case .inputLost(let expected, let received, .reconnect(_, _, _, let forgotten)) =
            machine.eventsArrived(for: 1, epoch: 1, firstSequence: 5, count: 1, at: at(20))
        else {
            Issue.record("events after a gap were taken")
            return
        }
        #expect(expected == 3 && received == 5)
        #expect(forgotten.children.map(\.child) == ["copy-1"])
        #expect(machine.hosting.children.isEmpty)
    }

    @Test("a welcomed worker whose connection comes back (what was in flight is lost) stops its children and joins again; before the WELCOME it only says HELLO")
    func reestablishedConnectionRejoins() {
        var machine = hosting()
        apply(2, from: 1, at: at(10), to: &machine)
        guard case .reconnect(let silence, _, _, let forgotten)? = machine.handshakeSucceeded(at: at(20)).fence else {
            Issue.record("a re-established connection was trusted")
            return
        }
        #expect(silence == .zero)
        #expect(forgotten.children.map(\.child) == ["copy-1"])
        #expect(machine.hosting.children.isEmpty)
        // The new socket's handshake, before the WELCOME: no fence.
        #expect(machine.handshakeSucceeded(at: at(30)).fence == nil)
    }

    @Test("a START that names its snapshot's last event makes a gap before the first event visible too")
    func startBaseChecksTheFirstEvents() {
        var machine = hosting()
        machine.started(2, epoch: 3, path: "/two", child: "copy-2", appliedThrough: 40)
        guard case .apply = machine.eventsArrived(for: 2, epoch: 3, firstSequence: 41, count: 2, at: at(10)) else {
            Issue.record("the next event was refused")
            return
        }
        guard case .inputLost = machine.eventsArrived(for: 2, epoch: 3, firstSequence: 43, count: 1, at: at(10)) else {
            Issue.record("events after a gap were taken")
            return
        }
        // Nothing was applied, so nothing is acknowledged.
        var fresh = hosting()
        fresh.started(2, epoch: 3, path: "/two", child: "copy-2", appliedThrough: 40)
        var order: [UInt64] = []
        fresh.takeFlushOrder(into: &order)
        #expect(fresh.flush(2) == nil)
    }

    /// Found by the simulator's long mode (nested seed 1795748709784): a new child's first
    /// events messages were lost on a broken connection, the socket came back, and the worker
    /// read the next message before its monitor reported the new handshake. A START that says
    /// 0 meant "not said", so event 17 was applied as the child's first.
    @Test("a START whose snapshot holds no event expects event 1 first when the parent's WELCOME promised STARTs say their base; otherwise any first event is taken")
    func startBaseZeroIsABase() {
        var machine = hosting()
        guard case .inputLost(let expected, let received, _) = machine.eventsArrived(for: 1, epoch: 1, firstSequence: 17, count: 2, at: at(10)) else {
            Issue.record("events after a gap were taken as a new child's first")
            return
        }
        #expect(expected == 1 && received == 17)

        var older = Machine(
            configuration: .init(heartbeatInterval: interval, heartbeatLiveness: 3, capacity: 10, hasParent: true), now: at(0))
        _ = older.handshakeSucceeded(at: at(0))
        older.welcomed(drains: true, startsCarryBase: false)
        older.started(1, epoch: 1, path: "/child", child: "copy-1", appliedThrough: 0)
        guard case .apply(var run) = older.eventsArrived(for: 1, epoch: 1, firstSequence: 17, count: 1, at: at(10)) else {
            Issue.record("a parent that does not say its STARTs' base had its first event refused")
            return
        }
        #expect(older.nextEvent(of: &run, at: at(10)) == .apply(sequence: 17))
        older.eventApplied(in: &run, delivered: true)
        older.endEvents(run)
        // From then on the sequence is known: a gap is lost input.
        guard case .inputLost = older.eventsArrived(for: 1, epoch: 1, firstSequence: 19, count: 1, at: at(10)) else {
            Issue.record("a gap after the first event was taken")
            return
        }
    }

    @Test("OUTPUTS messages are numbered from 1 per placement")
    func outputsMessagesAreNumberedPerPlacement() {
        var machine = hosting()
        #expect(machine.numberOutputsMessage(for: 1) == 1)
        #expect(machine.numberOutputsMessage(for: 1) == 2)
        #expect(machine.numberOutputsMessage(for: 9) == 0)
        machine.started(1, epoch: 2, path: "/child", child: "copy-1b", appliedThrough: 0)
        #expect(machine.numberOutputsMessage(for: 1) == 1)
    }

    @Test("an ERROR about no request before the WELCOME is the refusal of this worker's HELLO; after it, or about a request, it is only reported")
    func helloRefusal() {
        var machine = Machine(
            configuration: .init(heartbeatInterval: interval, heartbeatLiveness: 3, capacity: 10, hasParent: true), now: at(0))
        _ = machine.handshakeSucceeded(at: at(0))
        let taken = JoinRefusal.nameTaken(name: "w1")
        #expect(machine.joinRefusal(correlationID: 0, refusal: taken) == taken)
        #expect(machine.joinRefusal(correlationID: 0, refusal: nil) == nil, "an error that refuses nothing")
        #expect(machine.joinRefusal(correlationID: 7, refusal: taken) == nil, "an error about a child")
        // A RECONNECT before the WELCOME is ignored: the HELLO sent is still to be answered.
        #expect(machine.reconnectRequested() == nil)
        machine.welcomed(drains: true, startsCarryBase: true)
        #expect(machine.joinRefusal(correlationID: 0, refusal: .refused("late")) == nil, "joined already")
    }
}
