import Foundation
import WireProtocol

/// What a remote child's proxy asks of the parent role, and nothing more: a child id and its
/// back-pressure account at creation, the codec for its renderings and outputs, START, UPDATE
/// and STOP of its child, and where its status changes and decoding errors go. The proxy reaches
/// no other part of the engine (its workers, its tables, its state machine), so what the engine
/// does with these requests is decided in one place (`RemoteEngine+ProxyRequests.swift`).
protocol RemoteChildProxyEngine: AnyObject {
    var codec: any WireCodec { get }
    /// The coder storage the loop's decodes reuse.
    var codingScratch: WireCodingScratch { get }
    func allocateChildID() -> UInt64
    func makeOutstandingEvents(path: String) -> OutstandingEvents
    /// The proxy exists: messages and events for its child id reach it.
    func register(proxy: any AnyRemoteChildProxy)
    /// The decoder context for the proxy's renderings and outputs (their sinks send to its child).
    func importerUserInfo(for proxy: any AnyRemoteChildProxy) -> [CodingUserInfoKey: any Sendable]
    func start(proxy: any AnyRemoteChildProxy, props: [UInt8])
    func update(proxy: any AnyRemoteChildProxy, props: [UInt8])
    /// `sendingDueEvents: false` when another proxy takes over the child's unacknowledged events.
    func stop(proxy: any AnyRemoteChildProxy, sendingDueEvents: Bool)
    func statusChanged(path: String, status: RemoteChildStatus)
    func log(error message: String)
    func log(warning message: String)
}

extension RemoteEngine: RemoteChildProxyEngine {}
