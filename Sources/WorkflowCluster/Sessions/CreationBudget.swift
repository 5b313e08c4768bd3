import Foundation

/// How many sessions may still be created now: a token bucket refilled at the configured rate,
/// holding at most one second's worth.
struct CreationBudget {
    let perSecond: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant

    init(perSecond: Double, now: ContinuousClock.Instant) {
        self.perSecond = perSecond
        self.tokens = max(perSecond, 1)
        self.last = now
    }

    /// Takes one creation if the budget allows it at `now`.
    mutating func take(now: ContinuousClock.Instant) -> Bool {
        let (seconds, attoseconds) = (now - last).components
        tokens = min(max(perSecond, 1), tokens + (Double(seconds) + Double(attoseconds) / 1e18) * perSecond)
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
