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
