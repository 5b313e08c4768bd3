import ArgumentParser
import WorkflowCluster

/// The flags every daemon takes, coordinator and worker alike: its configuration file and how it
/// logs and traces. One declaration, so the two commands spell and explain them the same way.
struct DaemonOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The cluster configuration file (JSON).", valueName: "file"))
    var config: String

    @Option(name: ClusterSetting.logLevel.optionName, help: ClusterSetting.logLevel.optionHelp)
    var logLevel: String?

    @Option(name: ClusterSetting.logFormat.optionName, help: ClusterSetting.logFormat.optionHelp)
    var logFormat: String?

    @Option(name: ClusterSetting.tracingOTLPEndpoint.optionName, help: ClusterSetting.tracingOTLPEndpoint.optionHelp)
    var tracingOTLPEndpoint: String?

    @Option(name: ClusterSetting.tracingOTLPProtocol.optionName, help: ClusterSetting.tracingOTLPProtocol.optionHelp)
    var tracingOTLPProtocol: String?
}
