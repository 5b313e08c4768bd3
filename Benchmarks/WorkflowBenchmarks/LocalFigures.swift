import Foundation
import Workflow

/// A leaf: its rendering is its props plus one.
struct Leaf: Workflow, Sendable {
    var value: Int
    typealias State = Void
    func render(state: Void, context: RenderContext<Leaf>) -> Int { value + 1 }
}

/// workflow-swift's "wide" shape: one parent with `width` keyed leaves.
struct Wide: Workflow, Sendable {
    var width: Int
    var salt: Int
    typealias State = Void
    func render(state: Void, context: RenderContext<Wide>) -> Int {
        var sum = 0
        for index in 0..<width { sum &+= Leaf(value: index &+ salt).rendered(in: context, key: String(index)) }
        return sum
    }
}

/// workflow-swift's "deep" shape: a chain of `depth` nested workflows.
struct Chain: Workflow, Sendable {
    var depth: Int
    var salt: Int
    typealias State = Void
    func render(state: Void, context: RenderContext<Chain>) -> Int {
        depth == 0 ? salt : Chain(depth: depth - 1, salt: salt).rendered(in: context) &+ 1
    }
}

/// The same computations as plain function calls: the baseline.
func plainWide(width: Int, salt: Int) -> Int {
    var sum = 0
    for index in 0..<width { sum &+= plainLeaf(index &+ salt, key: String(index)) }
    return sum
}

@inline(never) func plainLeaf(_ value: Int, key: String) -> Int { value + 1 + (key.isEmpty ? 1 : 0) }

/// The chain as plain recursion. Each level calls the opaque `plainLeaf`, as each node calls its
/// `render`: a bare `depth == 0 ? salt : f(depth - 1) + 1` is folded by the optimiser into
/// `salt + depth` and would time nothing.
@inline(never) func plainChain(depth: Int, salt: Int) -> Int {
    depth == 0 ? plainLeaf(salt, key: "") : plainLeaf(plainChain(depth: depth - 1, salt: salt), key: "")
}

/// Figure 1: first render and re-render per node, for the wide and the deep shape.
func localRenderFigures() async -> [Figure] {
    let nodes = 1_000
    let passes = 200
    var figures: [Figure] = []
    for shape in ["wide", "chain"] {
        // First render: a new host renders the whole tree once (creating every node).
        var firsts: [Double] = []
        for run in 0..<20 {
            firsts.append(measure {
                if shape == "wide" { _ = WorkflowHost(workflow: Wide(width: nodes, salt: run)) } else { _ = WorkflowHost(workflow: Chain(depth: nodes, salt: run)) }
            })
        }
        var plainFirsts: [Double] = []
        for run in 0..<20 {
            plainFirsts.append(measure { blackHole(shape == "wide" ? plainWide(width: nodes, salt: run) : plainChain(depth: nodes, salt: run)) })
        }
        figures.append(Figure(
            name: "1 first render, \(shape) 1,000 (per node)", value: median(firsts) / Double(nodes), unit: "ns",
            baseline: median(plainFirsts) / Double(nodes), goal: "≤ 1 µs/node", met: median(firsts) / Double(nodes) <= 1_000))
        // The same on one loop that is already running: without starting a thread (and touching
        // a fresh stack, which a 1,000-deep chain needs a lot of) for every host.
        let running = ThreadLoop(name: "bench.first-render")
        var onRunning: [Double] = []
        for run in 0..<21 {
            var host: AnyObject?
            let time = measure {
                if shape == "wide" { host = WorkflowHost(workflow: Wide(width: nodes, salt: run), loop: running) } else { host = WorkflowHost(workflow: Chain(depth: nodes, salt: run), loop: running) }
            }
            if run > 0 { onRunning.append(time) }
            if let wide = host as? WorkflowHost<Wide> { await wide.stop() }
            if let chain = host as? WorkflowHost<Chain> { await chain.stop() }
        }
        running.shutdown()
        figures.append(Figure(
            name: "1 first render, \(shape) 1,000, running loop (per node)", value: median(onRunning) / Double(nodes), unit: "ns",
            baseline: median(plainFirsts) / Double(nodes), goal: "≤ 1 µs/node", met: median(onRunning) / Double(nodes) <= 1_000))

        // Re-render: `passes` prop changes sent at once; each is one render pass of the tree.
        let reRender: Double
        if shape == "wide" {
            let host = WorkflowHost(workflow: Wide(width: nodes, salt: 0))
            reRender = await measure {
                for salt in 1...passes { host.update(workflow: Wide(width: nodes, salt: salt)) }
                let expected = plainWide(width: nodes, salt: passes)
                await awaitRendering(host) { $0 == expected }
            }
            await host.stop()
        } else {
            let host = WorkflowHost(workflow: Chain(depth: nodes, salt: 0))
            reRender = await measure {
                for salt in 1...passes { host.update(workflow: Chain(depth: nodes, salt: salt)) }
                await awaitRendering(host) { $0 == nodes + passes }
            }
            await host.stop()
        }
        let plain = measure {
            for salt in 1...passes { blackHole(shape == "wide" ? plainWide(width: nodes, salt: salt) : plainChain(depth: nodes, salt: salt)) }
        }
        let perNode = reRender / Double(passes * nodes)
        figures.append(Figure(
            name: "1 re-render, \(shape) 1,000 (per node)", value: perNode, unit: "ns",
            baseline: plain / Double(passes * nodes), goal: "≤ 0.5 µs/node", met: perNode <= 500))
    }
    return figures
}

