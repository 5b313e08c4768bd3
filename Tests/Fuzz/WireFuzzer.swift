// libFuzzer entry point for the wire protocol decoders. Not a SwiftPM target: scripts/fuzz.sh
// compiles it together with Sources/WireProtocol/*.swift (one module, so no import).
//
// Input layout: byte 0 selects the target, the rest is the data.
//   even → envelope: byte 1 = frame count (mod 8), then each frame = 1 length byte + bytes
//          (the last frame takes whatever remains);
//   odd  → binary codec: the rest decoded as one of the fuzz types (byte 0 / 2 mod 6 picks).
// Any decode may fail with a WireError; nothing may crash, trap or leak.

import Foundation

enum FuzzColor: String, Codable { case red, green, blue }

enum FuzzShape: Codable {
    case point
    case circle(radius: Double)
    case polygon([FuzzPoint], closed: Bool?)
    indirect case group(FuzzShape, FuzzShape)
}

struct FuzzPoint: Codable { var x: Int32; var y: Int64 }

struct FuzzRecord: Codable {
    var id: UInt64
    var name: String
    var tags: [String]
    var scores: [String: Double]
    var byID: [Int: String]
    var color: FuzzColor?
    var nested: Int??
    var blob: Data
    var shapes: [FuzzShape]
    var when: Date
}

struct FuzzTree: Codable { var label: String; var children: [FuzzTree] }

func fuzzEnvelope(_ data: UnsafeRawBufferPointer) {
    var cursor = 0
    guard cursor < data.count else { return }
    let frameCount = Int(data[cursor] % 8)
    cursor += 1
    var frames: [UnsafeRawBufferPointer] = []
    for index in 0..<frameCount {
        if index == frameCount - 1 || cursor >= data.count {
            frames.append(UnsafeRawBufferPointer(rebasing: data[min(cursor, data.count)...]))
            cursor = data.count
        } else {
            let length = min(Int(data[cursor]), data.count - cursor - 1)
            cursor += 1
            frames.append(UnsafeRawBufferPointer(rebasing: data[cursor..<(cursor + length)]))
            cursor += length
        }
    }
    let limits = WireLimits(maxFrameBytes: 4096, maxPayloadFrames: 4, maxNodePathBytes: 64)
    if let envelope = try? Envelope(frames: frames, limits: limits) {
        // Whatever decodes must re-encode to the same frames.
        guard let reencoded = try? envelope.encodeFrames(limits: limits) else { fatalError("re-encode failed") }
        let original = frames.map { Array($0) }
        if reencoded != original { fatalError("envelope round trip changed the frames") }
        for payload in envelope.payloads {
            _ = try? WireCodecs.codec(for: envelope.codec, limits: limits).decode(FuzzRecord.self, from: payload)
        }
    }
}

func fuzzBinary(_ selector: UInt8, _ data: UnsafeRawBufferPointer) {
    let codec = BinaryWireCodec(limits: WireLimits(maxFrameBytes: 1 << 16, maxCollectionCount: 1 << 12, maxDepth: 32))
    switch (selector / 2) % 6 {
    case 0: roundTripIfDecodes(FuzzRecord.self, data, codec)
    case 1: roundTripIfDecodes(FuzzShape.self, data, codec)
    case 2: roundTripIfDecodes(FuzzTree.self, data, codec)
    case 3: roundTripIfDecodes([String: [Int?]].self, data, codec)
    case 4: roundTripIfDecodes([FuzzPoint: String].self, data, codec)
    default: roundTripIfDecodes(Decimal.self, data, codec)
    }
}

extension FuzzPoint: Hashable {}

/// Decodes; when that succeeds, the value must encode and decode again.
func roundTripIfDecodes<T: Codable>(_ type: T.Type, _ data: UnsafeRawBufferPointer, _ codec: BinaryWireCodec) {
    guard let value = try? codec.decode(type, from: data) else { return }
    guard let bytes = try? codec.encode(value) else { return }  // e.g. over a limit
    if (try? codec.decode(type, from: bytes)) == nil { fatalError("re-decode of re-encoded value failed") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count > 0 else { return 0 }
    let data = UnsafeRawBufferPointer(start: start, count: count)
    let selector = data[0]
    let rest = UnsafeRawBufferPointer(rebasing: data[1...])
    if selector % 2 == 0 {
        fuzzEnvelope(rest)
    } else {
        fuzzBinary(selector, rest)
    }
    return 0
}
