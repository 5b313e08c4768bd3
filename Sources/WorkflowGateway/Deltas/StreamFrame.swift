import Foundation

/// One frame of a tree's rendering stream: a settled rendering and its remote children's
/// statuses, with the messages that carry it — whole (`{"children", "rendering", "root",
/// "sequence"}`), or as the changes from an earlier frame (docs/WIRE-PROTOCOL.md, "Rendering
/// deltas").
struct StreamFrame: Sendable {
    var root: String
    /// The feed it is of (`RenderingFeed.run`).
    var run: String
    var sequence: UInt64
    /// The rendering's JSON bytes, as the session encoded them.
    var rendering: Data
    var children: [ChildStatusJSON]

    /// The whole frame; to a delta client it says the delta version the stream speaks, the run
    /// to resume from and the stream's `window`.
    func wholeMessage(deltas: Int?, window: Int) -> [UInt8] {
        RenderingMessage.bytes(root: root, sequence: sequence, json: rendering, children: children, deltas: deltas.map { ($0, run, window) })
    }

    /// `{"children": […], "from": BASE, "ops": […], "sequence": N}`: the changes from the frame
    /// `base`, the children's statuses only when they changed.
    func deltaMessage(from base: UInt64, changes: JSONDelta, childrenChanged: Bool) -> [UInt8] {
        var out: [UInt8] = Array("{".utf8)
        if childrenChanged {
            out += Array(#""children":"#.utf8) + RenderingMessage.childrenBytes(children) + Array(",".utf8)
        }
        out += Array(#""from":\#(base),"ops":"#.utf8)
        out += Array(changes.wire.bytes)
        out += Array(#","sequence":\#(sequence)}"#.utf8)
        return out
    }
}
