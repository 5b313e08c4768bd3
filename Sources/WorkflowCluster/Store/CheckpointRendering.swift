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
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(Payload(snapshot: snapshot, stream: rendering))
    }

    /// The rendering kept in a checkpoint's payload; `nil` when it has none (written before the
    /// field existed) or it does not read.
    package static func kept(in payload: Data) -> CheckpointRendering? {
        (try? JSONDecoder().decode(Field.self, from: payload))?.stream
    }

    /// The snapshot's own fields, then `"stream"` in the same JSON object.
    private struct Payload: Encodable {
        var snapshot: TreeSnapshot
        var stream: CheckpointRendering?

        func encode(to encoder: any Encoder) throws {
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
