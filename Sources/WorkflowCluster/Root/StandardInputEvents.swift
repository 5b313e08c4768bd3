import Foundation

/// Reads events for the root from standard input and sends each to its sink token
/// (`workflow-coordinator --events-from-stdin`).
///
/// One JSON object per line: `{"token": "…", "event": <the event as JSON>}`, the token read from
/// a printed rendering. Each line is answered on standard output as the print mode says (JSON:
/// `{"event":"event","token":…,"result":"sent"}` or with `"result"` an error code such as
/// `stale-token` and a `"detail"`), and failures are logged. This drives a cluster's root from a
/// script or a test through the same `send(event:to:)` a gateway uses; the end of input ends
/// the reader, not the coordinator.
package struct StandardInputEvents: RootCompanion {
    /// Creates the reader.
    package init() {}

    /// Sends each line's event until standard input ends, then lets the coordinator serve on.
    package func run(session: any ClusterRootSession, context: CoordinatorContext) async throws -> RootCompanionEnd {
        for await line in Self.lines() {
            guard !line.allSatisfy(\.isWhitespace) else { continue }
            let token: String
            let event: Data
            do {
                (token, event) = try Self.parse(line)
            } catch {
                context.logger.notice("event line ignored: \(error.reason)")
                context.console.event(["event": "event", "result": "malformed-line", "detail": error.reason])
                context.console.note("event line ignored: \(error.reason)")
                continue
            }
            do {
                try await session.send(event: event, to: token)
                context.logger.debug("event sent", metadata: ["token": "\(token)"])
                context.console.event(["event": "event", "token": token, "result": "sent"])
                context.console.note("event to \(token): sent")
            } catch {
                context.logger.notice("event not sent: \(error)", metadata: ["token": "\(token)"])
                context.console.event(["event": "event", "token": token, "result": error.code, "detail": error.description])
                context.console.note("event to \(token): \(error)")
            }
        }
        return .keepServing
    }

    /// Why a line is not an event request.
    struct MalformedLine: Error {
        var reason: String
    }

    /// The token and the event's JSON of one line.
    static func parse(_ line: String) throws(MalformedLine) -> (String, Data) {
        let expected = #"expected {"token": "…", "event": …}"#
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8), options: [.fragmentsAllowed]) as? [String: Any] else {
            throw MalformedLine(reason: "not a JSON object; \(expected)")
        }
        guard let token = object["token"] as? String else { throw MalformedLine(reason: "no \"token\" string; \(expected)") }
        guard let event = object["event"],
            let data = try? JSONSerialization.data(withJSONObject: event, options: [.fragmentsAllowed])
        else { throw MalformedLine(reason: "no \"event\"; \(expected)") }
        return (token, data)
    }

    /// Standard input's lines, read on a thread of their own (a blocking read must not hold a
    /// thread of Swift's cooperative pool).
    private static func lines() -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let thread = Thread {
            while let line = readLine(strippingNewline: true) { continuation.yield(line) }
            continuation.finish()
        }
        thread.name = "workflow.coordinator.stdin"
        thread.start()
        return stream
    }
}
