import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension SessionLoad {
    /// How a session's events were answered while its owner lived (a line of the events'
    /// accepted file).
    struct Answers: Sendable {
        var accepted = 0
        /// Answered otherwise or not at all: applied once or not at all, in doubt.
        var refused = 0
    }

    /// A session of the dead coordinator served again: by which coordinator, and when.
    struct Served: Sendable {
        var session: BenchSession
        var url: String
        var at: UInt64
    }

    /// A session's counter against how its events were answered.
    struct Count: Sendable {
        var session: BenchSession
        var count: Int
        var expected: Answers
    }

    /// SIGKILLs the coordinator `pid` (serving `deadURL`), then asks the others for each of its
    /// sessions (of `idsFile`), each of another one in turn, until each is served again (taken
    /// over once its lease ran out; a redirect to the dead owner is asked again 50 ms later, one
    /// to another coordinator followed). Then checks every session of the dead one and every
    /// session `acceptedFile` names: its counter shows each event answered 202 exactly once.
    /// Prints the times from the kill and the check's counts as one JSON line.
    static func takeover(pid: Int32, deadURL: String, idsFile: String, acceptedFile: String) async throws {
        let sessions = try BenchSession.read(idsFile)
        let answers = try readAnswers(acceptedFile)
        let survivors = Set(sessions.map(\.url)).subtracting([deadURL]).sorted()
        guard !survivors.isEmpty else { throw LoadFailure("\(idsFile) names no coordinator but \(deadURL)") }
        let lanes = 32
        var gateways: [String: GatewayConnections] = [:]
        for url in survivors { gateways[url] = try GatewayConnections(url: url, count: lanes) }
        let connections = gateways
        let orphans = sessions.filter { $0.url == deadURL }

        guard kill(pid, SIGKILL) == 0 else { throw LoadFailure("cannot SIGKILL \(pid): errno \(errno)") }
        let killedAt = now()
        let servedBy = killedAt + 300_000_000_000
        let takenOver = try await inLanes(lanes, over: Array(orphans.enumerated())) { (lane, orphan) -> Served in
            let asked = survivors[orphan.offset % survivors.count]
            let (url, _) = try await served(orphan.element, asking: asked, on: connections, lane: lane, by: servedBy)
            return Served(session: orphan.element, url: url, at: now())
        }
        let servedSeconds = takenOver.map { elapsed(from: killedAt, to: $0.at) }.sorted()

        // Every session of the dead one where it was served, every other with events at its owner.
        let checked = takenOver.map { ($0.session, $0.url) } + sessions.filter { $0.url != deadURL && answers[$0.id] != nil }.map { ($0, $0.url) }
        let appliedBy = now() + 120_000_000_000
        let counts = try await inLanes(lanes, over: checked) { (lane, item) -> Count in
            let (session, url) = item
            let expected = answers[session.id] ?? Answers()
            while true {
                let (_, count) = try await served(session, asking: url, on: connections, lane: lane, by: appliedBy)
                if count >= expected.accepted || now() >= appliedBy { return Count(session: session, count: count, expected: expected) }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        let checkedAt = now()
        let exact = counts.filter { $0.count == $0.expected.accepted }
        let inDoubtApplied = counts.filter { $0.count > $0.expected.accepted && $0.count <= $0.expected.accepted + $0.expected.refused }
        let wrong = counts.filter { $0.count < $0.expected.accepted || $0.count > $0.expected.accepted + $0.expected.refused }
        func percentile(_ p: Double) -> Double { servedSeconds.isEmpty ? -1 : servedSeconds[min(servedSeconds.count - 1, Int(Double(servedSeconds.count) * p))] }
        try printJSON([
            "orphans": orphans.count, "survivors": survivors.count,
            "first_served_seconds": percentile(0), "p50_served_seconds": percentile(0.5), "all_served_seconds": percentile(1),
            "checked": counts.count, "checked_seconds": elapsed(from: killedAt, to: checkedAt),
            "exact": exact.count, "in_doubt_applied": inDoubtApplied.count, "mismatched": wrong.count,
            "first_mismatch": wrong.first.map { "\($0.session.id): counter \($0.count), \($0.expected.accepted) answered 202, \($0.expected.refused) refused" } ?? "",
            "accepted": counts.reduce(0) { $0 + $1.expected.accepted }, "applied": counts.reduce(0) { $0 + $1.count },
            "in_doubt": counts.reduce(0) { $0 + $1.expected.refused },
        ])
    }

    /// Asks `url` for `session`'s rendering until one shows its counter, following a redirect to
    /// a coordinator of `gateways`; any other redirect (to the dead owner, whose lease has not run
    /// out yet) or a 503 is asked again 50 ms later, until `deadline`. Returns the coordinator
    /// that served it and the count shown.
    static func served(
        _ session: BenchSession, asking url: String, on gateways: [String: GatewayConnections], lane: Int, by deadline: UInt64
    ) async throws -> (url: String, count: Int) {
        var url = url
        while true {
            guard let gateway = gateways[url] else { throw LoadFailure("no connections to \(url)") }
            let answer = try await gateway.get(session.api + "/rendering", on: lane)
            if answer.status == 200, let count = BoardFrame.decode(answer.body)?.rendering.c.count, count >= 0 { return (url, count) }
            if answer.status == 307, let location = answer.location, let owner = gateways.keys.first(where: { location.hasPrefix($0 + "/") }) {
                url = owner
                continue
            }
            guard [200, 307, 503].contains(answer.status) else {
                throw LoadFailure("GET \(session.api)/rendering on \(url): \(answer.status) \(answer.body.prefix(200))")
            }
            guard now() < deadline else { throw LoadFailure("\(session.api) not served by \(url) in time: \(answer.status) \(answer.body.prefix(200))") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// `body` over `items` in `lanes` lanes (lane `l` takes items `l`, `l + lanes`, …, in order).
    static func inLanes<Item: Sendable, Result: Sendable>(
        _ lanes: Int, over items: [Item], _ body: @escaping @Sendable (Int, Item) async throws -> Result
    ) async throws -> [Result] {
        try await withThrowingTaskGroup(of: [Result].self) { group in
            for lane in 0..<lanes {
                group.addTask {
                    var results: [Result] = []
                    for index in stride(from: lane, to: items.count, by: lanes) { results.append(try await body(lane, items[index])) }
                    return results
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// The answers of an events' accepted file (`ID ACCEPTED REFUSED` lines), by session id.
    static func readAnswers(_ file: String) throws -> [String: Answers] {
        var answers: [String: Answers] = [:]
        for line in try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let accepted = Int(fields[1]), let refused = Int(fields[2]) else {
                throw LoadFailure("\(file): not an `ID ACCEPTED REFUSED` line: \(line)")
            }
            answers[String(fields[0])] = Answers(accepted: accepted, refused: refused)
        }
        return answers
    }
}
