/// Asynchronous work a workflow runs for as long as it keeps rendering it.
///
/// A worker is rendered like a child (`worker.running(in: context, key:)`): the first pass that
/// renders it starts `run()` in a task; a later pass with a worker that is *not equivalent*
/// cancels that task and starts a new one; a pass that no longer renders it cancels the task.
/// The result arrives as the worker's output, mapped to an action of the parent. An output of a
/// run that was since replaced or cancelled is dropped.
public protocol Worker<Output>: AnyWorkflowConvertible, Sendable where Rendering == Void, Output: Sendable {
    /// Does the work. Runs on the cooperative pool; should honour task cancellation.
    func run() async -> Output

    /// Whether `otherWorker` describes the same work, so the running task may keep going.
    func isEquivalent(to otherWorker: Self) -> Bool
}

extension Worker where Self: Equatable {
    public func isEquivalent(to otherWorker: Self) -> Bool { self == otherWorker }
}

extension Worker {
    public func asAnyWorkflow() -> AnyWorkflow<Void, Output> {
        AnyWorkflow(WorkerWorkflow(
            worker: self,
            start: { worker, emit in emit(await worker.run()) },
            isEquivalent: { $0.isEquivalent(to: $1) }))
    }
}

/// A worker that emits every element of an asynchronous sequence as an output, in order.
///
/// The sequence is created inside the worker's task by `run()`; the task ends when the sequence
/// finishes (or throws) or when the worker is no longer rendered.
public protocol AsyncSequenceWorker<Output>: AnyWorkflowConvertible, Sendable
where Rendering == Void, Output: Sendable {
    /// The sequence type `run()` returns.
    associatedtype Elements: AsyncSequence where Elements.Element == Output

    /// Creates the sequence to iterate.
    func run() -> Elements

    /// Whether `otherWorker` describes the same sequence, so the running iteration may keep going.
    func isEquivalent(to otherWorker: Self) -> Bool
}

extension AsyncSequenceWorker where Self: Equatable {
    public func isEquivalent(to otherWorker: Self) -> Bool { self == otherWorker }
}

extension AsyncSequenceWorker {
    public func asAnyWorkflow() -> AnyWorkflow<Void, Output> {
        AnyWorkflow(WorkerWorkflow(
            worker: self,
            start: { worker, emit in await iterate(worker.run(), emit: emit) },
            isEquivalent: { $0.isEquivalent(to: $1) }))
    }
}

/// Emits every element of `sequence` until it ends, throws, or the task is cancelled.
///
/// Once cancelled (the worker is no longer rendered, or was replaced), the loop asks the
/// sequence for one more element rather than returning at once: a sequence learns of the
/// cancellation only inside `next()` (`AsyncStream(unfolding:onCancel:)` runs its `onCancel`
/// there), so returning between two elements would leave it waiting forever, holding whatever it
/// holds (a subscription, a socket). What it yields after the cancellation is not emitted.
func iterate<Elements: AsyncSequence>(_ sequence: Elements, emit: (Elements.Element) -> Void) async {
    var iterator = sequence.makeAsyncIterator()
    do {
        while let element = try await iterator.next() {
            if Task.isCancelled {
                _ = try await iterator.next()
                return
            }
            emit(element)
        }
    } catch {
        // A failing sequence ends the worker; there is no output to report.
    }
}

/// The workflow a worker is rendered as. Its identity is the worker's type (plus key).
struct WorkerWorkflow<W: Sendable, Output: Sendable>: Workflow {
    typealias Rendering = Void

    struct State {
        var generation = 0
    }

    /// A worker's output tagged with the run that produced it.
    struct Emitted: Sendable {
        let generation: Int
        let output: Output
    }

    let worker: W
    let start: @Sendable (W, @escaping @Sendable (Output) -> Void) async -> Void
    let isEquivalent: (W, W) -> Bool


    func makeInitialState() -> State { State() }

    func workflowDidChange(from previousWorkflow: WorkerWorkflow, state: inout State) {
        if !isEquivalent(worker, previousWorkflow.worker) {
            state.generation += 1
        }
    }

    func render(state: State, context: RenderContext<WorkerWorkflow>) {
        let sink = context.makeSink(of: Emitted.self) { emitted in
            AnyWorkflowAction<WorkerWorkflow> { state, _ in
                emitted.generation == state.generation ? emitted.output : nil
            }
        }
        let generation = state.generation
        let worker = self.worker
        let start = self.start
        context.runSideEffect(key: generation) { lifetime in
            let task = Task {
                await start(worker) { output in
                    sink.send(Emitted(generation: generation, output: output))
                }
            }
            lifetime.onEnded { task.cancel() }
        }
    }
}

extension WorkerWorkflow: StablyNamedWorkflow {
    static var stableTypeName: String { "Worker<\(_typeName(W.self, qualified: true))>" }
}

/// Lets test tooling recognise a worker rendered as a child and reach the worker value.
package protocol WorkerRendering {
    /// The worker (a `Worker` or `AsyncSequenceWorker`) this child runs.
    var wrappedWorker: any Sendable { get }
    /// The worker's type, known without a value (for messages about a worker not rendered).
    static var wrappedWorkerType: Any.Type { get }
}

extension WorkerWorkflow: WorkerRendering {
    public var wrappedWorker: any Sendable { worker }
    public static var wrappedWorkerType: Any.Type { W.self }
}
