import Foundation

/// A duration in the units the loop's messages, logs and metrics use.
extension Duration {
    /// The duration in whole milliseconds (WELCOME's heartbeat interval, log values; the
    /// coordinator's guarantee lines).
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The duration in whole nanoseconds (the round-trip metric).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The duration in seconds (the inspector's figures).
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration in seconds to the millisecond, for a typed log value (`silentSeconds`).
    var loggedSeconds: Double {
        Double(milliseconds) / 1000
    }

    /// The duration in seconds as people write it in a log line: `1.0 s`, `0.25 s`, `5.0 s`
    /// (Swift's own `1.0 seconds` reads as prose mid-sentence, and milliseconds need counting).
    var secondsText: String {
        let milliseconds = Double(self.milliseconds)
        let text = String(format: "%.3f", milliseconds / 1000)
        var trimmed = Substring(text)
        while trimmed.hasSuffix("0"), !trimmed.hasSuffix(".0") { trimmed = trimmed.dropLast() }
        return "\(trimmed) s"
    }
}
