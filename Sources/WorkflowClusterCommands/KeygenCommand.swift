import ArgumentParser
import Foundation
import WorkflowCluster

/// `workflow-coordinator keygen`: writes a cluster's CURVE keys, so that enabling encryption
/// needs no other tool (and secrets are created private, never widened then narrowed).
///
/// It only ever adds what is missing, so it is safe to rerun: after adding a worker to the
/// configuration, the same command creates that worker's keys and admits it, leaving every
/// existing secret where it is.
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Writes the CURVE key pairs of the coordinator and the workers, and the allow-list.",
        discussion: """
            With --config, writes the keys that configuration uses: into its security.keys_dir \
            (default: keys/ beside the file), for every worker it lists. Otherwise into --dir for \
            the --workers named. Writes DIR/coordinator.key (secret, mode 0600), DIR/coordinator.pub, \
            DIR/workers/NAME.key (secret, mode 0600) and DIR/workers/NAME.pub for each worker, and \
            DIR/allowed-workers (the workers' public keys, one per line). Creates only what is \
            missing: existing keys are kept, never overwritten, and a worker missing from the \
            allow-list is appended to it. Prints the files and the public keys only. Copy each \
            secret only to the machine that uses it (see docs/OPERATIONS.md).
            """)

    @Option(name: .long, help: ArgumentHelp("The cluster configuration whose keys to write (its keys_dir and workers).", valueName: "file"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("The directory to write the keys into (created if missing); instead of --config.", valueName: "dir"))
    var dir: String?

    @Option(name: .long, help: ArgumentHelp("The workers to make keys for, comma-separated (e.g. worker-1,worker-2); with --dir.", valueName: "names"))
    var workers: String?

    private static func names(_ list: String) -> [String] {
        list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    func validate() throws {
        switch (config, dir, workers) {
        case (_?, nil, nil): return
        case (nil, _?, let list?):
            let names = Self.names(list)
            guard !names.isEmpty, names.allSatisfy({ Self.isValidName($0) }) else {
                throw ValidationError("--workers must be comma-separated worker names (no '/', not starting with '.'); got \(list)")
            }
            guard Set(names).count == names.count else { throw ValidationError("--workers names a worker twice: \(list)") }
        default:
            throw ValidationError("give either --config FILE, or both --dir DIR and --workers NAMES")
        }
    }

    private static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && !name.hasPrefix(".")
    }

    func run() throws {
        let generated: CurveKeyFiles.GeneratedKeys
        do {
            let (directory, names) = try target()
            generated = try CurveKeyFiles.generate(in: directory, workers: names)
        } catch {
            ClusterDaemon.reportFatal(ExecutableName.current(or: "workflow-coordinator") + " keygen", error)
            throw ExitCode.failure
        }
        for file in generated.files { print("wrote \(file)") }
        for file in generated.kept { print("kept \(file)") }
        print("coordinator public key: \(generated.coordinatorPublicKey.z85)")
        for worker in generated.workerPublicKeys { print("worker \(worker.name) public key: \(worker.key.z85)") }
    }

    /// The directory and the worker names: from the configuration, or as given.
    private func target() throws -> (directory: String, workers: [String]) {
        guard let config else { return (dir ?? "", Self.names(workers ?? "")) }
        let configuration = try ClusterConfigurationParser(file: config).load()
        let names = configuration.workers.map(\.name)
        guard let directory = configuration.security.keysDirectory, !names.isEmpty else {
            throw ClusterConfigurationError(file: config, key: ClusterSetting.workers.key, expected: "at least one worker to make keys for", found: "none")
        }
        if let invalid = names.first(where: { !Self.isValidName($0) }) {
            throw ClusterConfigurationError(
                file: config, key: ClusterSetting.workers.key, expected: "worker names usable as file names (no '/', not starting with '.')", found: "\"\(invalid)\"")
        }
        return (directory, names)
    }
}
