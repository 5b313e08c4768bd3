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
            baseline: plain / Double(passes * nodes), goal: "≤ 1 µs/node", met: perNode <= 1_000))
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
