import RemoteTestSupport
import Foundation
import WorkflowClusterTesting

/// A process's memory as Linux reports it in `/proc/<pid>/status`: what the flood tests measure.
struct ProcessMemory {
    /// Resident set size now (`VmRSS`), in bytes.
    var resident: Int
    /// The peak resident set size (`VmHWM`), in bytes: since the process started, or since the
    /// last `resetPeak`.
    var peakResident: Int

    /// Reads the figures of process `pid`.
    init(pid: Int32) throws {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func kilobytes(_ field: String) throws -> Int {
            // A line such as "VmRSS:	   12345 kB".
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
                let value = line.split(whereSeparator: \.isWhitespace).dropFirst().first.flatMap({ Int($0) })
            else { throw WaitFailure(description: "no \(field) in /proc/\(pid)/status") }
            return value * 1024
        }
        resident = try kilobytes("VmRSS")
        peakResident = try kilobytes("VmHWM")
    }

    /// Makes `VmHWM` restart from the current resident size (`5` to `/proc/<pid>/clear_refs`,
    /// allowed for one's own processes), so a later peak is the peak of what happened after.
    static func resetPeak(pid: Int32) throws {
        try Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/\(pid)/clear_refs"))
    }
}

/// Byte counts for test messages.
extension Int {
    var mebibytes: String { String(format: "%.1f MiB", Double(self) / Double(1 << 20)) }
}
