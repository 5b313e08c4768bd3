import Foundation
import Logging
import ServiceLifecycle
import WorkflowRemote

/// Runs one daemon service under swift-service-lifecycle: SIGTERM and SIGINT start a graceful
/// shutdown, which must finish within a bound (else the service is cancelled), and the service
/// finishing ends the process's group.
///
/// The command lines (`WorkflowClusterCommands`) are thin: they parse flags, load
/// `ClusterSettings`, build a service and call this; everything testable lives in this library.
package enum ClusterDaemon {
    /// How long a graceful shutdown may take before the service is cancelled (a worker adds its
    /// drain deadline: `WorkerService.gracefulShutdownBound(for:)`).
    package static let shutdownBound: Duration = .seconds(10)

    /// Runs `service` until it finishes or a signal stops it. Returns normally on a clean stop.
    package static func run(_ service: some Service, logger: Logger) async throws {
        try await run(service, beside: [], logger: logger)
    }

    /// Runs `service` with `companions` (e.g. a worker's admin HTTP endpoint) until `service`
    /// finishes, one of them fails, or a signal stops them all; a graceful shutdown that takes
    /// longer than `gracefulShutdownBound` is cancelled.
    package static func run(
        _ service: some Service, beside companions: [any Service], gracefulShutdownBound: Duration = shutdownBound, logger: Logger
    ) async throws {
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)
            ] + companions.map { .init(service: $0, failureTerminationBehavior: .gracefullyShutdownGroup) },
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = gracefulShutdownBound
        configuration.maximumCancellationDuration = .seconds(2)
        try await ServiceGroup(configuration: configuration).run()
    }

    /// The exit status for an error that stopped a running daemon: 78 (EX_CONFIG) when only a
    /// change of configuration can fix it — plaintext on a network address, an endpoint that
    /// cannot work on this machine — so a supervisor does not restart into the same refusal;
    /// 1 for anything else (see the log), e.g. a port another process holds, which may be free
    /// again on the next try.
    package static func exitStatus(for error: any Error) -> Int32 {
        if (error as? RemoteRuntimeError)?.isConfigurationError == true { return 78 }
        return 1
    }

    /// Sets the label screens show for this process's renderings (`ProcessLabel.current`).
    ///
    /// The process environment is the label's one source so the example workflows stay free of
    /// daemon knowledge; it is set once at start, before any thread that renders exists.
    package static func setProcessLabel(_ label: String) {
        setenv("WORKFLOW_PROCESS_LABEL", label, 1)
    }

    /// Writes a fatal start-up error as one line on standard error (logging may not be set up
    /// yet when configuration is invalid).
    package static func reportFatal(_ program: String, _ error: any Error) {
        FileHandle.standardError.write(Data("\(program): \(error)\n".utf8))
    }
}
