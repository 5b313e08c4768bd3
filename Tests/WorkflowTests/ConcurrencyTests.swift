import Testing
import Workflow

// Sinks are called from many tasks at once; every action is applied exactly once, and values sent
// from one task arrive in the order that task sent them.

struct HammerWorkflow: Workflow, Sendable {
    let senders: Int

    struct State: Sendable {
        var total = 0
        var lastSequence: [Int]
        var outOfOrder = 0
    }
    struct Record: WorkflowAction, Sendable {
        typealias WorkflowType = HammerWorkflow
        let sender: Int
        let sequence: Int
        func apply(toState state: inout State, context: ApplyContext<HammerWorkflow>) -> Never? {
            state.total += 1
            if sequence != state.lastSequence[sender] + 1 { state.outOfOrder += 1 }
            state.lastSequence[sender] = sequence
            return nil
        }
    }
    struct Screen: Sendable {
        var total: Int
        var lastSequence: [Int]
        var outOfOrder: Int
        var record: Sink<Record>
    }

    func makeInitialState() -> State { State(lastSequence: Array(repeating: -1, count: senders)) }

    func render(state: State, context: RenderContext<HammerWorkflow>) -> Screen {
        Screen(
            total: state.total, lastSequence: state.lastSequence, outOfOrder: state.outOfOrder,
            record: context.makeSink(of: Record.self))
    }
}

@Suite struct ConcurrencyTests {
    static let senders = 8
    static let perSender = 1_000

    @Test(arguments: [RuntimeOptions.default, .optimized, RuntimeOptions(applySendsInline: false)])
    func sinksHammeredFromManyTasksApplyEveryActionOnceInPerTaskOrder(options: RuntimeOptions) async throws {
        let host = WorkflowHost(workflow: HammerWorkflow(senders: Self.senders), options: options)
        let sink = host.rendering.record
        await withTaskGroup(of: Void.self) { group in
            for sender in 0..<Self.senders {
                group.addTask {
                    for sequence in 0..<Self.perSender { sink.send(.init(sender: sender, sequence: sequence)) }
                }
            }
        }
        let expected = Self.senders * Self.perSender
        let screen = try await rendering(of: host) { $0.total >= expected }
        _ = await host.treeDescription()  // loop barrier: nothing else is queued
        #expect(host.rendering.total == expected, "every action applied exactly once")
        #expect(screen.outOfOrder == 0, "each task's values arrived in the order it sent them")
        #expect(screen.lastSequence == Array(repeating: Self.perSender - 1, count: Self.senders))
        await host.stop()
    }

    @Test func manyReadersAndWritersAtOnce() async throws {
        let host = WorkflowHost(workflow: CounterWorkflow(reportEvery: 1))
        let outputs = host.outputs
        let sink = host.rendering.onIncrement
        let total = 400
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask { try await rendering(of: host) { $0.count == total }.count }
            }
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<(total / 4) { sink.send(()) }
                    return total
                }
            }
            for try await seen in group { #expect(seen == total) }
        }
        // Outputs are the counts 1...total, each exactly once and in order, whoever sent them.
        #expect(try await next(total, from: outputs) == Array(1...total))
        await host.stop()
    }
}
