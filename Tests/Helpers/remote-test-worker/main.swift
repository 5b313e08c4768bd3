import Synchronization
import Foundation
import RemoteTestSupport
import WorkflowRemote

// A worker process for the remote-runtime tests:
//   remote-test-worker --name NAME --connect ENDPOINT [--listen ENDPOINT] [--pool POOL] [--drain-ms MS]
// Hosts the test workflows until SIGTERM (drains for at most MS, default 5000, then
// leaves in order and exits 0) or SIGKILL.
var arguments = CommandLine.arguments.dropFirst()
var options: [String: String] = [:]
while let flag = arguments.popFirst() {
    guard flag.hasPrefix("--"), let value = arguments.popFirst() else {
        FileHandle.standardError.write(
            Data("usage: remote-test-worker --name NAME --connect ENDPOINT [--listen ENDPOINT] [--pool POOL] [--drain-ms MS]\n".utf8))
        exit(2)
    }
    options[String(flag.dropFirst(2))] = value
}
var configuration = RemoteRuntimeConfiguration(name: options["name"] ?? "worker")
configuration.parentEndpoint = options["connect"]
configuration.listenEndpoint = options["listen"]
if let pool = options["pool"] { configuration.pool = pool }
configuration.registry = remoteTestRegistry
configuration.heartbeatInterval = .milliseconds(100)
configuration.heartbeatLiveness = 5
let drainDeadline = Duration.milliseconds(Int(options["drain-ms"] ?? "") ?? 5_000)
// SIGTERM is handled from before the runtime starts: a test may stop a worker it has just
// started (and that already joined and served), and a signal between starting the runtime and
// installing the handler would be lost.
let started = Mutex<RemoteRuntime?>(nil)
signal(SIGTERM, SIG_IGN)
let termination = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .main)
termination.setEventHandler {
    guard let runtime = started.withLock({ $0 }) else { exit(0) }
    Task {
        if drainDeadline > .zero {
            let outcome = await runtime.drain(deadline: drainDeadline)
            FileHandle.standardOutput.write(Data("drained \(outcome.handedOver) of \(outcome.children)\n".utf8))
        }
        await runtime.shutdown()
        exit(0)
    }
}
termination.resume()
do {
    let runtime = try RemoteRuntime(configuration: configuration)
    started.withLock { $0 = runtime }
    FileHandle.standardOutput.write(Data("ready \(runtime.listenEndpoint ?? "")\n".utf8))
    // Die with the test process, even when it is killed before its cleanup runs.
    let parentProcess = getppid()
    let orphanCheck = DispatchSource.makeTimerSource(queue: .main)
    orphanCheck.schedule(deadline: .now(), repeating: .milliseconds(200))
    orphanCheck.setEventHandler { if getppid() != parentProcess { exit(3) } }
    orphanCheck.resume()
    dispatchMain()
} catch {
    FileHandle.standardError.write(Data("remote-test-worker: \(error)\n".utf8))
    exit(1)
}
