/// A value confined to the remote runtime's loop thread, reachable from `Sendable` code that runs
/// there.
///
/// The loop and its role drivers own ZeroMQ sockets (which libzmq forbids using from two
/// threads) and the parent-side proxies. Jobs submitted to the loop are `@Sendable` closures, so
/// they cannot capture them directly. This box can, and every access checks that it happens on the
/// loop's thread (`precondition`), which is what makes `@unchecked Sendable` sound: the value is
/// never touched from two threads. (The same idea as SwiftNIO's `NIOLoopBound`.)
final class LoopBound<Value>: @unchecked Sendable {
    private let storage: Value
    private let owner: RemoteJobQueue

    init(_ value: Value, owner: RemoteJobQueue) {
        storage = value
        self.owner = owner
    }

    /// The value; traps if called off the loop's thread.
    var value: Value {
        precondition(owner.isOwnerThread, "a loop-bound value was accessed off its loop's thread")
        return storage
    }
}
