/// Bounds how many log lines one kind of warning can write, so a peer that floods a process with
/// bad messages cannot flood its log (and the disk or collector behind it) as well.
///
/// Per key, the first `burst` warnings of each `window` are admitted; the rest are only counted,
/// and once their window is over `endedWindows(at:)` reports how many were suppressed, for one
/// summary line. A key names a kind of warning — a fixed text in the code, never anything a peer
/// sent — so the table holds one entry per kind however many peers (or routing ids) misbehave.
///
/// A plain value owned by the loop thread that logs; not shared.
struct LogRateLimiter {
    /// The first `burst` warnings of a key per window are logged.
    let burst: Int
    /// How long a window lasts (from the first warning of the key in it).
    let window: Duration

    private struct Window {
        var start: ContinuousClock.Instant
        var admitted = 0
        var suppressed = 0
    }

    private var windows: [String: Window] = [:]

    init(burst: Int = 10, window: Duration = .seconds(5)) {
        self.burst = burst
        self.window = window
    }

    /// Whether a warning of kind `key` occurring `now` may be logged; if not, it is counted.
    /// A window that ended with suppressed warnings is left for `endedWindows(at:)` to report
    /// (a new one starts only when that has happened), so no count is ever lost.
    mutating func admit(_ key: String, at now: ContinuousClock.Instant = .now) -> Bool {
        var current = windows[key] ?? Window(start: now)
        if now - current.start >= window, current.suppressed == 0 {
            // Over, and nothing in it waits to be reported: a new window starts.
            current = Window(start: now)
        }
        defer { windows[key] = current }
        if current.admitted < burst, now - current.start < window {
            current.admitted += 1
            return true
        }
        current.suppressed += 1
        return false
    }

    /// The keys whose window is over with warnings suppressed in it, and how many each: the
    /// summary lines to write. Their windows are closed, so each count is reported once.
    mutating func endedWindows(at now: ContinuousClock.Instant = .now) -> [(key: String, suppressed: Int)] {
        var ended: [(key: String, suppressed: Int)] = []
        for (key, current) in windows where now - current.start >= window {
            if current.suppressed > 0 { ended.append((key, current.suppressed)) }
            windows[key] = nil
        }
        return ended.sorted { $0.key < $1.key }
    }
}
