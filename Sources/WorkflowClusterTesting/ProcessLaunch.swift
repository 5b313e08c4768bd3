import Foundation
import Synchronization

/// Starts processes one at a time.
///
/// Foundation's `Process.run()` on Linux reads the environment and builds the child's argument
/// and environment arrays without synchronisation; tests that start many daemons from parallel
/// tasks crashed in it (a bad pointer in its copy) once in several full runs. Every process the
/// test support starts goes through this lock, which costs nothing a test would notice.
public enum ProcessLaunch {
    private static let lock = Mutex(())

    /// Runs `process` (`Process.run()`), never concurrently with another launch through here.
    public static func run(_ process: Process) throws {
        try lock.withLock { _ in try process.run() }
    }
}
