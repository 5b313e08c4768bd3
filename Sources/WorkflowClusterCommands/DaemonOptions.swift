import ArgumentParser

/// The flags every daemon takes, coordinator and worker alike: its configuration file and how it
/// logs. One declaration, so the two commands spell and explain them the same way.
struct DaemonOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The cluster configuration file (JSON).", valueName: "file"))
    var config: String

    @Option(name: .long, help: ArgumentHelp("The lowest log level: trace, debug, info, notice, warning, error, critical. Overrides log.level and WORKFLOW_LOG_LEVEL.", valueName: "level"))
    var logLevel: String?

    @Option(name: .long, help: ArgumentHelp("Log line format: text (default) or json. Overrides log.format and WORKFLOW_LOG_FORMAT.", valueName: "format"))
    var logFormat: String?
}
