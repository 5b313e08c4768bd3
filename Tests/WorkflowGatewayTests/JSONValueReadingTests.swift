import Foundation
import RemoteTestSupport
import Testing
@testable import WorkflowGateway

/// `JSONValue`'s own reader and writer (the stream reads every rendering of a delta client's
/// tree, and each acknowledgement a client sends): what they accept, what they refuse, and that
/// they agree with Foundation's JSON on random trees.
@Suite("JSON values read and written byte by byte")
struct JSONValueReadingTests {
    static func read(_ text: String) -> JSONValue? {
        JSONValue(json: Data(text.utf8))
    }

    @Test("random trees: written, read back equal; Foundation's decoder reads the same bytes to the same value, and its serializer accepts them (2,000 trees)")
    func randomTreesRoundTrip() throws {
        var random = SplitMix64(seed: 77)
        for round in 0..<2_000 {
            let value = RandomJSON.tree(depth: 4, &random)
            let bytes = value.bytes
            #expect(JSONValue(json: bytes) == value, "round \(round): \(value.bytesText)")
            #expect(try JSONDecoder().decode(JSONValue.self, from: bytes) == value, "round \(round)")
            #expect((try? JSONSerialization.jsonObject(with: bytes, options: .fragmentsAllowed)) != nil, "round \(round)")
        }
    }

    @Test("scalars: integers kept exact (beyond Int64 a double), exponents and fractions as doubles, every escape, surrogate pairs, whitespace around")
    func scalars() {
        #expect(Self.read("9223372036854775807") == .integer(.max))
        #expect(Self.read("-9223372036854775808") == .integer(.min))
        #expect(Self.read("9223372036854775808") == .number(9_223_372_036_854_775_808))
        #expect(Self.read("-0") == .integer(0))
        #expect(Self.read("1e3") == .number(1000) && Self.read("2.5E-1") == .number(0.25) && Self.read("-1.5") == .number(-1.5))
        #expect(Self.read(#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00""#) == .string("a\"\\/\u{08}\u{0C}\n\r\té😀"))
        #expect(Self.read(" \n\t{ \"k\" : [ true , false , null ] }\r ") == .object(["k": .array([.bool(true), .bool(false), .null])]))
        #expect(Self.read("\"ü ✓\"") == .string("ü ✓"))
        // Written back: control characters escaped, slashes and non-ASCII as they are.
        #expect(String(decoding: JSONValue.string("a/\u{01}\n\"ü").bytes, as: UTF8.self) == #""a/\u0001\n\"ü""#)
        #expect(String(decoding: JSONValue.number(2).bytes, as: UTF8.self) == "2")
        #expect(String(decoding: JSONValue.object(["b": .integer(1), "a": .null]).bytes, as: UTF8.self) == #"{"a":null,"b":1}"#)
    }

    @Test("what is not JSON is nil, never a trap: truncations, trailing commas and bytes, leading zeros, bad escapes, raw control characters, lone surrogates, invalid UTF-8, nesting past the limit")
    func refusals() {
        let bad = [
            "", " ", "{", "[", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "01", "-", "1.", ".5", "1e", "+1", "tru", "nul", "1 2",
            "\"abc", "\"\\x\"", "\"\\u12\"", "\"\u{01}\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "[1 2]", "{\"a\":1 \"b\":2}",
        ]
        for text in bad { #expect(Self.read(text) == nil, "\(text.debugDescription)") }
        #expect(JSONValue(json: Data([0x22, 0xFF, 0xFE, 0x22])) == nil, "invalid UTF-8 in a string")
        let limit = JSONValue.maximumDepth
        #expect(Self.read(String(repeating: "[", count: limit) + String(repeating: "]", count: limit)) != nil)
        #expect(Self.read(String(repeating: "[", count: limit + 2) + String(repeating: "]", count: limit + 2)) == nil)
        #expect(Self.read(String(repeating: "[", count: 100_000)) == nil, "a deep opening alone is refused, not a stack overflow")
    }
}
