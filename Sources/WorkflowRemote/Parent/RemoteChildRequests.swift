import Logging

/// What a remote child's proxy asks of the parent role while its node renders or ends: what its
/// props call for (the parent machine decides), START, UPDATE and STOP of its child, and nothing
/// more. The node passes the parent's driver in with each call
/// (`RemoteChildProxy.render(props:requests:)`, `stop(requests:)`, `handOver(requests:)`); the
/// proxy keeps no reference to it, so what the driver does with these requests is decided in one
/// place (`ParentDriver+ProxyRequests.swift`) and the proxy can be driven without one.
protocol RemoteChildRequests: AnyObject {
    /// What props the node rendered call for, `changed` or not from those last sent
    /// (`ParentStateMachine.propsRendered(_:changed:)`).
    func propsRendered(proxy: any AnyRemoteChildProxy, changed: Bool) -> ParentStateMachine.PropsAction
    func start(proxy: any AnyRemoteChildProxy, props: [UInt8])
    /// UPDATE to the child's placement on `worker`; `nil`: its worker is releasing it, and the
    /// props wait for the next START.
    func update(proxy: any AnyRemoteChildProxy, props: [UInt8], on worker: WorkerID?)
    /// `sendingDueEvents: false` when another proxy takes over the child's unacknowledged events.
    func stop(proxy: any AnyRemoteChildProxy, sendingDueEvents: Bool)
}

extension ParentDriver: RemoteChildRequests {}

/// Publishes a remote child's status changes and logs each once: a value the parent's driver and
/// the child's proxy both hold (the runtime's shared state and its logger), not a way into the
/// driver.
struct RemoteChildStatusReporter {
    let shared: RuntimeSharedState
    let logger: Logger

    /// A child waiting for a worker that has not joined yet is normal at start, so it is `info`;
    /// losing a worker, or a worker's refusal, is a `warning`.
    func report(path: String, typeName: String, status: RemoteChildStatus) {
        shared.setStatus(status, path: path, typeName: typeName)
        let level: Logger.Level
        switch status {
        // A full worker is said once, as a warning naming it (`ParentDriver.refuseForCapacity`),
        // not once per child: a coordinator sized too small would log a line per session.
        case .starting, .reconnecting, .running, .unavailable(.noWorker), .unavailable(.workerAtCapacity): level = .info
        case .unavailable: level = .warning
        }
        logger.log(level: level, "child status: \(status)", metadata: ["path": "\(path)", "status": "\(status.name)"])
    }
}
