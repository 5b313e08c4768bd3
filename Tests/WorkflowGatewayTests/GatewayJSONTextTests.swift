import Foundation
import Testing
import WorkflowCluster
@testable import WorkflowGateway

/// The gateway's answers that are written byte by byte on the event path (an event's 202, the
/// children's statuses and root name in every rendering message, the token's percent decoding):
/// each must say exactly what Foundation's encoder or decoder would, for any text.
@Suite("Gateway JSON text")
struct GatewayJSONTextTests {
    /// Texts with every kind of character a JSON string writer treats apart.
    static let texts = [
        "", "plain", "a/b/c", #"quote " and backslash \"#, "tab\tnew\nline\rfeed\u{0C}back\u{08}", "\u{01}\u{1F}\u{7F}",
        "Grüße, 世界 🌍", "s1:board@3~Counter", "#%&?=+",
    ]

    @Test("an event's 202 body is what JSONEncoder writes with sorted keys", arguments: texts)
    func eventAccepted(token: String) throws {
        let accepted = TreeRoutes.EventAccepted(after: 42, result: "sent", token: token)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(accepted.json == Array(try encoder.encode(accepted)))
    }

    @Test("a session's 201 body is what JSONEncoder writes with sorted keys", arguments: texts)
    func sessionCreated(root: String) throws {
        let created = SessionRoutes.Created(session: SessionID.random(), root: root)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(created.json == Array(try encoder.encode(created)))
    }

    @Test("the children's statuses are what JSONEncoder writes with sorted keys", arguments: texts)
    func childrenStatuses(text: String) throws {
        let running = ChildStatusJSON(path: "root/\(text)/Counter:c", type: "Bench.\(text)", status: "running", worker: "w\(text)", detail: text)
        let starting = ChildStatusJSON(path: text, type: text, status: "starting", worker: nil, detail: "")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for children in [[], [running], [starting], [running, starting]] {
            #expect(RenderingMessage.childrenBytes(children) == Array(try encoder.encode(children)))
        }
    }

    @Test("a message's root name and run are quoted as JSONEncoder quotes them", arguments: texts)
    func rootName(text: String) throws {
        let message = RenderingMessage.bytes(root: text, sequence: 7, json: Data("{}".utf8), children: [], deltas: (1, text, 8))
        let value = try #require(try JSONSerialization.jsonObject(with: Data(message)) as? [String: Any])
        #expect(value["root"] as? String == text)
        #expect(value["run"] as? String == text)
        let quoted = Array(try JSONEncoder().encode(text))
        #expect(message.firstRange(of: Array(#","root":"#.utf8) + quoted) != nil)
    }

    @Test("a path segment decodes as removingPercentEncoding decodes it")
    func percentDecoding() {
        let segments = [
            "", "plain", "s1%3Aboard%40c", "%E4%B8%96%e7%95%8c", "%", "%4", "%G0", "a%2", "%FF%FE", "%C3", "100%25", "%2F..%2F",
            "no-escape:@~", "%00",
        ]
        for segment in segments {
            #expect(PercentDecoding.decoded(segment) == segment.removingPercentEncoding, "\(segment)")
        }
        #expect(PercentDecoding.decoded("s1%3Aboard%40c") == "s1:board@c")
        #expect(PercentDecoding.decoded("a%2") == nil)
        #expect(PercentDecoding.decoded("%FF") == nil)
    }
}
