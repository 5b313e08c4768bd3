import Foundation
import HummingbirdWSClient
import Logging

extension SessionLoad {
    /// Offers `rate` events/s for `seconds` to `sessions` in turn, each on the gateway it was
    /// created on; prints the summary and, with `acceptedFile`, writes how each session's events
    /// were answered there (`ID ACCEPTED REFUSED` lines: the takeover's check reads them).
    static func events(to sessions: [BenchSession], rate: Double, seconds: Double, acceptedFile: String?) async throws {
        var gateways: [String: GatewayConnections] = [:]
        for url in Set(sessions.map(\.url)) { gateways[url] = try GatewayConnections(url: url, count: 64) }
        let watched = sessions.map { WatchedSession($0, on: gateways[$0.url]!) }
        try printJSON(try await events(to: watched, rate: rate, seconds: seconds))
        if let acceptedFile {
            let lines = watched.compactMap { watched in
                watched.session.map { "\($0.id) \(watched.answers.accepted) \(watched.answers.refused)\n" }
            }
            try lines.joined().write(toFile: acceptedFile, atomically: true, encoding: .utf8)
        }
    }

    /// Offers `rate` events/s for `seconds`, all to the shared root of `url`; prints the summary.
    static func events(toSharedRootOf url: String, rate: Double, seconds: Double) async throws {
        let gateway = try GatewayConnections(url: url, count: 64)
        try printJSON(try await events(to: [WatchedSession(nil, on: gateway)], rate: rate, seconds: seconds))
    }

    /// Offers `rate` events/s for `seconds` to `watched` in turn, each a POST of 1 to its
    /// counter's sink over its gateway's connections, and times each from its POST to the first
    /// rendering showing it on the tree's WebSocket stream (one client per tree). Returns the
    /// summary.
    static func events(to watched: [WatchedSession], rate: Double, seconds: Double) async throws -> [String: Any] {
        let tally = EventTally()
        let logger = {
            var logger = Logger(label: "session-bench.load")
            logger.logLevel = .critical
            return logger
        }()
        let streams = Task {
            await withTaskGroup(of: Void.self) { group in
                for session in watched {
                    group.addTask {
                        _ = try? await WebSocketClient.connect(url: session.gateway.webSocketURL(session.streamPath), logger: logger) { inbound, outbound, _ in
                            for try await message in inbound.messages(maxSize: 1 << 20) {
                                guard case .text(let text) = message else { continue }
                                let (shown, ack) = session.received(text, at: now())
                                tally.shown(shown)
                                if let ack { try await outbound.write(.text(#"{"ack":\#(ack)}"#)) }
                            }
                        }
                    }
                }
            }
        }
        defer { streams.cancel() }
        let readyBy = now() + 120_000_000_000
        while !watched.allSatisfy(\.isReady) {
            guard now() < readyBy else { throw LoadFailure("only \(watched.count(where: \.isReady)) of \(watched.count) streams showed a rendering in 120 s") }
            try await Task.sleep(for: .milliseconds(50))
        }

        let total = Int(rate * seconds)
        let interval = 1e9 / rate
        let started = now()
        var maximumLag: UInt64 = 0
        // Discarding: each POST's task is freed when it ends (a plain group keeps every finished
        // child until it is awaited, and the load's heap grew by one task per event offered).
        await withDiscardingTaskGroup { group in
            for index in 0..<total {
                let due = started + UInt64(Double(index) * interval)
                let current = now()
                if current < due {
                    try? await Task.sleep(for: .nanoseconds(Int(due - current)))
                } else {
                    maximumLag = max(maximumLag, current - due)
                }
                let session = watched[index % watched.count]
                guard let sending = session.send(at: now()) else { continue }
                group.addTask {
                    let answer = try? await session.gateway.post(sending.path, json: "1", on: index)
                    if answer?.status == 202 {
                        tally.accepted()
                        session.accepted()
                    } else {
                        session.refused(sending.expected)
                        tally.refused("\(answer?.status ?? 0) \(answer?.body.prefix(120) ?? "no answer")")
                    }
                }
            }
        }
        let sentFor = elapsed(from: started, to: now())
        // What has not shown yet gets 5 s more.
        let drainBy = now() + 5_000_000_000
        while watched.contains(where: { $0.outstanding > 0 }) && now() < drainBy {
            try await Task.sleep(for: .milliseconds(20))
        }
        let sorted = tally.sortedLatencies
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return -1 }
            return Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]) / 1e6
        }
        let refusals = tally.refused
        return [
            "offered": total, "accepted": tally.acceptedTotal, "refused": refusals.count,
            "first_refusal": refusals.first ?? "", "shown": sorted.count,
            "not_shown": watched.reduce(0) { $0 + $1.outstanding }, "seconds": sentFor,
            "accepted_per_second": Double(tally.acceptedTotal) / sentFor,
            "p50_ms": percentile(0.5), "p99_ms": percentile(0.99), "max_ms": percentile(1.0),
            "max_sender_lag_ms": Double(maximumLag) / 1e6, "streams": watched.count,
        ]
    }
}
