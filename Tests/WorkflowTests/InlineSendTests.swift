import Synchronization
import Testing
import Workflow

// `RuntimeOptions.applySendsInline` and the loop lending that carries it (`RuntimeLoop.runIfIdle`):
// a send to an idle host is applied on the sender's thread before `send` returns, a busy loop is
// never lent, and jobs submitted while the loop is lent wait their turn.

@Suite struct InlineSendTests {
    /// Waits until `loop` has finished whatever it was doing (its thread resets its busy flag just
    /// after a job returns), by asking it to lend itself until it does.
    private func waitUntilIdle(_ loop: any RuntimeLoop) async {
        while !loop.runIfIdle({}) { await Task.yield() }
    }

    @Test func anIdleThreadLoopRunsTheJobOnTheCallersThreadAsTheLoop() async {
        let loop = ThreadLoop(name: "test.lend")
        defer { loop.shutdown() }
        #expect(!loop.inLoop)
        var ranAsLoop = false
        while !loop.runIfIdle({ ranAsLoop = loop.inLoop }) { await Task.yield() }
        #expect(ranAsLoop, "the borrowing thread holds the loop's role while the job runs")
        #expect(!loop.inLoop, "and gives it back afterwards")
    }

    @Test func aBusyLoopIsNeverLent() async {
        let loop = ThreadLoop(name: "test.busy")
        defer { loop.shutdown() }
        let gate = LoopGate(closing: loop)
        var ran = false
        #expect(!loop.runIfIdle({ ran = true }), "a queued or running job keeps the loop busy")
        #expect(!ran)
        gate.open()
    }

    @Test func jobsSubmittedWhileTheLoopIsLentRunAfterwardsInOrder() async {
        let loop = ThreadLoop(name: "test.order")
        defer { loop.shutdown() }
        let order = Mutex<[String]>([])
        while !loop.runIfIdle({
            loop.execute { order.withLock { $0.append("queued while lent") } }
            order.withLock { $0.append("lent job") }
        }) { await Task.yield() }
        await withCheckedContinuation { continuation in loop.execute { continuation.resume() } }
        #expect(order.withLock { $0 } == ["lent job", "queued while lent"])
    }

    @Test func aSendToAnIdleHostIsAppliedBeforeSendReturns() async throws {
        let host = WorkflowHost(workflow: CounterWorkflow(reportEvery: 1), options: RuntimeOptions(applySendsInline: true))
        let outputs = host.outputs
        for expected in 1...50 {
            await waitUntilIdle(host.loop)
            host.rendering.onIncrement.send(())
            #expect(host.rendering.count == expected, "applied and rendered on the sender's thread")
        }
        var received: [Int] = []
        for await output in outputs {
            received.append(output)
            if received.count == 50 { break }
        }
        #expect(received == Array(1...50), "each output published once, in order")
        await host.stop()
    }

    @Test func aCascadeThroughThreeLevelsCompletesBeforeSendReturns() async throws {
        let host = WorkflowHost(workflow: CascadeRootWorkflow(), options: RuntimeOptions(applySendsInline: true))
        await waitUntilIdle(host.loop)
        host.rendering.middle.leaf.onAdd.send(2)
        #expect(host.rendering.reports.count == 1, "leaf action, middle and root outputs, render: all inline")
        await host.stop()
    }

    @Test func sendsAreAppliedInlineByDefaultAndQueuedWhenConflating() async throws {
        #expect(RuntimeOptions.default.applySendsInline, "as workflow-swift's send: applied before it returns")
        #expect(!RuntimeOptions.optimized.applySendsInline, "conflation needs the burst queued")
        #expect(!RuntimeOptions(conflateStaleRenderings: true).applySendsInline)
        #expect(RuntimeOptions(conflateStaleRenderings: true, applySendsInline: true).applySendsInline)

        let inline = WorkflowHost(workflow: CounterWorkflow(reportEvery: 1))
        await waitUntilIdle(inline.loop)
        inline.rendering.onIncrement.send(())
        #expect(inline.rendering.count == 1, "the default host applied the send on the sender's thread")
        await inline.stop()
    }
}
