import ArgumentParser
import WorkflowCluster

extension ClusterSetting {
    /// The flag's `--help` entry: the declaration's words, default and what it overrides, so a
    /// command's help says what the docs' table says.
    var optionHelp: ArgumentHelp {
        ArgumentHelp(argumentHelp, valueName: valueName)
    }

    /// The flag's name, as the declaration spells it.
    var optionName: NameSpecification {
        .customLong(longFlagName)
    }
}
