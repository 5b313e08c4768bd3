import Foundation

/// Shared by the test targets that wait on other threads and processes.
///
/// How long any single wait may take before the test fails instead of hanging. Generous: the
/// suite must pass on a loaded 2-core machine, and it only fires when something is broken.
public let safetyTimeout: Duration = .seconds(60)

/// A wait that did not complete.
public struct WaitFailure: Error, CustomStringConvertible {
    public let description: String

    public init(description: String) {
        self.description = description
    }
}

/// How long the timeout waits past `safetyTimeout` before it wins. A machine that stalled the
/// test process (every core busy elsewhere) wakes the timer and the operation together; the
/// grace lets an operation whose result arrived during the stall finish first.
public let safetyTimeoutGrace: Duration = .seconds(2)

/// Runs `operation`, failing with `WaitFailure` if it outlasts `safetyTimeout` (and the grace).
public func withSafetyTimeout<T: Sendable>(_ what: String, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try? await Task.sleep(for: safetyTimeout)
            try? await Task.sleep(for: safetyTimeoutGrace)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw WaitFailure(description: "\(what): timed out after \(safetyTimeout)")
        }
        return value
    }
}