@inline(never) func blackHole<T>(_ value: T) { _ = value }

/// Three levels: a leaf counter whose sink action reports the count, a middle that forwards it,
/// a root that records it as its output.
struct CascadeLeaf: Workflow, Sendable {
    typealias State = Int
    typealias Output = Int
    enum Tap: WorkflowAction, Sendable {
        typealias WorkflowType = CascadeLeaf
        case tap
        func apply(toState state: inout Int, context: ApplyContext<CascadeLeaf>) -> Int? {
            state += 1
            return state
        }
    }
    func makeInitialState() -> Int { 0 }
    func render(state: Int, context: RenderContext<CascadeLeaf>) -> Sink<Tap> { context.makeSink(of: Tap.self) }
}

struct CascadeMiddle: Workflow, Sendable {
    typealias State = Void
    typealias Output = Int
    func render(state: Void, context: RenderContext<CascadeMiddle>) -> Sink<CascadeLeaf.Tap> {
        CascadeLeaf().rendered(in: context)
    }
}

struct CascadeRoot: Workflow, Sendable {
    typealias State = Int
    typealias Output = Int
    func makeInitialState() -> Int { 0 }
    func render(state: Int, context: RenderContext<CascadeRoot>) -> Sink<CascadeLeaf.Tap> {
        CascadeMiddle().rendered(in: context, onOutput: { state, count in
            state = count
            return count
        })
    }
}

/// Figure 2: sink → action → output cascade through three levels → render, per event.
func cascadeFigure() async -> Figure {
    let events = 100_000
    let host = WorkflowHost(workflow: CascadeRoot())
    let outputs = host.outputs
    let sink = host.rendering
    let elapsed = await measure {
        for _ in 0..<events { sink.send(.tap) }
        for await output in outputs where output == events { break }
    }
    await host.stop()
    var counters = PlainCascade()
    let plain = measure {
        for _ in 0..<events { blackHole(plainCascadeEvent(&counters, 1)) }
    }
    return Figure(
        name: "2 action through 3 levels + render", value: elapsed / Double(events), unit: "ns",
        baseline: plain / Double(events), goal: "(report)", met: nil)
}

/// The cascade's three states, for the plain-function baseline of figure 2.
struct PlainCascade {
    var leaf = 0
    var middle = 0
    var root = 0
}

/// One event through the cascade as plain calls: the leaf's action, its output forwarded by the
/// middle, the root's action, then a "render" of the result. Not inlinable, so the loop that
/// calls it cannot be folded into one addition (which timed 0 ns).
@inline(never) func plainCascadeEvent(_ state: inout PlainCascade, _ amount: Int) -> Int {
    state.leaf &+= amount
    let output = state.leaf
    state.middle &+= 1
    state.root = output
    return plainLeaf(state.root, key: "") &+ state.middle
}

/// Figure 2b: one tap through the three levels with its output awaited before the next tap: the
/// latency one caller sees (workflow-swift, synchronous on its main thread: 12–15 µs here). The
/// median over 2,000 taps; the baseline is figure 2's plain-function cascade.
func tapLatencyFigure(options: RuntimeOptions, label: String, goal: Double?) async -> Figure {
    let taps = 2_000
    let host = WorkflowHost(workflow: CascadeRoot(), options: options)
    var outputs = host.outputs.makeAsyncIterator()
    let sink = host.rendering
    for _ in 0..<100 {
        sink.send(.tap)
        _ = await outputs.next()
    }
    var samples: [Double] = []
    samples.reserveCapacity(taps)
    for _ in 0..<taps {
        samples.append(await measure {
            sink.send(.tap)
            _ = await outputs.next()
        })
    }
    await host.stop()
    var counters = PlainCascade()
    let plain = measure { for _ in 0..<taps { blackHole(plainCascadeEvent(&counters, 1)) } }
    let value = median(samples)
    return Figure(
        name: "2 one tap through 3 levels, output awaited\(label)", value: value, unit: "ns",
        baseline: plain / Double(taps), goal: goal.map { "≤ \(Int($0 / 1_000)) µs" } ?? "(report)", met: goal.map { value <= $0 })
}

