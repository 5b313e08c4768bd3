import Foundation
@_spi(WorkflowRuntime) import Workflow

extension RemoteWorkflow.State: SnapshotJSONWriting {
    /// `{"snapshot":…,"pendingEvents":[{"token":…,"bytes":…}],"rendering":…}`, the fields
    /// `encode(to:)` writes, written directly: every checkpoint of a tree with remote children
    /// encodes each one's stand-in, whose rendering and pending events are most of the bytes.
    package func snapshotJSON() -> [UInt8] {
        let (snapshot, events, rendering) = saved
        var out: [UInt8] = []
        out.reserveCapacity(64 + (rendering?.count ?? 0) * 4 / 3 + events.count * 48)
        out.append(UInt8(ascii: "{"))
        if let snapshot {
            JSONText.appendKey("snapshot", to: &out)
            out.append(contentsOf: snapshot.jsonBytes())
            out.append(UInt8(ascii: ","))
        }
        JSONText.appendKey("pendingEvents", to: &out)
        out.append(UInt8(ascii: "["))
        for (index, event) in events.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "{"))
            JSONText.appendKey("token", to: &out)
            JSONText.appendQuoted(event.token, escapingSlashes: true, to: &out)
            out.append(UInt8(ascii: ","))
            JSONText.appendKey("bytes", to: &out)
            JSONText.appendBase64(event.bytes, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        if let rendering {
            out.append(UInt8(ascii: ","))
            JSONText.appendKey("rendering", to: &out)
            JSONText.appendBase64(Data(rendering), to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
