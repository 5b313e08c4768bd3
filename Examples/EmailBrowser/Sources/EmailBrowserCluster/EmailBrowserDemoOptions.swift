import ArgumentParser
import WorkflowCluster
import WorkflowClusterCommands

/// The email browser's flags on the shipped `workflow-coordinator`: the scripted demo.
public struct EmailBrowserDemoOptions: CoordinatorCommandExtension {
    @Option(name: .long, help: ArgumentHelp("Scripted demo: select these message ids in order through the inbox, print each settled rendering, then exit 0 (e.g. 3,1,4). Prints as text unless --print-renderings json.", valueName: "ids"))
    var demoSelections: String?

    @Flag(name: .long, help: "With --demo-selections: after the last selection keep serving until SIGTERM/SIGINT instead of exiting.")
    var serveAfterDemo = false

    /// No demo unless the flags say so.
    public init() {}

    /// Rejects selections that are not comma-separated integers (a usage error, exit 64).
    public func validate() throws {
        if let demoSelections, Self.parsed(demoSelections) == nil {
            throw ValidationError("--demo-selections must be comma-separated integers (got \(demoSelections))")
        }
    }

    /// Adds the demo as a companion (printing as text unless JSON was asked for).
    public func configure(_ options: inout CoordinatorOptions) {
        guard let selections = demoSelections.flatMap(Self.parsed) else { return }
        if options.printMode == .none { options.printMode = .text }
        options.companions.append(EmailBrowserDemo(selections: selections, serveAfterDemo: serveAfterDemo))
    }

    private static func parsed(_ text: String) -> [Int]? {
        let ids = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !ids.isEmpty, ids.allSatisfy({ $0 != nil }) else { return nil }
        return ids.compactMap { $0 }
    }
}