/// Heap allocations per node (first render, re-render) and per awaited tap, counted by the
/// preloaded `Benchmarks/MallocCounter` (every thread of the process). Empty without it.
func allocationFigures() async -> [Figure] {
    guard AllocationCounter.isAvailable else { return [] }
    let nodes = 1_000
    let passes = 200
    var figures: [Figure] = []
    for shape in ["wide", "chain"] {
        var wide: WorkflowHost<Wide>?
        var chain: WorkflowHost<Chain>?
        let first = AllocationCounter.count {
            if shape == "wide" { wide = WorkflowHost(workflow: Wide(width: nodes, salt: 0)) } else { chain = WorkflowHost(workflow: Chain(depth: nodes, salt: 0)) }
        }
        let again = await AllocationCounter.count {
            if let wide {
                for salt in 1...passes { wide.update(workflow: Wide(width: nodes, salt: salt)) }
                let expected = plainWide(width: nodes, salt: passes)
                await awaitRendering(wide) { $0 == expected }
            } else if let chain {
                for salt in 1...passes { chain.update(workflow: Chain(depth: nodes, salt: salt)) }
                await awaitRendering(chain) { $0 == nodes + passes }
            }
        }
        await wide?.stop()
        await chain?.stop()
        figures.append(Figure(
            name: "A allocations, first render, \(shape) (per node)", value: first / Double(nodes), unit: "allocs",
            baseline: nil, goal: "(report)", met: nil))
        figures.append(Figure(
            name: "A allocations, re-render, \(shape) (per node)", value: again / Double(passes * nodes), unit: "allocs",
            baseline: nil, goal: "(report)", met: nil))
    }
    for (options, label) in tapModes {
        let taps = 1_000
        let host = WorkflowHost(workflow: CascadeRoot(), options: options)
        var outputs = host.outputs.makeAsyncIterator()
        let sink = host.rendering
        sink.send(.tap)
        _ = await outputs.next()
        let count = await AllocationCounter.count {
            for _ in 0..<taps {
                sink.send(.tap)
                _ = await outputs.next()
            }
        }
        await host.stop()
        figures.append(Figure(
            name: "A allocations per awaited tap\(label)", value: count / Double(taps), unit: "allocs", baseline: nil,
            goal: "(report)", met: nil))
    }
    return figures
}

/// The host options figure 2b and the allocation rows measure a tap with.
/// The default applies a send on the sender's thread when the loop is idle; "(queued)" is the
/// path of a busy loop, a `RemoteRuntime` and conflating hosts.
let tapModes: [(RuntimeOptions, String)] = [(.default, ""), (RuntimeOptions(applySendsInline: false), " (queued)")]

/// `wf-profile NAME COUNT` (Benchmarks/Profile): runs one local operation COUNT times, for
/// `valgrind --tool=callgrind` (the difference between two counts is the cost of the extra
/// iterations, without the process's start-up). See docs/BENCHMARKS.md.
func runProfile(_ name: String, count: Int) async {
    let nodes = 1_000
    switch name {
    case "first-wide", "first-chain":
        let loop = ThreadLoop(name: "profile")
        for salt in 0..<count {
            // Leaked on purpose: teardown is not part of the figure.
            if name == "first-wide" {
                _ = Unmanaged.passRetained(WorkflowHost(workflow: Wide(width: nodes, salt: salt), loop: loop))
            } else {
                _ = Unmanaged.passRetained(WorkflowHost(workflow: Chain(depth: nodes, salt: salt), loop: loop))
            }
        }
    case "rerender-wide":
        let host = WorkflowHost(workflow: Wide(width: nodes, salt: 0))
        for salt in 0..<count { host.update(workflow: Wide(width: nodes, salt: salt + 1)) }
        let expected = plainWide(width: nodes, salt: count)
        await awaitRendering(host) { $0 == expected }
    case "rerender-chain":
        let host = WorkflowHost(workflow: Chain(depth: nodes, salt: 0))
        for salt in 0..<count { host.update(workflow: Chain(depth: nodes, salt: salt + 1)) }
        await awaitRendering(host) { $0 == nodes + count }
    case "tap", "tap-queued":
        let options = RuntimeOptions(applySendsInline: name == "tap")
        let host = WorkflowHost(workflow: CascadeRoot(), options: options)
        var outputs = host.outputs.makeAsyncIterator()
        let sink = host.rendering
        for _ in 0..<count {
            sink.send(.tap)
            _ = await outputs.next()
        }
    default:
        print("unknown profile \(name)")
    }
}
