import Foundation
import Workflow
import WorkflowRemote

/// The rolling-upgrade test's remote child as the running build has it: a ledger of the ids of
/// the events it applied, in order (each event records its id once), so a test sees per event
/// whether it was lost or applied twice.
///
/// `LedgerWorkflowNext` is the same child in the next build: both declare the stable name
/// `Ledger`, under which parents, workers and snapshots know it.
public struct LedgerWorkflow: RemotableWorkflow, StablyNamedWorkflow, Equatable {
    public static var stableTypeName: String { ledgerTypeName }

    public init() {}

    public struct State: Codable, Equatable, Sendable {
        public var ids: [Int] = []
    }

    public typealias Output = Never

    public func makeInitialState() -> State { State() }

    public func render(state: State, context: RenderContext<LedgerWorkflow>) -> LedgerScreen {
        LedgerScreen(count: state.ids.count, record: recordSink(context) { $0.ids.append($1) }, stateVersion: Self.stateVersion)
    }

    public func placeholderRendering() -> LedgerScreen { .placeholder }
}

/// The ledger in the next build: its state gained a field, `createdByStateVersion`, so its state
/// version is 2, and it migrates a version 1 snapshot (the running build's) instead of refusing it.
public struct LedgerWorkflowNext: RemotableWorkflow, StateMigrating, Equatable {
    public static var stableTypeName: String { ledgerTypeName }
    public static var stateVersion: Int { 2 }

    public init() {}

    public struct State: Codable, Equatable, Sendable {
        public var ids: [Int]
        /// The state version of the build that created this ledger: 1 for a ledger migrated from
        /// the running build's snapshot, 2 for one this build started afresh.
        public var createdByStateVersion: Int
    }

    /// A state a version 1 build wrote.
    struct Version1State: Decodable {
        var ids: [Int]
    }

    /// Why a snapshot's state cannot be migrated.
    struct UnknownStateVersion: Error, CustomStringConvertible {
        var version: Int
        var description: String { "no migration from state version \(version)" }
    }

    public static func migrateState(from data: Data, version: Int) throws -> State {
        guard version == 1 else { throw UnknownStateVersion(version: version) }
        return State(ids: try JSONDecoder().decode(Version1State.self, from: data).ids, createdByStateVersion: 1)
    }

    public typealias Output = Never

    public func makeInitialState() -> State { State(ids: [], createdByStateVersion: Self.stateVersion) }

    public func render(state: State, context: RenderContext<LedgerWorkflowNext>) -> LedgerScreen {
        LedgerScreen(count: state.ids.count, record: recordSink(context) { $0.ids.append($1) }, stateVersion: Self.stateVersion)
    }

    public func placeholderRendering() -> LedgerScreen { .placeholder }
}

/// The stable name both builds' ledgers declare.
let ledgerTypeName = "RemoteTestSupport.Ledger"

/// The sink that records an event's id in the ledger's state (`append`).
private func recordSink<W: Workflow>(_ context: RenderContext<W>, _ append: @escaping @Sendable (inout W.State, Int) -> Void) -> Sink<Int> {
    context.makeSink(of: Int.self) { id in
        AnyWorkflowAction<W> { state, _ in
            append(&state, id)
            return nil
        }
    }
}

/// A ledger's rendering, the same in both builds (the parent decodes it with its own).
public struct LedgerScreen: Codable, Sendable {
    /// How many events the ledger applied (-1 in the placeholder).
    public var count: Int
    /// Records an event's id.
    public var record: Sink<Int>
    /// The state version of the build that rendered it (0 in the placeholder).
    public var stateVersion: Int
    /// The process that rendered it (`unavailableProcess` in the placeholder).
    public var renderedBy: String = renderingProcess

    static let placeholder = LedgerScreen(count: -1, record: .inert, stateVersion: 0, renderedBy: unavailableProcess)
}

/// The rolling-upgrade test's root (`ledger-board` in the test coordinator): `count` remote
/// ledgers, keyed `ledger-0`, `ledger-1`, …, placed as the configuration says.
public struct LedgerBoardWorkflow: Workflow, Sendable {
    public var count: Int

    public init(count: Int) {
        self.count = count
    }

    public typealias State = Void

    public struct Screen: Encodable, Sendable {
        public var ledgers: [LedgerScreen]
    }

    public func render(state: Void, context: RenderContext<LedgerBoardWorkflow>) -> Screen {
        Screen(ledgers: (0..<count).map { LedgerWorkflow().remote(on: .configured).rendered(in: context, key: "ledger-\($0)") })
    }
}

/// What the test worker hosts when it plays the next build (`TEST_WORKER_BUILD=next`): the same
/// types, with the ledger in its next version.
public let nextBuildTestRegistry = remoteTestRegistry.registering(LedgerWorkflowNext.self)
