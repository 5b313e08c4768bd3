#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Lets any thread wake a thread blocked in ``ZMQPoller/poll(timeout:)``.
///
/// The event-loop design of this package has one thread own every socket and sleep in
/// `zmq_poll`; Swift tasks on other threads enqueue work for it and then call ``wake()``.
/// Register the wakeup with the loop's poller; when the poller reports its token as
/// readable it has already drained the pending signals, so the loop just processes its
/// queue. Wakes coalesce: many `wake()` calls before the loop runs cause one wake-up, so
/// the loop must drain its whole queue each time.
///
/// ## Thread safety
/// `@unchecked Sendable` because it owns two raw file descriptors — the ends of a
/// non-blocking, close-on-exec `pipe(2)`. They are immutable after `init` and closed
/// exactly once in `deinit`, which cannot race with `wake()` because a caller holding a
/// reference keeps the object alive. `write(2)` and `read(2)` on a pipe are thread-safe
/// system calls, so no lock is needed. A pipe (not an inproc socket) is used so waking
/// needs no libzmq socket — which would itself be single-threaded — and works from any
/// thread without touching the context.
public final class ZMQWakeup: @unchecked Sendable {
    /// The end the poller watches.
    let readDescriptor: Int32
    /// The end `wake()` writes to.
    private let writeDescriptor: Int32

    /// Creates the pipe. Fails (e.g. `EMFILE`) rather than trapping.
    public init() throws(ZMQError) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { throw ZMQError(code: errno) }
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, fcntl(descriptor, F_GETFD) | FD_CLOEXEC)
        }
        readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
    }

    deinit {
        _ = close(readDescriptor)
        _ = close(writeDescriptor)
    }

    /// Wakes the poller (now, or on its next poll if it is not currently blocked).
    /// Callable from any thread or task; never blocks and never fails — if the pipe is
    /// full, a wake-up is already pending.
    public func wake() {
        var byte: UInt8 = 1
        while write(writeDescriptor, &byte, 1) < 0 && errno == EINTR {}
    }

    /// Consumes all pending wake signals so the next poll can sleep again. Called by the
    /// poller on the owning thread after it reports this wakeup as ready.
    func drain() {
        // A stack buffer: a wake-up drained on every busy loop iteration allocates nothing.
        withUnsafeTemporaryAllocation(byteCount: 64, alignment: 1) { buffer in
            drain(into: buffer)
        }
    }

    private func drain(into buffer: UnsafeMutableRawBufferPointer) {
        while true {
            let count = read(readDescriptor, buffer.baseAddress, buffer.count)
            if count > 0 { continue }
            if count < 0 && errno == EINTR { continue }
            return  // 0 (cannot happen while we hold the write end) or EAGAIN: drained.
        }
    }
}
