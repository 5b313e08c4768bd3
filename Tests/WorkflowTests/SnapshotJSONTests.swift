import Foundation
import Testing
@testable import Workflow

/// `TreeSnapshot.jsonBytes` writes the bytes `JSONEncoder` with sorted keys would, for trees of
/// every shape: stored snapshots and checkpoints stay readable by any build, old or new.
@Suite struct SnapshotJSONTests {
    /// Strings that exercise every escape: quotes, backslashes, slashes, control characters,
    /// non-ASCII and the empty string.
    static let awkwardStrings = ["", "plain", "a/b", "q\"uote", "back\\slash", "tab\tnew\nline\r", "\u{1}\u{1f}\u{8}\u{c}\u{7f}", "é ✓ \u{2028} 🚀"]

    /// A tree drawn at random (a failure prints the tree's JSON): up to `depth` levels, states absent or of any bytes.
    static func tree(_ generator: inout some RandomNumberGenerator, depth: Int) -> TreeSnapshot {
        let state: Data? = Bool.random(using: &generator) ? nil : Data((0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let children = depth == 0 ? [] : (0..<Int.random(in: 0...3, using: &generator)).map { _ in
            TreeSnapshot.Child(key: awkwardStrings.randomElement(using: &generator)!, snapshot: tree(&generator, depth: depth - 1))
        }
        return TreeSnapshot(
            workflowType: awkwardStrings.randomElement(using: &generator)! + "Workflow", stateVersion: Int.random(in: -2...1_000_000, using: &generator),
            state: state, children: children)
    }

    @Test func writesWhatJSONEncoderWrites() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let snapshot = Self.tree(&generator, depth: 3)
            let expected = try encoder.encode(snapshot)
            #expect(Data(snapshot.jsonBytes()) == expected, "\(String(decoding: expected, as: UTF8.self))")
            #expect(try TreeSnapshot.decode(from: snapshot.encoded()) == snapshot)
        }
    }

    @Test func anExtraFieldTakesItsSortedPlace() throws {
        let snapshot = TreeSnapshot(workflowType: "Root", state: Data([1, 2]), children: [])
        for (key, expected) in [
            ("stream", #"{"children":[],"state":"AQI=","stateVersion":1,"stream":7,"workflowType":"Root"}"#),
            ("aaa", #"{"aaa":7,"children":[],"state":"AQI=","stateVersion":1,"workflowType":"Root"}"#),
            ("zzz", #"{"children":[],"state":"AQI=","stateVersion":1,"workflowType":"Root","zzz":7}"#),
        ] as [(StaticString, String)] {
            let extra = TreeSnapshot.ExtraJSONField(key: key) { JSONText.appendInteger(7, to: &$0) }
            #expect(String(decoding: snapshot.jsonBytes(with: extra), as: UTF8.self) == expected)
        }
    }

    /// `JSONText.appendQuoted` (which copies the runs between escapes whole) writes what
    /// `JSONEncoder` writes, escaping slashes or not, for every control character and for long
    /// strings with escapes at their ends, in their middle and back to back.
    @Test func quotesAsJSONEncoderDoes() throws {
        let controls = String(decoding: (0..<0x20).map { UInt8($0) }, as: UTF8.self)
        let long = String(repeating: #"{"a":"b/c","d":[1,2]}"#, count: 40)
        let strings = Self.awkwardStrings + [controls, long, "\"\"\\\\//", "/start", "end/", "\"" + long + "\n", "ab\u{0}cd"]
        for escapingSlashes in [true, false] {
            let encoder = JSONEncoder()
            if !escapingSlashes { encoder.outputFormatting = [.withoutEscapingSlashes] }
            for string in strings {
                var out: [UInt8] = [UInt8(ascii: "[")]
                JSONText.appendQuoted(string, escapingSlashes: escapingSlashes, to: &out)
                out.append(UInt8(ascii: "]"))
                #expect(Data(out) == (try encoder.encode([string])), "\(string.debugDescription), escaping slashes: \(escapingSlashes)")
            }
        }
    }

    /// A state the direct writer encodes, and one holding a `Double` (left to `JSONEncoder`).
    struct PlainState: Codable, Equatable {
        var zeta = 3
        var alpha = "a/b"
        var middle: [Int?] = [1, nil]
        var nested = ["y": true, "x": false]
        var absent: String? = nil
    }

    struct FloatingState: Codable, Equatable {
        var zeta = 3
        var ratio = 0.25
    }

    /// A node's state is written with sorted keys by either encoder: the same bytes for the same
    /// state in every process (an unsorted `JSONEncoder` follows its dictionary's seeded order), and
    /// the bytes decode back to the state.
    @Test func aStateIsWrittenWithSortedKeys() throws {
        let sorted = JSONEncoder()
        sorted.outputFormatting = [.sortedKeys]
        let plain = try #require(StateCoding.encode(PlainState()))
        #expect(String(decoding: plain, as: UTF8.self) == #"{"alpha":"a\/b","middle":[1,null],"nested":{"x":false,"y":true},"zeta":3}"#)
        #expect(plain == (try sorted.encode(PlainState())))
        #expect(try JSONDecoder().decode(PlainState.self, from: plain) == PlainState())
        let floating = try #require(StateCoding.encode(FloatingState()))
        #expect(String(decoding: floating, as: UTF8.self) == #"{"ratio":0.25,"zeta":3}"#)
        #expect(try JSONDecoder().decode(FloatingState.self, from: floating) == FloatingState())
        #expect(StateCoding.encode(NotCodable()) == nil)
    }

    struct NotCodable {}
}
