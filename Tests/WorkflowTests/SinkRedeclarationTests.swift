import Testing
import Workflow

// A sink keeps working only while the workflow keeps declaring a sink of its kind (its event and
// action types): workflow-swift's "invalidate old sink if not redeclared".

/// Offers a tap button only while `offersButton`; its other sink (always declared) toggles the
/// offer or bumps a counter that only makes it render again.
struct OptionalButtonWorkflow: Workflow, Sendable {
    struct State: Equatable, Sendable {
        var offersButton = true
        var taps = 0
        var bumps = 0
    }

    enum Tap: WorkflowAction, Sendable {
        typealias WorkflowType = OptionalButtonWorkflow
        case tap
        func apply(toState state: inout State, context: ApplyContext<OptionalButtonWorkflow>) -> Never? {
            state.taps += 1
            return nil
        }
    }

    enum Control: WorkflowAction, Sendable {
        typealias WorkflowType = OptionalButtonWorkflow
        case toggleOffer
        case bump
        func apply(toState state: inout State, context: ApplyContext<OptionalButtonWorkflow>) -> Never? {
            switch self {
            case .toggleOffer: state.offersButton.toggle()
            case .bump: state.bumps += 1
            }
            return nil
        }
    }

    struct Screen: Sendable {
        var state: State
        var onTap: Sink<Tap>?
        var onControl: Sink<Control>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<OptionalButtonWorkflow>) -> Screen {
        Screen(
            state: state,
            onTap: state.offersButton ? context.makeSink(of: Tap.self) : nil,
            onControl: context.makeSink(of: Control.self))
    }
}

@Suite struct SinkRedeclarationTests {
    @Test func aSinkTheLatestRenderDidNotDeclareAgainIsDropped() async throws {
        let host = WorkflowHost(workflow: OptionalButtonWorkflow())
        let first = host.rendering
        let staleTap = try #require(first.onTap)
        first.onControl.send(.toggleOffer)
        let withoutButton = try await rendering(of: host) { !$0.state.offersButton }
        #expect(withoutButton.onTap == nil)
        staleTap.send(.tap)
        // Queued after the tap, so applied after it: once the button is back, the tap was handled.
        withoutButton.onControl.send(.toggleOffer)
        let settled = try await rendering(of: host) { $0.state.offersButton }
        #expect(settled.state.taps == 0, "the sink of a button the workflow stopped offering applied its action")
        await host.stop()
    }

    @Test func aDroppedSinkStaysDroppedWhenItsKindIsDeclaredAgain() async throws {
        let host = WorkflowHost(workflow: OptionalButtonWorkflow())
        let staleTap = try #require(host.rendering.onTap)
        host.rendering.onControl.send(.toggleOffer)
        let hidden = try await rendering(of: host) { !$0.state.offersButton }
        hidden.onControl.send(.toggleOffer)
        let offeredAgain = try await rendering(of: host) { $0.state.offersButton }
        let freshTap = try #require(offeredAgain.onTap)
        staleTap.send(.tap)
        freshTap.send(.tap)
        let tapped = try await rendering(of: host) { $0.state.taps > 0 }
        // A barrier after both taps: a bump queued behind them.
        tapped.onControl.send(.bump)
        let settled = try await rendering(of: host) { $0.state.bumps == 1 }
        #expect(settled.state.taps == 1, "only the fresh sink's tap counts")
        await host.stop()
    }

    @Test func aSinkEveryLaterRenderDeclaredAgainKeepsWorking() async throws {
        let host = WorkflowHost(workflow: OptionalButtonWorkflow())
        let first = host.rendering
        for bumps in 1...3 {
            first.onControl.send(.bump)
            try await rendering(of: host) { $0.state.bumps == bumps }
        }
        try #require(first.onTap).send(.tap)
        let tapped = try await rendering(of: host) { $0.state.taps == 1 }
        #expect(tapped.state.bumps == 3)
        await host.stop()
    }
}

/// Makes its tap sink in the first pass only; later passes keep it (`keepSinks`, as the remote
/// child's proxy does; with `byKind`, by the kind named once, `keepSinks(ofKind:)`) while `keeps`,
/// and declare nothing of its kind otherwise.
struct KeptButtonWorkflow: Workflow, Sendable {
    var byKind = false

    struct State: Equatable, Sendable {
        var keeps = true
        var taps = 0
        var bumps = 0
    }

    enum Tap: WorkflowAction, Sendable {
        typealias WorkflowType = KeptButtonWorkflow
        case tap
        func apply(toState state: inout State, context: ApplyContext<KeptButtonWorkflow>) -> Never? {
            state.taps += 1
            return nil
        }
    }

    enum Control: WorkflowAction, Sendable {
        typealias WorkflowType = KeptButtonWorkflow
        case stopKeeping
        case bump
        func apply(toState state: inout State, context: ApplyContext<KeptButtonWorkflow>) -> Never? {
            switch self {
            case .stopKeeping: state.keeps = false
            case .bump: state.bumps += 1
            }
            return nil
        }
    }

    struct Screen: Sendable {
        var state: State
        /// Only in the first rendering.
        var onTap: Sink<Tap>?
        var onControl: Sink<Control>
    }

    func makeInitialState() -> State { State() }

    func render(state: State, context: RenderContext<KeptButtonWorkflow>) -> Screen {
        var onTap: Sink<Tap>?
        if state.bumps == 0, state.keeps {
            onTap = context.makeSink(of: Tap.self)
        } else if state.keeps, byKind {
            let kind = context.sinkKind(of: Tap.self, actionType: Tap.self)
            #expect(kind.map { context.keepSinks(ofKind: $0) } == true)
        } else if state.keeps {
            #expect(context.keepSinks(of: Tap.self, actionType: Tap.self))
        }
        return Screen(state: state, onTap: onTap, onControl: context.makeSink(of: Control.self))
    }
}

@Suite struct KeptSinkTests {
    @Test(arguments: [false, true])
    func aSinkKeptByEveryLaterPassKeepsWorkingWithoutBeingMadeAgain(byKind: Bool) async throws {
        let host = WorkflowHost(workflow: KeptButtonWorkflow(byKind: byKind))
        let tap = try #require(host.rendering.onTap)
        let control = host.rendering.onControl
        for bumps in 1...3 {
            control.send(.bump)
            let next = try await rendering(of: host) { $0.state.bumps == bumps }
            #expect(next.onTap == nil, "kept, not made again")
        }
        tap.send(.tap)
        let tapped = try await rendering(of: host) { $0.state.taps == 1 }
        #expect(tapped.state.bumps == 3)
        await host.stop()
    }

    @Test(arguments: [false, true])
    func aSinkNoLongerKeptIsDropped(byKind: Bool) async throws {
        let host = WorkflowHost(workflow: KeptButtonWorkflow(byKind: byKind))
        let tap = try #require(host.rendering.onTap)
        let control = host.rendering.onControl
        control.send(.bump)
        try await rendering(of: host) { $0.state.bumps == 1 }
        control.send(.stopKeeping)
        try await rendering(of: host) { !$0.state.keeps }
        tap.send(.tap)
        // A barrier behind the tap.
        control.send(.bump)
        let settled = try await rendering(of: host) { $0.state.bumps == 2 }
        #expect(settled.state.taps == 0, "a sink no pass kept applied its action")
        await host.stop()
    }
}
