import Synchronization

/// Decides, for every host created from now on, which observers it uses: given the observers
/// passed to the host, returns the ones it gets (adding, reordering or dropping some).
///
/// workflow-swift's hook for observers every host of a program should have (tracing, metrics)
/// without threading them through each `WorkflowHost(…, observers:)` call; code written for it
/// installs one through `WorkflowObservation.sharedObserversInterceptor`.
@_spi(WorkflowGlobalObservation)
public protocol ObserversInterceptor: Sendable {
    /// The observers a new host uses, given those it was created with.
    func workflowObservers(for initialObservers: [any WorkflowObserver]) -> [any WorkflowObserver]
}

/// Program-wide observation settings (workflow-swift's `WorkflowObservation`), behind an SPI
/// because a global changes every host in the process, tests' included.
@_spi(WorkflowGlobalObservation)
public enum WorkflowObservation {
    /// The interceptor every host created from now on consults; setting `nil` restores the
    /// default, which keeps a host's own observers as they are. Hosts already running keep
    /// the observers they started with.
    public static var sharedObserversInterceptor: (any ObserversInterceptor)! {
        get { interceptor.withLock { $0 } }
        set { interceptor.withLock { $0 = newValue ?? KeepingObservers() } }
    }

    /// Behind a lock: hosts are created on any thread.
    private static let interceptor = Mutex<any ObserversInterceptor>(KeepingObservers())

    /// The observers a new host uses, given those it was created with.
    static func observers(for initialObservers: [any WorkflowObserver]) -> [any WorkflowObserver] {
        sharedObserversInterceptor.workflowObservers(for: initialObservers)
    }
}

/// The default interceptor: a host keeps the observers it was created with.
private struct KeepingObservers: ObserversInterceptor {
    func workflowObservers(for initialObservers: [any WorkflowObserver]) -> [any WorkflowObserver] {
        initialObservers
    }
}
