/// How the coordinator runs, beyond the cluster configuration.
public struct CoordinatorOptions: Sendable {
    /// What to print on standard output.
    public var printMode: RenderingPrintMode
    /// Scripted demo: select these ids in order through the root's sink, each once the previous
    /// one is rendered by the workers, then exit. Empty: serve until a signal.
    public var demoSelections: [Int]
    /// How long the demo may wait for one step before failing (only fires when broken).
    public var demoStepTimeout: Duration

    /// Creates options.
    public init(printMode: RenderingPrintMode = .none, demoSelections: [Int] = [], demoStepTimeout: Duration = .seconds(60)) {
        self.printMode = printMode
        self.demoSelections = demoSelections
        self.demoStepTimeout = demoStepTimeout
    }
}
