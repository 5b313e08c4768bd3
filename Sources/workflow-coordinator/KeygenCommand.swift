import ArgumentParser
import Foundation
import WorkflowCluster

/// `workflow-coordinator keygen`: writes a cluster's CURVE keys, so that enabling encryption
/// needs no other tool (and secrets are created private, never widened then narrowed).
struct KeygenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keygen",
        abstract: "Writes CURVE key pairs for the coordinator and the named workers, and the allow-list.",
        discussion: """
            Writes DIR/coordinator.key (secret, mode 0600), DIR/coordinator.pub, \
            DIR/workers/NAME.key (secret, mode 0600) and DIR/workers/NAME.pub for each worker, and \
            DIR/allowed-workers (the workers' public keys, one per line). Never overwrites an existing \
            key file. Prints the files and the public keys only. Point the configuration's security \
            section at these files (see docs/OPERATIONS.md) and copy each secret only to the machine \
            that uses it.
            """)

    @Option(name: .long, help: ArgumentHelp("The directory to write the keys into (created if missing).", valueName: "dir"))
    var dir: String

    @Option(name: .long, help: ArgumentHelp("The workers to make keys for, comma-separated (e.g. worker-1,worker-2).", valueName: "names"))
    var workers: String

    private var workerNames: [String] {
        workers.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    func validate() throws {
        let names = workerNames
        guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty && !$0.contains("/") && !$0.hasPrefix(".") }) else {
            throw ValidationError("--workers must be comma-separated worker names (no '/', not starting with '.'); got \(workers)")
        }
        guard Set(names).count == names.count else { throw ValidationError("--workers names a worker twice: \(workers)") }
    }

    func run() throws {
        let generated: CurveKeyFiles.GeneratedKeys
        do {
            generated = try CurveKeyFiles.generate(in: dir, workers: workerNames)
        } catch {
            ClusterDaemon.reportFatal("workflow-coordinator keygen", error)
            throw ExitCode.failure
        }
        for file in generated.files { print("wrote \(file)") }
        print("coordinator public key: \(generated.coordinatorPublicKey.z85)")
        for worker in generated.workerPublicKeys { print("worker \(worker.name) public key: \(worker.key.z85)") }
    }
}
