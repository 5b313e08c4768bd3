import Foundation
import Synchronization
import Testing
@testable import WireProtocol

/// `decode(from:through:)` hands a closure the decoder of a payload's value: the binary codec
/// directly, any other codec through its `userInfo`. Either way the payload must be read whole,
/// and whatever the closure throws is reported as a `WireError`.
@Suite("Decoding through a closure")
struct DecodingClosureTests {
    @Test("The closure decodes the value, with the codec's userInfo", arguments: CodecID.allCases)
    func decodes(id: CodecID) throws {
        let key = try #require(SeesUserInfo.key)
        let codec = WireCodecs.codec(for: id, userInfo: [key: "through"])
        let seen = Recorder()
        try decode(codec, try codec.encode(42)) { decoder in
            let value = try decoder.singleValueContainer().decode(Int.self)
            seen.append("\(value) \(decoder.userInfo[key] as? String ?? "none")")
        }
        try decode(codec, try codec.encode(SeesUserInfo(seen: "x"))) { decoder in
            seen.append(try SeesUserInfo(from: decoder).seen)
        }
        #expect(seen.values == ["42 through", "through|through"])
    }

    @Test("What the closure throws is a WireError", arguments: CodecID.allCases)
    func closureErrors(id: CodecID) throws {
        let codec = WireCodecs.codec(for: id)
        let bytes = try codec.encode("not a number")
        #expect(throws: WireError.self) {
            try decode(codec, bytes) { decoder in _ = try decoder.singleValueContainer().decode(Int.self) }
        }
    }

    @Test("With a scratch: message after message, after failures, and a keyed value, as without one", arguments: CodecID.allCases)
    func reusingScratch(id: CodecID) throws {
        let codec = WireCodecs.codec(for: id)
        let scratch = WireCodingScratch()
        let seen = Recorder()
        func through(_ bytes: [UInt8], _ body: @escaping @Sendable (any Decoder) throws -> Void) throws {
            try bytes.withUnsafeBytes { try codec.decode(from: $0, through: body, reusing: scratch) }
        }
        let record: @Sendable (any Decoder) throws -> Void = { seen.append("\(try Int(from: $0))") }
        for value in [1, 300, -7] { try through(try codec.encode(value), record) }
        #expect(throws: WireError.self) { try through(try codec.encode("not a number"), record) }
        if id == .binary { #expect(throws: WireError.self) { try through(try codec.encode(5) + [0]) { _ = try Int(from: $0) } } }
        try through(try codec.encode(8), record)
        try through(try codec.encode(SeesUserInfo(seen: "x"))) { seen.append(try SeesUserInfo(from: $0).seen) }
        try through(try codec.encode(11), record)
        #expect(seen.values == ["1", "300", "-7", "8", "none|none", "11"])
    }

    @Test("The binary codec refuses bytes after the value")
    func trailingBytes() throws {
        let codec = BinaryWireCodec()
        let bytes = try codec.encode(7) + [0]
        #expect(throws: WireError.self) {
            try decode(codec, bytes) { decoder in _ = try decoder.singleValueContainer().decode(Int.self) }
        }
    }
}

private func decode(_ codec: any WireCodec, _ bytes: [UInt8], through body: @escaping @Sendable (any Decoder) throws -> Void) throws {
    try bytes.withUnsafeBytes { try codec.decode(from: $0, through: body) }
}

private final class Recorder: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ value: String) { storage.withLock { $0.append(value) } }
    var values: [String] { storage.withLock { $0 } }
}
