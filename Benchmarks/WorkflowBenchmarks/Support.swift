import Foundation
import Workflow

/// One row of the results table.
struct Figure {
    let name: String
    let value: Double
    let unit: String
    let baseline: Double?
    let goal: String
    let met: Bool?

    var ratio: Double? { baseline.map { value / $0 } }
}

/// Wall-clock time of `body`, in nanoseconds.
func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return nanoseconds(ContinuousClock.now - start)
}

/// Wall-clock time of `body`, in nanoseconds.
func measure(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    return nanoseconds(ContinuousClock.now - start)
}

func nanoseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
}

/// The value below which `fraction` of `values` lie (nearest rank).
func percentile(_ values: [Double], _ fraction: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

/// Resident set size of a process, in bytes (from /proc).
func residentBytes(of pid: Int32 = getpid()) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
    else { return 0 }
    let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first ?? 0
    return kilobytes * 1024
}

/// CPU time (user + system, every thread) a process has used so far, in nanoseconds, from
/// `/proc/PID/stat`: repeatable where wall time is not (a shared machine lends its cores to
/// others).
func cpuTime(of pid: Int32 = getpid()) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return 0 }
    // After "pid (comm)": state is field 3, utime 14 and stime 15 (1-based).
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK))) * 1e9
}

/// Waits for the first rendering of `host` that satisfies `predicate`.
@discardableResult
func awaitRendering<W>(_ host: WorkflowHost<W>, where predicate: @escaping @Sendable (W.Rendering) -> Bool) async -> W.Rendering? {
    for await rendering in host.renderings where predicate(rendering) { return rendering }
    return nil
}

/// A helper process (this executable in another mode), killed at exit.
final class Peer: Sendable {
    let process: Process

    init(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        self.process = process
        try process.run()
    }

    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit { kill() }
}

func uniqueEndpoint(_ name: String) -> String {
    "ipc:///tmp/wf-bench-\(getpid())-\(name)"
}

/// Prints the table: figure, value, baseline, ratio, goal, met?
func printTable(_ figures: [Figure]) {
    func format(_ value: Double, _ unit: String) -> String {
        switch unit {
        case "ns": value >= 1e6 ? String(format: "%.2f ms", value / 1e6) : value >= 1e3 ? String(format: "%.1f µs", value / 1e3) : String(format: "%.0f ns", value)
        case "/s": value >= 1e6 ? String(format: "%.2f M/s", value / 1e6) : String(format: "%.0f k/s", value / 1e3)
        case "B": value >= 1024 ? String(format: "%.1f KiB", value / 1024) : String(format: "%.0f B", value)
        case "allocs": String(format: "%.1f", value)
        default: String(format: "%.2f %@", value, unit)
        }
    }
    let header = ["figure", "value", "baseline", "ratio", "goal", "met?"]
    var rows: [[String]] = [header]
    for figure in figures {
        rows.append([
            figure.name, format(figure.value, figure.unit), figure.baseline.map { format($0, figure.unit) } ?? "-",
            figure.ratio.map { String(format: "%.2f×", $0) } ?? "-", figure.goal,
            figure.met.map { $0 ? "yes" : "NO" } ?? "-",
        ])
    }
    let widths = (0..<header.count).map { column in rows.map { $0[column].count }.max() ?? 0 }
    for (index, row) in rows.enumerated() {
        print("| " + row.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }.joined(separator: " | ") + " |")
        if index == 0 { print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|") }
    }
}


/// The process's heap allocation count, when `Benchmarks/MallocCounter` is preloaded
/// (`LD_PRELOAD`); `nil` otherwise, and the allocation rows are left out.
enum AllocationCounter {
    private typealias CountFunction = @convention(c) () -> UInt

    /// The preloaded counter's current value (looked up each time: two calls per measurement).
    private static func current() -> UInt? {
        guard let symbol = dlsym(nil, "wf_malloc_count") else { return nil }
        return unsafeBitCast(symbol, to: CountFunction.self)()
    }

    static var isAvailable: Bool { current() != nil }

    /// The count now, for a helper process reporting its own.
    static var currentCount: UInt? { current() }

    /// Allocations made (by every thread) while `body` ran.
    static func count(_ body: () throws -> Void) rethrows -> Double {
        let before = current() ?? 0
        try body()
        return Double((current() ?? 0) &- before)
    }

    static func count(_ body: () async throws -> Void) async rethrows -> Double {
        let before = current() ?? 0
        try await body()
        return Double((current() ?? 0) &- before)
    }
}
