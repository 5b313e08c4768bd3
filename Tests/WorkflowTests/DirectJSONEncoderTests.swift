import Foundation
import Testing
@testable import Workflow

/// `DirectJSONEncoder` writes the bytes `JSONEncoder` writes with `.sortedKeys`, slashes escaped
/// or not, for values of every shape it takes; what it leaves to `JSONEncoder` it says so.
@Suite struct DirectJSONEncoderTests {
    struct Leaf: Codable, Equatable {
        var name: String
        var count: Int
        var small: Int8
        var big: UInt64
        var flag: Bool
        var maybe: String?
        var nothing: Int?
    }

    enum Choice: Codable, Equatable {
        case none
        case one(Leaf)
        case pair(a: Int32, b: [String])
    }

    struct Tree: Codable, Equatable {
        var leaves: [Leaf]
        var byName: [String: Leaf]
        var byNumber: [Int: [UInt16]]
        var choices: [Choice]
        var nested: [[Int64]]
        var children: [Tree]
        var optionals: [Bool?]
    }

    /// A type that writes its containers by hand: nested containers, a key written twice,
    /// `encodeNil`, a nested container asked for twice under one key.
    struct Manual: Encodable {
        enum Keys: String, CodingKey { case z, a, inner, list, again, nothing }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("first", forKey: .z)
            try container.encode("second", forKey: .z)
            try container.encodeNil(forKey: .nothing)
            var inner = container.nestedContainer(keyedBy: Keys.self, forKey: .inner)
            try inner.encode(1, forKey: .a)
            var innerAgain = container.nestedContainer(keyedBy: Keys.self, forKey: .inner)
            try innerAgain.encode(2, forKey: .z)
            var list = container.nestedUnkeyedContainer(forKey: .list)
            try list.encode("x")
            try list.encodeNil()
            var deeper = list.nestedContainer(keyedBy: Keys.self)
            try deeper.encode(true, forKey: .a)
            var deepest = list.nestedUnkeyedContainer()
            try deepest.encode(UInt8(7))
            try list.encode(Leaf(name: "l", count: -1, small: -8, big: .max, flag: false, maybe: nil, nothing: 3))
            let again = encoder.container(keyedBy: Keys.self)
            _ = again
        }
    }

    static let strings = ["", "plain", "a/b", "q\"uote", "back\\slash", "tab\tnew\nline\r", "\u{1}\u{1f}\u{8}\u{c}\u{7f}", "é ✓ \u{2028} 🚀", "e\u{301}", "Z", "_", "a10", "a9"]

    static func leaf(_ generator: inout SystemRandomNumberGenerator) -> Leaf {
        Leaf(
            name: strings.randomElement(using: &generator)!, count: Int.random(in: .min ... .max, using: &generator),
            small: Int8.random(in: .min ... .max, using: &generator), big: UInt64.random(in: 0 ... .max, using: &generator),
            flag: Bool.random(using: &generator), maybe: Bool.random(using: &generator) ? strings.randomElement(using: &generator) : nil,
            nothing: Bool.random(using: &generator) ? nil : Int.random(in: -5...5, using: &generator))
    }

    static func tree(_ generator: inout SystemRandomNumberGenerator, depth: Int) -> Tree {
        func some<T>(_ make: (inout SystemRandomNumberGenerator) -> T) -> [T] {
            (0..<Int.random(in: 0...3, using: &generator)).map { _ in make(&generator) }
        }
        return Tree(
            leaves: some { leaf(&$0) },
            byName: Dictionary(some { (strings.randomElement(using: &$0)!, leaf(&$0)) }, uniquingKeysWith: { a, _ in a }),
            byNumber: Dictionary(some { (Int.random(in: -20...20, using: &$0), [UInt16.random(in: 0...9, using: &$0)]) }, uniquingKeysWith: { a, _ in a }),
            choices: some { generator in
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: .none
                case 1: .one(leaf(&generator))
                default: .pair(a: Int32.random(in: -9...9, using: &generator), b: [strings.randomElement(using: &generator)!])
                }
            },
            nested: some { generator in [Int64.random(in: -3...3, using: &generator)] },
            children: depth == 0 ? [] : some { tree(&$0, depth: depth - 1) },
            optionals: some { generator in Bool.random(using: &generator) ? nil : Bool.random(using: &generator) })
    }

    static func foundation(escapingSlashes: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = escapingSlashes ? [.sortedKeys] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    @Test func writesWhatJSONEncoderWrites() throws {
        var generator = SystemRandomNumberGenerator()
        for escapingSlashes in [false, true] {
            let foundation = Self.foundation(escapingSlashes: escapingSlashes)
            let direct = DirectJSONEncoder(escapingSlashes: escapingSlashes)
            for _ in 0..<200 {
                let tree = Self.tree(&generator, depth: 2)
                let expected = try foundation.encode(tree)
                #expect(Data(try direct.encode(tree)) == expected, "\(String(decoding: expected, as: UTF8.self))")
            }
            #expect(Data(try direct.encode(Manual())) == (try foundation.encode(Manual())))
            for string in Self.strings {
                #expect(Data(try direct.encode(string)) == (try foundation.encode(string)))
                #expect(Data(try direct.encode([string: [string]])) == (try foundation.encode([string: [string]])))
            }
            #expect(Data(try direct.encode(Optional<Int>.none)) == (try foundation.encode(Optional<Int>.none)))
            #expect(Data(try direct.encode([Int]())) == (try foundation.encode([Int]())))
        }
    }

    @Test func theUserInfoReachesTheValue() throws {
        struct Reads: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                try container.encode(encoder.userInfo[CodingUserInfoKey(rawValue: "k")!] as? String ?? "missing")
            }
        }
        let bytes = try DirectJSONEncoder(escapingSlashes: false, userInfo: [CodingUserInfoKey(rawValue: "k")!: "found"]).encode([Reads()])
        #expect(String(decoding: bytes, as: UTF8.self) == #"["found"]"#)
    }

    @Test func leavesToJSONEncoderWhatItFormatsByAStrategy() {
        struct Super: Encodable {
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: DirectJSONEncoderTests.Manual.Keys.self)
                try "x".encode(to: container.superEncoder())
            }
        }
        struct Nothing: Encodable {
            func encode(to encoder: any Encoder) throws {}
        }
        let direct = DirectJSONEncoder(escapingSlashes: false)
        #expect(throws: DirectJSONEncoder.Unsupported.self) { try direct.encode([1.5]) }
        #expect(throws: DirectJSONEncoder.Unsupported.self) { try direct.encode(["a": Float(1)]) }
        #expect(throws: DirectJSONEncoder.Unsupported.self) { try direct.encode([Date(timeIntervalSince1970: 0)]) }
        #expect(throws: DirectJSONEncoder.Unsupported.self) { try direct.encode(["d": Data([1])]) }
        #expect(throws: DirectJSONEncoder.Unsupported.self) { try direct.encode([URL(string: "http://x/")!]) }
        #expect(throws: DirectJSONEncoder.Unsupported.self) { try direct.encode(Super()) }
        #expect(throws: DirectJSONEncoder.Unsupported.self) { try direct.encode(Nothing()) }
        // Nothing encoded inside a value: an empty object, as `JSONEncoder` writes it.
        #expect((try? direct.encode([Nothing()])).map { Data($0) } == (try? Self.foundation(escapingSlashes: false).encode([Nothing()])))
        #expect((try? direct.encode([Nothing()])).map { String(decoding: $0, as: UTF8.self) } == "[{}]")
    }
}
