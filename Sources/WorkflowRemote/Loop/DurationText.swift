import Foundation

extension Duration {
    /// The duration in seconds as people write it in a log line: `1.0 s`, `0.25 s`, `5.0 s`
    /// (Swift's own `1.0 seconds` reads as prose mid-sentence, and milliseconds need counting).
    /// The duration in seconds to the millisecond, for a typed log value (`silentSeconds`).
    var loggedSeconds: Double {
        Double(milliseconds) / 1000
    }

    var secondsText: String {
        let milliseconds = Double(self.milliseconds)
        let text = String(format: "%.3f", milliseconds / 1000)
        var trimmed = Substring(text)
        while trimmed.hasSuffix("0"), !trimmed.hasSuffix(".0") { trimmed = trimmed.dropLast() }
        return "\(trimmed) s"
    }
}
