import Testing
import Workflow

// `WorkflowHost.updateAndAwaitRendering`: the rendering handed back is the first one published
// after the new props were applied, and a waiting caller is always answered.
@Suite struct UpdateAndAwaitTests {
    /// The runtime switches that change how a drain renders: one pass per delivery, one pass per
    /// drain (conflating), and a drain run on the sender's own thread.
    static let allOptions: [RuntimeOptions] = [.default, .optimized, RuntimeOptions(applySendsInline: false)]

    @Test func returnsTheRenderingThatShowsTheUpdateAndWhatWasQueuedBeforeIt() async throws {
        let host = WorkflowHost(workflow: CounterWorkflow(label: "a"))
        // Events queued behind a held loop are applied before the update sent after them,
        // whichever of the two the loop sees first.
        let gate = LoopGate(closing: host.loop)
        for _ in 1...3 { host.rendering.onIncrement.send(()) }
        async let updated = host.updateAndAwaitRendering(workflow: CounterWorkflow(label: "b"))
        gate.open()
        let screen = try #require(await updated)
        #expect(screen.label == "b")
        #expect(screen.count == 3)
        #expect(screen.propsChanges == 1)
        #expect(screen.previousLabel == "a")
        #expect(host.rendering.label == "b")
        await host.stop()
    }

    @Test(arguments: allOptions)
    func eachOfManyUpdatesSeesItsOwnProps(options: RuntimeOptions) async throws {
        let host = WorkflowHost(workflow: CounterWorkflow(label: "0"), options: options)
        for step in 1...200 {
            let screen = try #require(await host.updateAndAwaitRendering(workflow: CounterWorkflow(label: "\(step)")))
            #expect(screen.label == "\(step)")
            #expect(screen.propsChanges == step)
            #expect(screen.previousLabel == "\(step - 1)")
        }
        await host.stop()
    }

    @Test(arguments: allOptions)
    func concurrentCallersEachGetARenderingAtOrAfterTheirOwnUpdate(options: RuntimeOptions) async throws {
        let host = WorkflowHost(workflow: PropsHistoryWorkflow(label: "start"), options: options)
        let gate = LoopGate(closing: host.loop)
        let answers = try await withSafetyTimeout("concurrent updates answered") {
            await withTaskGroup(of: (String, PropsHistoryWorkflow.Rendering?).self) { group in
                for index in 0..<20 {
                    // Fire-and-forget updates in between: they are applied in the same stream.
                    if index % 5 == 0 { host.update(workflow: PropsHistoryWorkflow(label: "plain\(index)")) }
                    let label = "u\(index)"
                    group.addTask { (label, await host.updateAndAwaitRendering(workflow: PropsHistoryWorkflow(label: label))) }
                }
                gate.open()
                var answers: [(String, PropsHistoryWorkflow.Rendering?)] = []
                for await answer in group { answers.append(answer) }
                return answers
            }
        }
        #expect(answers.count == 20)
        for (label, rendering) in answers {
            let rendering = try #require(rendering, "\(label) was answered with a rendering")
            // Conflation may merge several updates into one pass, so the answer may show later
            // props than the caller's; it must never predate the caller's own update.
            #expect(rendering.applied.contains(label), "the answer to \(label) was rendered after \(label) was applied")
            #expect(rendering.label == rendering.applied.last, "the answer is one rendering of the current props")
        }
        // Every update was applied exactly once: an update sent after all the others were sent
        // is answered after all of them were applied (the mailbox is FIFO).
        let final = try #require(await host.updateAndAwaitRendering(workflow: PropsHistoryWorkflow(label: "final")))
        #expect(final.applied.count == 25)
        #expect(Set(final.applied).count == 25)
        #expect(final.applied.last == "final")
        await host.stop()
    }

    @Test func answersNilOnceTheHostHasStopped() async throws {
        let host = WorkflowHost(workflow: CounterWorkflow(label: "a"))
        await host.stop()
        let screen = try await withSafetyTimeout("update after stop answered") {
            await host.updateAndAwaitRendering(workflow: CounterWorkflow(label: "b"))?.label
        }
        #expect(screen == nil)
    }

    @Test func everyUpdateSentAfterTheHostStoppedIsAnsweredOnceWithNilPlainUpdatesAmongThem() async throws {
        let host = WorkflowHost(workflow: CounterWorkflow(label: "a"))
        await host.stop()
        // Each delivery is applied to no root: an awaited one is answered `nil` (once: a second
        // answer would resume its task twice), a plain one has nobody to answer.
        let labels = try await withSafetyTimeout("updates after stop answered") {
            await withTaskGroup(of: String?.self) { group in
                for index in 1...20 {
                    host.update(workflow: CounterWorkflow(label: "plain \(index)"))
                    group.addTask { await host.updateAndAwaitRendering(workflow: CounterWorkflow(label: "\(index)"))?.label }
                }
                return await group.reduce(into: [String?]()) { $0.append($1) }
            }
        }
        #expect(labels.count == 20)
        #expect(labels.allSatisfy { $0 == nil })
    }

    @Test func aWaitingUpdateIsAnsweredWhenTheHostStops() async throws {
        let host = WorkflowHost(workflow: CounterWorkflow(label: "a"))
        // The update and the stop race on a held loop: whether the update is applied and
        // rendered first or dropped by the stop, its caller gets an answer.
        let gate = LoopGate(closing: host.loop)
        let waiting = Task { await host.updateAndAwaitRendering(workflow: CounterWorkflow(label: "b"))?.label }
        async let stopped: Void = host.stop()
        gate.open()
        await stopped
        let label = try await withSafetyTimeout("waiting update answered") { await waiting.value }
        #expect(label == nil || label == "b")
    }
}

/// Records every props change it sees, in order, so a rendering tells which updates it follows.
private struct PropsHistoryWorkflow: Workflow, Sendable {
    var label: String

    struct State: Sendable {
        /// The label of every props change applied so far, oldest first.
        var applied: [String] = []
    }

    struct Rendering: Sendable {
        var label: String
        var applied: [String]
    }

    typealias Output = Never

    func makeInitialState() -> State { State() }

    func workflowDidChange(from previousWorkflow: PropsHistoryWorkflow, state: inout State) {
        state.applied.append(label)
    }

    func render(state: State, context: RenderContext<PropsHistoryWorkflow>) -> Rendering {
        Rendering(label: label, applied: state.applied)
    }
}
