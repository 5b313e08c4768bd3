// Writes the fuzz seed corpus (Tests/Fuzz/corpus/): small valid inputs for each fuzz target,
// so libFuzzer starts from well-formed messages and mutates from there. Regenerate with:
//
//   swiftc -parse-as-library -swift-version 6 -module-name WireSeeds \
//       Sources/WireProtocol/*.swift Tests/Fuzz/WireFuzzer.swift Tests/Fuzz/SeedCorpus.swift \
//       -o /tmp/wire-seeds && /tmp/wire-seeds Tests/Fuzz/corpus
//
// (WireFuzzer.swift is linked only for the fuzz types; its entry point is unused here.)

import Foundation

@main
struct SeedCorpus {
    static func main() throws {
        let directory = CommandLine.arguments.dropFirst().first ?? "Tests/Fuzz/corpus"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var seeds: [(String, [UInt8])] = []
        let codec = BinaryWireCodec()

        // Envelopes (selector byte even): frame count, then length-prefixed frames.
        func envelope(_ envelope: Envelope) throws -> [UInt8] {
            let frames = try envelope.encodeFrames()
            var bytes: [UInt8] = [0, UInt8(frames.count)]
            for (index, frame) in frames.enumerated() {
                if index < frames.count - 1 { bytes.append(UInt8(frame.count)) }
                bytes += frame
            }
            return bytes
        }
        let record = FuzzRecord(
            id: 7, name: "inbox", tags: ["a", "🙂"], scores: ["x": 1.5], byID: [1: "one"], color: .green,
            nested: 3, blob: Data([1, 2, 3]), shapes: [.circle(radius: 2)], when: Date(timeIntervalSinceReferenceDate: 0))
        for (index, kind) in MessageKind.allCases.enumerated() {
            let payloads: [[UInt8]] = index % 3 == 0 ? [] : [try codec.encode(record)].filter { $0.count < 250 }
            seeds.append(("envelope-\(kind)", try envelope(Envelope(
                kind: kind, correlationID: UInt64(index), sequence: UInt64(index + 1), acknowledged: UInt64(index),
                nodePath: "Root:/Child:\(index)", payloads: payloads))))
        }
        seeds.append(("envelope-json", try envelope(Envelope(
            kind: .rendering, codec: .json, nodePath: "A", payloads: [try JSONWireCodec().encode(record)].filter { $0.count < 250 }))))

        // Binary payloads (selector byte odd; (selector / 2) % 6 picks the type).
        seeds.append(("binary-record", [1] + (try codec.encode(record))))
        seeds.append(("binary-shape", [3] + (try codec.encode(FuzzShape.group(.point, .polygon([FuzzPoint(x: 1, y: -2)], closed: true))))))
        seeds.append(("binary-tree", [5] + (try codec.encode(FuzzTree(label: "r", children: [FuzzTree(label: "c", children: [])])))))
        seeds.append(("binary-dict", [7] + (try codec.encode(["k": [1, nil, 3]] as [String: [Int?]]))))
        seeds.append(("binary-pointdict", [9] + (try codec.encode([FuzzPoint(x: 0, y: 0): "origin"]))))
        seeds.append(("binary-decimal", [11] + (try codec.encode(Decimal(string: "-3.1415") ?? 0))))

        for (name, bytes) in seeds {
            try Data(bytes).write(to: URL(fileURLWithPath: directory).appendingPathComponent("seed-\(name)"))
        }
        print("wrote \(seeds.count) seeds to \(directory)")
    }
}
