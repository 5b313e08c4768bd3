import Foundation

extension SessionLoad {
    /// Creates `count` sessions of "board" on `url` over `SESSION_BENCH_CREATORS` connections
    /// (default 48), each a client creating one session after another (waiting and trying
    /// again when the gateway answers 429 or 503), then reads each one's rendering until its
    /// remote child shows; appends them to `idsFile` (`ID URL` lines). The sessions already in
    /// `idsFile` were created earlier in the run, which creates `total` in all (default: those
    /// and these): the creation rate is counted per tenth of `total` (`CreationPace`).
    static func create(url: String, count: Int, idsFile: String, total: Int?) async throws {
        struct Created: Decodable { var session: String }
        let lanes = max(1, Int(ProcessInfo.processInfo.environment["SESSION_BENCH_CREATORS"] ?? "") ?? 48)
        let earlier = try BenchSession.read(idsFile).count
        let gateway = try GatewayConnections(url: url, count: lanes)
        let started = now()
        let pace = CreationPace(offset: earlier, total: total ?? earlier + count, startedAt: started)
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
                        if let done = pace.created(at: now()) {
                            let range = "\(done.tenth * 10)–\(done.tenth * 10 + 10) %"
                            progress("created the sessions of \(range) on \(url): \(done.part.sessions) in \(String(format: "%.1f", done.part.seconds)) s in this step")
                        }
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
        try BenchSession.append(ids.map { BenchSession(id: $0, url: url) }, to: idsFile)
        try printJSON([
            "created": ids.count, "clients": lanes, "create_seconds": elapsed(from: started, to: createdAt),
            "all_rendered_seconds": elapsed(from: started, to: now()),
            "tenths": pace.tenths.map { [$0.sessions, $0.seconds] as [Any] },
        ])
    }
}
