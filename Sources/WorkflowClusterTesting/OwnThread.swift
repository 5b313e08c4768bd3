import Foundation

/// Runs `body` on a thread of its own and returns what it returns.
///
/// For a test whose work is long and synchronous (a simulation sweep, a fuzz loop): the
/// concurrency pool has one thread per core, two on the CI machine, and every test of the
/// parallel run shares it. A test that computes for a minute on a pool thread holds that thread
/// for the minute; two of them stop every other test, and with them the timers and waits those
/// tests depend on (a 3 s request deadline passes while the test that would answer in time is
/// not scheduled). On a thread of its own the body shares the cores through the kernel's
/// scheduler instead.
///
/// The body runs outside the test's task: it returns what the test should record (Swift
/// Testing attributes `Issue.record` and `#expect` to the task that runs the test).
public func onOwnThread<T: Sendable>(_ name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = name
        thread.start()
    }
}
