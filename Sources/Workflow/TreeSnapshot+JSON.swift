import Foundation

extension TreeSnapshot {
    /// A top-level field written into a snapshot's JSON object beside its own (a checkpoint
    /// keeps its rendering there: `CheckpointRendering`), in its sorted place.
    package struct ExtraJSONField {
        /// The field's name; fixed ASCII.
        package var key: StaticString
        /// Appends the field's JSON value.
        package var write: (inout [UInt8]) -> Void

        package init(key: StaticString, write: @escaping (inout [UInt8]) -> Void) {
            self.key = key
            self.write = write
        }
    }

    /// The snapshot's JSON exactly as `JSONEncoder` with `.sortedKeys` writes it (`encoded()`),
    /// written directly: a durable tree writes one per checkpoint, and the encoder's containers
    /// cost more than the bytes. `extra`, if any, is written among the snapshot's own keys in
    /// sorted order, as an encoder of a type with that field too would.
    package func jsonBytes(with extra: ExtraJSONField? = nil) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + (state?.count ?? 0) * 4 / 3)
        appendJSON(to: &out, extra: extra)
        return out
    }

    private func appendJSON(to out: inout [UInt8], extra: ExtraJSONField?) {
        // The keys, sorted: children, state, stateVersion, workflowType.
        var pending = extra
        var first = true
        func field(_ key: StaticString, _ write: (inout [UInt8]) -> Void) {
            if let extra = pending, Self.sorts(extra.key, before: key) {
                pending = nil
                field(extra.key, extra.write)
            }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSONText.appendKey(key, to: &out)
            write(&out)
        }
        out.append(UInt8(ascii: "{"))
        field("children") { out in
            out.append(UInt8(ascii: "["))
            for (index, child) in children.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(contentsOf: #"{"key":"#.utf8)
                JSONText.appendQuoted(child.key, escapingSlashes: true, to: &out)
                out.append(contentsOf: #","snapshot":"#.utf8)
                child.snapshot.appendJSON(to: &out, extra: nil)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
        }
        if let state {
            field("state") { JSONText.appendBase64(state, to: &$0) }
        }
        field("stateVersion") { JSONText.appendInteger(stateVersion, to: &$0) }
        field("workflowType") { JSONText.appendQuoted(workflowType, escapingSlashes: true, to: &$0) }
        if let extra = pending {
            out.append(UInt8(ascii: ","))
            JSONText.appendKey(extra.key, to: &out)
            extra.write(&out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// Whether `a` sorts before `b` as `JSONEncoder`'s `.sortedKeys` orders keys (by their
    /// UTF-8 bytes, for these ASCII names).
    private static func sorts(_ a: StaticString, before b: StaticString) -> Bool {
        a.withUTF8Buffer { a in b.withUTF8Buffer { b in a.lexicographicallyPrecedes(b) } }
    }
}
