import Logging
import WorkflowRemote

/// Something the coordinator runs beside its root, with the root's session: a scripted demo,
/// the `--events-from-stdin` reader, later an HTTP gateway.
///
/// Companions are how an application adds behaviour to the shipped coordinator without a
/// fork of it: `CoordinatorOptions.companions` (or a `CoordinatorCommandExtension`) lists them;
/// the coordinator prepares them before the root starts, runs them beside it, and cancels them
/// when it stops.
public protocol RootCompanion: Sendable {
    /// Whether this companion prints the root's frames itself while it runs (through
    /// `context.console`), so its own lines appear in order with them. The coordinator's own
    /// frame printing starts only once no such companion is running. Default `false`.
    var printsFrames: Bool { get }

    /// Runs before the root starts (default: nothing), e.g. to wait until workers joined so the
    /// first rendering is already spread over them. Throwing stops the coordinator (exit 1).
    func prepare(runtime: RemoteRuntime, context: CoordinatorContext) async throws

    /// Runs beside the root until it returns, or until the coordinator stops (the task is then
    /// cancelled). Returns whether the coordinator should keep serving or stop (exit 0);
    /// throwing stops it with a failure (exit 1).
    func run(session: any ClusterRootSession, context: CoordinatorContext) async throws -> RootCompanionEnd
}

extension RootCompanion {
    /// By default a companion prints nothing of the root's frames.
    public var printsFrames: Bool { false }

    /// By default a companion needs nothing before the root starts.
    public func prepare(runtime: RemoteRuntime, context: CoordinatorContext) async throws {}
}

/// What the coordinator does once a companion's `run` returned.
public enum RootCompanionEnd: Sendable, Equatable {
    /// Serve on until a signal (or another companion) stops the coordinator.
    case keepServing
    /// Stop the coordinator now, cleanly (exit 0): a scripted run that is done.
    case stopCoordinator
}

/// What a companion may use of the coordinator: its configuration, its log and its console.
public struct CoordinatorContext: Sendable {
    /// The coordinator's effective configuration.
    public var configuration: ClusterConfiguration
    /// The coordinator's logger.
    public var logger: Logger
    /// Standard output, as `--print-renderings` says.
    public var console: CoordinatorConsole
    /// The sessions the coordinator hosts beside the shared root (`nil`: sessions are off).
    package var sessions: SessionDirectory?

    /// Creates a context.
    package init(configuration: ClusterConfiguration, logger: Logger, console: CoordinatorConsole, sessions: SessionDirectory? = nil) {
        self.sessions = sessions
        self.configuration = configuration
        self.logger = logger
        self.console = console
    }
}

/// The coordinator's standard output, shaped by the print mode: frames as text screens or JSON
/// lines, notes for people in text mode, events for tools in JSON mode; nothing in mode `none`.
///
/// Logs go to standard error; standard output carries only what a person or a tool follows.
public struct CoordinatorConsole: Sendable {
    /// What to print.
    public var printMode: RenderingPrintMode

    /// Creates a console.
    package init(printMode: RenderingPrintMode) {
        self.printMode = printMode
    }

    /// Prints `frame` as text or as one JSON line.
    public func print(_ frame: RenderedFrame) {
        switch printMode {
        case .none: break
        case .text: StandardOutput.line(frame.text)
        case .json: StandardOutput.line(frame.json)
        }
    }

    /// Prints a line for people (text mode only).
    public func note(_ text: String) {
        if printMode == .text { StandardOutput.line(text) }
    }

    /// Prints one JSON object line for tools (JSON mode only), keys sorted.
    public func event(_ object: [String: String]) {
        if printMode == .json { StandardOutput.json(object) }
    }
}
