import Foundation
import HummingbirdWSClient
import Logging

/// The load of scripts/bench-sessions.sh: creating sessions, and events spread over them with
/// each one's renderings watched on its WebSocket stream.
enum SessionLoad {
    static func run(_ arguments: [String]) async throws {
        switch arguments.first {
        case "create" where arguments.count == 4:
            guard let count = Int(arguments[2]) else { throw LoadFailure("not a count: \(arguments[2])") }
            try await create(url: arguments[1], count: count, idsFile: arguments[3])
        case "events" where arguments.count >= 6:
            guard let sessions = Int(arguments[3]), let rate = Double(arguments[4]), let seconds = Double(arguments[5]) else {
                throw LoadFailure("events URL IDS_FILE SESSIONS RATE SECONDS [shared]: not numbers: \(arguments[3...5])")
            }
            try await events(
                url: arguments[1], idsFile: arguments[2], sessions: sessions, rate: rate, seconds: seconds, shared: arguments.count > 6 && arguments[6] == "shared")
        default:
            throw LoadFailure("usage: create URL COUNT IDS_FILE | events URL IDS_FILE SESSIONS RATE SECONDS [shared]")
        }
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Creates `count` sessions of "board" over 16 connections (waiting and trying again when the
    /// gateway answers 429 or 503), then reads each one's rendering until its remote child shows.
    static func create(url: String, count: Int, idsFile: String) async throws {
        struct Created: Decodable { var session: String }
        let lanes = 16
        let gateway = try GatewayConnections(url: url, count: lanes)
        let started = now()
        let ids = try await withThrowingTaskGroup(of: [String].self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    var ids: [String] = []
                    var index = lane
                    while index < count {
                        let answer = try await gateway.post("/api/sessions", json: #"{"root": "board"}"#, on: lane)
                        if answer.status == 429 || answer.status == 503 {
                            try await Task.sleep(for: .milliseconds(100))
                            continue
                        }
                        guard answer.status == 201 else { throw LoadFailure("POST /api/sessions: \(answer.status) \(answer.body)") }
                        ids.append(try JSONDecoder().decode(Created.self, from: Data(answer.body.utf8)).session)
                        index += lanes
                    }
                    return ids
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        let createdAt = now()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    for index in stride(from: lane, to: ids.count, by: lanes) {
                        while true {
                            let answer = try await gateway.get("/api/sessions/\(ids[index])/rendering", on: lane)
                            guard answer.status == 200 else { throw LoadFailure("GET rendering: \(answer.status) \(answer.body)") }
                            if let count = BoardFrame.decode(answer.body)?.rendering.c.count, count >= 0 { break }
                            try await Task.sleep(for: .milliseconds(20))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try ids.joined(separator: "\n").write(toFile: idsFile, atomically: true, encoding: .utf8)
        let seconds = { (from: UInt64, to: UInt64) in Double(to - from) / 1e9 }
        print(
            #"{"created": \#(ids.count), "create_seconds": \#(seconds(started, createdAt)), "all_rendered_seconds": \#(seconds(started, now()))}"#)
    }

    /// Offers `rate` events/s for `seconds` to the first `sessions` sessions of `idsFile` in turn
    /// (or, `shared`, all to the shared root), each a POST of 1 to its counter's sink over 64
    /// connections, and times each from its POST to the first rendering showing it on the
    /// session's WebSocket stream (one client per session).
    static func events(url: String, idsFile: String, sessions: Int, rate: Double, seconds: Double, shared: Bool) async throws {
        let gateway = try GatewayConnections(url: url, count: 64)
        let watched: [WatchedSession]
        if shared {
            watched = [WatchedSession(api: "/api")]
        } else {
            let ids = try String(contentsOfFile: idsFile, encoding: .utf8).split(separator: "\n").prefix(sessions)
            guard ids.count == sessions else { throw LoadFailure("\(idsFile) holds \(ids.count) sessions, not \(sessions)") }
            watched = ids.map { WatchedSession(api: "/api/sessions/\($0)") }
        }
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
                        let path = session.api == "/api" ? "/api/renderings" : session.api + "/renderings"
                        _ = try? await WebSocketClient.connect(url: gateway.webSocketURL(path), logger: logger) { inbound, _, _ in
                            for try await message in inbound.messages(maxSize: 1 << 20) {
                                guard case .text(let text) = message else { continue }
                                tally.shown(session.received(text, at: now()))
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
        await withTaskGroup(of: Void.self) { group in
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
                    let answer = try? await gateway.post(sending.path, json: "1", on: index)
                    if answer?.status == 202 {
                        tally.accepted()
                    } else {
                        session.refused(sending.expected)
                        tally.refused("\(answer?.status ?? 0) \(answer?.body.prefix(120) ?? "no answer")")
                    }
                }
            }
            await group.waitForAll()
        }
        let sentFor = Double(now() - started) / 1e9
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
        let summary: [String: Any] = [
            "offered": total, "accepted": tally.acceptedTotal, "refused": refusals.count,
            "first_refusal": refusals.first ?? "", "shown": sorted.count,
            "not_shown": watched.reduce(0) { $0 + $1.outstanding }, "seconds": sentFor,
            "accepted_per_second": Double(tally.acceptedTotal) / sentFor,
            "p50_ms": percentile(0.5), "p99_ms": percentile(0.99), "max_ms": percentile(1.0),
            "max_sender_lag_ms": Double(maximumLag) / 1e6, "streams": watched.count,
        ]
        let json = try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])
        print(String(decoding: json, as: UTF8.self))
    }
}
