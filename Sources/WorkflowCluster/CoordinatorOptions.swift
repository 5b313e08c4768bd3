import Workflow

/// How the coordinator runs, beyond the cluster configuration.
public struct CoordinatorOptions: Sendable {
    /// What to print on standard output.
    public var printMode: RenderingPrintMode
    /// Scripted demo: select these ids in order through the root's sink, each once the previous
    /// one is rendered by the workers, then exit. Empty: serve until a signal.
    public var demoSelections: [Int]
    /// How long the demo may wait for one step before failing (only fires when broken).
    public var demoStepTimeout: Duration

    /// After the scripted selections, keep serving until a signal instead of exiting (a demo
    /// that then shows failover, or a test that then restarts the coordinator).
    public var serveAfterDemo: Bool
    /// The tree to start the root from (`--restore`), already read and validated.
    public var restoredSnapshot: TreeSnapshot?

    /// Creates options.
    public init(
        printMode: RenderingPrintMode = .none, demoSelections: [Int] = [], demoStepTimeout: Duration = .seconds(60),
        serveAfterDemo: Bool = false, restoredSnapshot: TreeSnapshot? = nil
    ) {
        self.serveAfterDemo = serveAfterDemo
        self.restoredSnapshot = restoredSnapshot
        self.printMode = printMode
        self.demoSelections = demoSelections
        self.demoStepTimeout = demoStepTimeout
    }
}
