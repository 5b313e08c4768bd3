import Testing
@testable import Workflow

/// A sink's token is what a parent holds and sends events back with: its bytes are part of the
/// remote protocol (a parent and a worker of different builds must agree on them), so the
/// byte-by-byte writer must produce exactly `<node>:<slot>:<event type>@<incarnation in base 36>.<pass>`.
struct SinkTokenTests {
    private struct Event: Sendable {}

    private static func interpolated<Event>(node: UInt64, slot: Int, event: Event.Type, incarnation: UInt64, pass: UInt64) -> String {
        "\(node):\(slot):\(_typeName(event, qualified: true))@\(String(incarnation, radix: 36)).\(pass)"
    }

    @Test(arguments: [
        (UInt64(0), 0, UInt64(0), UInt64(0)),
        (1, 1, 35, 9),
        (10, 9, 36, 10),
        (12_345, 42, 1_296, 999_999),
        (.max, .max, .max, .max),
        (7, -3, 0x1234_5678_9abc, 1),
        (3, .min, 1, .max),
    ])
    func theTokenIsTheDocumentedForm(node: UInt64, slot: Int, incarnation: UInt64, pass: UInt64) {
        #expect(
            SinkToken.make(node: node, slot: slot, event: Int.self, incarnation: incarnation, pass: pass)
                == Self.interpolated(node: node, slot: slot, event: Int.self, incarnation: incarnation, pass: pass))
        #expect(
            SinkToken.make(node: node, slot: slot, event: Event.self, incarnation: incarnation, pass: pass)
                == Self.interpolated(node: node, slot: slot, event: Event.self, incarnation: incarnation, pass: pass))
    }

    @Test func aPlaceIsTheTokenWithoutItsPass() {
        let token = SinkToken.make(node: 12, slot: 3, event: Int.self, incarnation: 1_296, pass: 77)
        let place = SinkToken.place(of: token)
        #expect(place == "12:3:\(_typeName(Int.self, qualified: true))@100")
        #expect(SinkToken.place(of: SinkToken.make(node: 12, slot: 3, event: Int.self, incarnation: 1_296, pass: 78)) == place)
        // A middle process's forwarded token drops its carried token's pass the same way.
        #expect(SinkToken.place(of: "fk3~\(token)") == "fk3~\(place)")
        // A place, or a token of no runtime shape, is its own place.
        #expect(SinkToken.place(of: place) == place)
        #expect(SinkToken.place(of: "no-such-token") == "no-such-token")
    }

    @Test func theTokenReadsBackAsItsParts() throws {
        let token = SinkToken.make(node: 12, slot: 3, event: Int.self, incarnation: 1_296, pass: 77)
        let parts = try #require(SinkToken(parsing: token))
        #expect(parts.route == "12:3:\(_typeName(Int.self, qualified: true))")
        #expect(parts.incarnation == "100")
        #expect(parts.pass == "77")
        #expect(parts.isWellFormed)
        // A place has no pass; a forwarded token carries its token's incarnation and pass.
        let place = try #require(SinkToken(parsing: String(parts.place)))
        #expect(place.pass == nil && place.incarnation == "100" && place.isWellFormed)
        let forwarded = SinkToken.forwarding(token, prefix: "fk3")
        #expect(SinkToken(parsing: forwarded)?.route == "fk3~\(parts.route)")
        #expect(SinkToken(parsing: forwarded)?.incarnation == "100")
        #expect(SinkToken.forwarded(forwarded).map { "\($0.prefix)|\($0.token)" } == "fk3|\(token)")
        #expect(SinkToken.forwarded(token) == nil)
        // No `@`: no runtime token. Another shape after it: parsed, but not well formed.
        #expect(SinkToken(parsing: "no-such-token") == nil)
        #expect(SinkToken(parsing: "x@UPPER.1")?.isWellFormed == false)
        #expect(SinkToken(parsing: "x@abc.1x")?.isWellFormed == false)
        #expect(SinkToken(parsing: "x@.1")?.isWellFormed == false)
    }
}
