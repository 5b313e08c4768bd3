import Foundation
import Synchronization
import WorkflowCluster
import WorkflowRemote

/// One tree's rendering stream, made once for all its clients: each settled rendering with the
/// statuses of the tree's remote children at that moment (`StreamFrame`), and the last few
/// frames kept so a delta client gets only the changes from the frame it has.
///
/// One reader of the session's renderings reads its tree's child statuses (as the runtime's loop
/// published them, without a job on the loop) once per rendering it reads, and hands the frame
/// to every client's `RenderingStreamClient` (a slow client skips frames; so does the feed
/// itself, when renderings come faster than it makes frames). A status change a page must see
/// comes with a rendering: a remote child that fails, recovers or starts running makes its
/// parent render again. It keeps the `kept` latest frames (their bytes only: a frame is read
/// into a `JSONValue` when a delta needs it), which bound what a resuming client can be sent as
/// a delta; and the delta from each frame clients have to the latest, computed once.
final class RenderingFeed: Sendable {
    private struct History {
        var frames: [StreamFrame] = []
        /// Frames read as JSON, by sequence (the latest and the bases of recent deltas).
        var parsed: [UInt64: JSONValue] = [:]
        /// The delta messages to the latest frame, by the sequence they start from.
        var deltas: [UInt64: [UInt8]] = [:]
        var deltasTo: UInt64 = 0
        /// The frame kept with the restored checkpoint, whose children's statuses are not known
        /// (a delta from it says them).
        var restored: UInt64?
    }

    private let frames = LatestValueBroadcast<StreamFrame>()
    private let history = Mutex(History())
    private let kept: Int
    /// This feed's name: a client resumes with a delta only from a frame of this run
    /// (`StreamRequest.run`). A durable tree's run is kept in its checkpoints
    /// (`ResumableStream`), so it is the same after a restart, on a standby and after a
    /// reactivation; another tree's is random.
    let run: String

    /// Starts reading `session`'s renderings, keeping the `kept` latest frames; the feed ends
    /// when the session stops (then `ended` runs).
    init(
        session: any ClusterRootSession, runtime: RemoteRuntime?, scope: TreeScope, kept: Int,
        ended: @escaping @Sendable () -> Void = {}
    ) {
        self.kept = max(1, kept)
        let resumable = (session as? any ResumableRenderings)?.resumableStream
        self.run = resumable?.run ?? String(UInt64.random(in: 0...UInt64.max), radix: 36)
        if let restored = resumable?.restored {
            // The frame a client had when the coordinator stopped (the last committed one):
            // a client resuming from it gets the changes after it.
            let frame = StreamFrame(root: session.name, run: run, sequence: restored.sequence, rendering: restored.json, children: [])
            history.withLock { history in
                history.frames = [frame]
                history.restored = restored.sequence
            }
        }
        Task { [self] in
            await self.follow(session: session, runtime: runtime, scope: scope)
            ended()
        }
    }

    /// Makes a frame of each of the session's renderings, keeps it, and hands it to the
    /// clients, until the session stops.
    private func follow(session: any ClusterRootSession, runtime: RemoteRuntime?, scope: TreeScope) async {
        for await rendering in session.renderings() {
            let children = runtime.map { scope.childStatuses(in: $0) } ?? []
            let frame = StreamFrame(root: session.name, run: run, sequence: rendering.sequence, rendering: rendering.json, children: children)
            history.withLock { history in
                history.frames.removeAll { $0.sequence >= frame.sequence }
                history.frames.append(frame)
                if history.frames.count > kept { history.frames.removeFirst(history.frames.count - kept) }
                // A few entries at most: no set of the kept sequences made per frame.
                let frames = history.frames
                history.parsed = history.parsed.filter { parsed in frames.contains { $0.sequence == parsed.key } }
            }
            frames.publish(frame)
        }
        frames.finish()
    }

    /// The frames, the latest first; ends when the session stops.
    func subscribe() -> AsyncStream<StreamFrame> {
        frames.subscribe()
    }

    /// The frames, as `subscribe()`, and a function that hands this reader the latest frame
    /// again (`LatestValueBroadcast.subscription()`).
    func subscription() -> (frames: AsyncStream<StreamFrame>, again: @Sendable () -> Void) {
        let (values, again) = frames.subscription()
        return (values, again)
    }

    /// The latest frame, once there is one.
    var latest: StreamFrame? { frames.latest }

    /// The message bringing a client that has the frame `base` to `frame`: the changes (with
    /// the children's statuses when they changed), or `nil` when `base` is no longer kept or
    /// the changes would not be smaller than the whole frame.
    func delta(from base: UInt64, to frame: StreamFrame) -> [UInt8]? {
        enum Cached { case baseNotKept, known([UInt8]?), unknown }
        let cached: Cached = history.withLock { history in
            guard history.frames.contains(where: { $0.sequence == base }) else { return .baseNotKept }
            guard history.deltasTo == frame.sequence, let bytes = history.deltas[base] else { return .unknown }
            return .known(bytes.isEmpty ? nil : bytes)
        }
        switch cached {
        case .baseNotKept: return nil
        case .known(let message): return message
        case .unknown: break
        }
        guard let old = parsed(base), let new = parsed(frame.sequence, else: frame) else { return nil }
        let childrenChanged = history.withLock { history in
            history.restored == base || history.frames.first { $0.sequence == base }?.children != frame.children
        }
        let changes = JSONDelta.between(old, new)
        let message = frame.deltaMessage(from: base, changes: changes, childrenChanged: childrenChanged)
        // Against the whole message (the children's statuses included, which a delta carries
        // when they changed, as after a restart).
        let whole = frame.rendering.count + (childrenChanged ? RenderingMessage.childrenBytes(frame.children).count : 0) + 64
        let useful = message.count < whole ? message : nil
        history.withLock { history in
            if history.deltasTo != frame.sequence {
                history.deltas = [:]
                history.deltasTo = frame.sequence
            }
            history.deltas[base] = useful ?? []
        }
        return useful
    }

    /// The kept frame of `sequence` as JSON (`frame` when it is not kept: the latest, being
    /// published), read once.
    private func parsed(_ sequence: UInt64, else frame: StreamFrame? = nil) -> JSONValue? {
        let known: (JSONValue?, Data?) = history.withLock { history in
            if let value = history.parsed[sequence] { return (value, nil) }
            return (nil, history.frames.first { $0.sequence == sequence }?.rendering ?? frame?.rendering)
        }
        if let value = known.0 { return value }
        guard let bytes = known.1, let value = JSONValue(json: bytes.isEmpty ? Data("null".utf8) : bytes) else { return nil }
        history.withLock { history in
            if history.frames.contains(where: { $0.sequence == sequence }) { history.parsed[sequence] = value }
        }
        return value
    }

    /// The message for `rendering`, with the statuses of the children of the tree `scope` names
    /// as the runtime has them now (a status change is published before the rendering that
    /// shows it, so it is never older than `rendering`).
    static func message(session: any ClusterRootSession, rendering: RootRenderingJSON, runtime: RemoteRuntime?, scope: TreeScope) async
        -> [UInt8]
    {
        let children = runtime.map { scope.childStatuses(in: $0) } ?? []
        return RenderingMessage.bytes(root: session.name, sequence: rendering.sequence, json: rendering.json, children: children)
    }
}
