import ArgumentParser
import WorkflowCluster
import WorkflowClusterCommands

/// The test coordinator's own flags: a scripted sequence of picks.
struct PickScriptOptions: CoordinatorCommandExtension {
    @Option(name: .long, help: ArgumentHelp("Pick these ids in order through the list pane, each once the detail pane shows the previous one (e.g. 3,1,4); then exit 0.", valueName: "ids"))
    var picks: String?

    @Flag(name: .long, help: "With --picks: keep serving after the last pick instead of exiting.")
    var keepServing = false

    init() {}

    func validate() throws {
        if let picks, Self.parsed(picks) == nil {
            throw ValidationError("--picks must be comma-separated integers (got \(picks))")
        }
    }

    func configure(_ options: inout CoordinatorOptions) {
        guard let ids = picks.flatMap(Self.parsed) else { return }
        options.companions.append(PickScript(ids: ids, keepServing: keepServing))
    }

    private static func parsed(_ text: String) -> [Int]? {
        let ids = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !ids.isEmpty, ids.allSatisfy({ $0 != nil }) else { return nil }
        return ids.compactMap { $0 }
    }
}
