import Foundation

/// One settled rendering of the coordinator's root, ready to print.
///
/// Roots render different screens; the coordinator only needs to show them: as a text screen
/// for people (`--print-renderings text`) and as one JSON line for tests and tools
/// (`--print-renderings json`).
public struct RenderedFrame: Sendable, Equatable {
    /// A small text screen, possibly several lines.
    public var text: String
    /// The same as one line of JSON (no newlines).
    public var json: String

    /// Creates a frame.
    public init(text: String, json: String) {
        self.text = text
        self.json = json
    }

    /// The frame of any root, from its rendering's JSON: the text is the JSON pretty-printed,
    /// the line is `{"event":"rendering","root":NAME,"sequence":N,"rendering":JSON}`.
    package static func generic(root: String, rendering: RootRenderingJSON) -> RenderedFrame {
        let object = try? JSONSerialization.jsonObject(with: rendering.json, options: [.fragmentsAllowed])
        let pretty = object.flatMap {
            try? JSONSerialization.data(withJSONObject: $0, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        }
        let name = (try? JSONEncoder().encode(root)).map { String(decoding: $0, as: UTF8.self) } ?? "\"\""
        let compact = String(decoding: rendering.json, as: UTF8.self)
        return RenderedFrame(
            text: "=== \(root)\n" + String(decoding: pretty ?? rendering.json, as: UTF8.self),
            json: #"{"event":"rendering","root":\#(name),"sequence":\#(rendering.sequence),"rendering":\#(compact)}"#)
    }
}
