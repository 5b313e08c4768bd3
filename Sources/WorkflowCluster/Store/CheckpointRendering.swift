import Foundation
import Workflow

/// The rendering a checkpoint reflects, kept inside the checkpoint's payload so that a client
/// resuming a durable tree's stream after a restart, a standby's takeover or a reactivation
/// gets only the changes after it (docs/WIRE-PROTOCOL.md, "Resuming across restarts").
///
/// It rides in the checkpoint's `snapshot` bytes as one more top-level field (`"stream"`) of
/// the tree snapshot's JSON, not in a column of its own: the store's schema (`StoreSchema`)
/// stays as it is, a coordinator that does not know the field ignores it (a JSON decoder skips
/// unknown keys), and a checkpoint written before it existed simply has none.
package struct CheckpointRendering: Codable, Sendable, Equatable {
    /// The tree's stream run (`StreamRequest.run` in the gateway): drawn at random for the
    /// tree's first checkpoint, then carried by every later one, so it stays the same across
    /// restarts and on a standby, and a tree begun again in a new store gets a new one (its
    /// sequences start again from 1, and a client's frame of an old tree is never diffed).
    package var run: String
    /// The sequence of the rendering (the checkpoint's `renderingSequence`).
    package var sequence: UInt64
    /// The rendering's JSON, as clients were sent it (`nil`: none could be encoded).
    package var rendering: Data?

    /// Creates a value.
    package init(run: String, sequence: UInt64, rendering: Data?) {
        self.run = run
        self.sequence = sequence
        self.rendering = rendering
    }

    /// A new run, random.
    package static func newRun() -> String {
        String(UInt64.random(in: 0...UInt64.max), radix: 36)
    }

    /// `snapshot` encoded as `TreeSnapshot.encoded()` does, with `rendering` as its `"stream"`
    /// field.
    package static func payload(_ snapshot: TreeSnapshot, with rendering: CheckpointRendering?) throws -> Data {
        // Written directly (one per checkpoint, so one per durable event): the same bytes as
        // `JSONEncoder` with sorted keys would write for `Payload`.
        Data(snapshot.jsonBytes(with: rendering.map { rendering in .init(key: "stream", write: rendering.appendJSON) }))
    }

    /// `{"rendering":…,"run":…,"sequence":…}` as `JSONEncoder` with sorted keys writes it.
    private func appendJSON(to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        if let rendering {
            JSONText.appendKey("rendering", to: &out)
            JSONText.appendBase64(rendering, to: &out)
            out.append(UInt8(ascii: ","))
        }
        JSONText.appendKey("run", to: &out)
        JSONText.appendQuoted(run, escapingSlashes: true, to: &out)
        out.append(UInt8(ascii: ","))
        JSONText.appendKey("sequence", to: &out)
        JSONText.appendInteger(sequence, to: &out)
        out.append(UInt8(ascii: "}"))
    }

    /// The rendering kept in a checkpoint's payload; `nil` when it has none (written before the
    /// field existed) or it does not read.
    package static func kept(in payload: Data) -> CheckpointRendering? {
        (try? JSONDecoder().decode(Field.self, from: payload))?.stream
    }

    /// The snapshot's own fields, then `"stream"` in the same JSON object: what `payload`
    /// writes, through `JSONEncoder` (the tests' oracle for it).
    package struct Payload: Encodable {
        package var snapshot: TreeSnapshot
        package var stream: CheckpointRendering?

        package init(snapshot: TreeSnapshot, stream: CheckpointRendering?) {
            self.snapshot = snapshot
            self.stream = stream
        }

        package func encode(to encoder: any Encoder) throws {
            try snapshot.encode(to: encoder)
            var container = encoder.container(keyedBy: Field.CodingKeys.self)
            try container.encodeIfPresent(stream, forKey: .stream)
        }
    }

    /// Reads only `"stream"` from a payload.
    private struct Field: Decodable {
        var stream: CheckpointRendering?
        enum CodingKeys: String, CodingKey { case stream }
    }
}
