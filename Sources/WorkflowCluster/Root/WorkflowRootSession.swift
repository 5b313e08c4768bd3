import Foundation
import Logging
import Synchronization
import Tracing
import WorkflowRemote
@_spi(WorkflowRuntime) import Workflow

/// Hosts any root workflow whose rendering is `Encodable` and shows it as JSON.
///
/// Each settled rendering is encoded on the host's loop as soon as it is published, with a
/// `JSONEncoder` whose sink exporter (see `SinkCoding.swift`) writes every sink as its token and
/// records where the token delivers. So the JSON a client reads and the tokens it may send to
/// always belong to the same rendering, and the coordinator needs no knowledge of the root's
/// types. Typed code in the same process can still use `host` directly.
public final class WorkflowRootSession<Root: Workflow & Sendable>: ClusterRootSession, ResumableRenderings
where Root.Rendering: Encodable & Sendable, Root.Output: Sendable {
    /// A settled rendering with its JSON form.
    struct Encoded: Sendable {
        var rendering: Root.Rendering
        var json: RootRenderingJSON
    }

    /// The name the root is registered under.
    public let name: String
    /// The root's host (typed access for code in the coordinator's process).
    public let host: WorkflowHost<Root>
    private let published: LatestValueBroadcast<Encoded>
    private let publishedJSON: LatestValueBroadcast<RootRenderingJSON>
    private let tokens: SinkTokenTable
    private let frames: @Sendable (Root.Rendering, RootRenderingJSON) -> RenderedFrame
    /// The group commit to the coordinator's store (`nil`: no store, nothing is durable).
    private let durability: CheckpointCommitter?
    /// The commit task, while the session runs with a store.
    private let committing: Task<Void, Never>?
    /// What this tree's sink tokens start with (`TreeMark`; `nil`: the shared root).
    private let tokenMark: String?

    /// Starts `workflow` (from `snapshot` when restoring) on `loop` and encodes its first
    /// rendering before returning (on a `SessionLoop`, once its first pass settled, which may be
    /// later: `renderings()` yields it).
    ///
    /// - Parameters:
    ///   - name: the name it is registered under (shown in generic frames).
    ///   - workflow: the root workflow.
    ///   - snapshot: a tree snapshot to restore the root and its children from (`--restore`).
    ///   - loop: the loop to run on: the coordinator's `RemoteRuntime`, so the root can have
    ///     remote children; by default the host starts its own thread.
    ///   - observers: hooks the host reports to (e.g. `WorkflowMetricsObserver`).
    ///   - frames: how to print a rendering; default `RenderedFrame.generic`.
    ///   - logger: where a rendering that cannot be encoded is reported.
    ///   - retainedTokens: how many tokens of earlier renderings stay usable (a client may act on
    ///     a screen a few renderings old); older ones answer `RootEventError.staleToken`.
    public convenience init(
        name: String, workflow: Root, snapshot: TreeSnapshot? = nil, loop: (any RuntimeLoop)? = nil,
        observers: [any WorkflowObserver] = [], frames: (@Sendable (Root.Rendering, RootRenderingJSON) -> RenderedFrame)? = nil,
        logger: Logger = Logger(label: "workflow.cluster.root"), retainedTokens: Int = 4096
    ) {
        self.init(
            name: name, workflow: workflow, snapshot: snapshot, loop: loop, observers: observers, frames: frames, logger: logger,
            retainedTokens: retainedTokens, durability: nil)
    }

    /// Like the public initializer; with `durability`, every accepted event and every published
    /// rendering waits for a committed checkpoint that reflects it (see `CheckpointCommitter`).
    /// Renderings are numbered after `renderingSequence` (a reactivated session's last).
    package init(
        name: String, workflow: Root, snapshot: TreeSnapshot?, loop: (any RuntimeLoop)?, observers: [any WorkflowObserver],
        frames: (@Sendable (Root.Rendering, RootRenderingJSON) -> RenderedFrame)?, logger: Logger, retainedTokens: Int,
        durability: CheckpointCommitter?, renderingSequence: UInt64 = 0, tokenMark: String? = nil
    ) {
        self.tokenMark = tokenMark
        self.name = name
        self.durability = durability
        self.frames = frames ?? { _, json in RenderedFrame.generic(root: name, rendering: json) }
        let published = LatestValueBroadcast<Encoded>()
        let publishedJSON = LatestValueBroadcast<RootRenderingJSON>()
        let tokens = SinkTokenTable(retainedLimit: retainedTokens)
        self.published = published
        self.publishedJSON = publishedJSON
        self.tokens = tokens
        let encoder = RenderingEncoder(root: name, logger: logger, tokenMark: tokenMark, after: max(durability?.restored?.renderingSequence ?? 0, renderingSequence))
        // With a store, a settled rendering waits here until a checkpoint reflecting it commits.
        let unpublished = PendingPublication<Encoded>()
        let host = WorkflowHost(
            workflow: workflow, observers: observers, snapshot: snapshot, loop: loop,
            listener: HostListener(
                onRendering: { rendering in
                    guard let (json, deliveries) = encoder.encode(rendering) else { return }
                    // Tokens first: once a client can read the JSON, its tokens deliver.
                    tokens.install(deliveries)
                    // The first rendering is of the state the session started from (fresh, or
                    // the committed checkpoint it restored): a crash cannot take it back, so it
                    // is served at once. (It may come after the start returns: a session's pass
                    // settles without holding the loop, `SessionLoop`.)
                    if durability != nil, published.latest != nil {
                        unpublished.set(Encoded(rendering: rendering, json: json))
                    } else {
                        published.publish(Encoded(rendering: rendering, json: json))
                        publishedJSON.publish(json)
                    }
                    durability?.renderingSettled()
                },
                onOutput: { _ in }))
        self.host = host
        guard let durability else {
            committing = nil
            return
        }
        // A session's capture first waits (bounded) for its remote children to acknowledge the
        // events it commits: then one checkpoint holds them and the rendering their answers make.
        let sessionLoop = host.loop as? SessionLoop
        committing = Task {
            await durability.run {
                await withCheckedContinuation { (continuation: CheckedContinuation<CheckpointCommitter.Capture, Never>) in
                    host.loop.execute {
                        guard let sessionLoop else { return capture() }
                        // Applied first: the events it waits for are recorded for their children.
                        host.drainOnLoop()
                        sessionLoop.whenEventsAcknowledged(within: durability.acknowledgementWait, capture)
                    }
                    @Sendable func capture() {
                        // Every event queued before this job is applied and rendered now, so the
                        // snapshot reflects it, and the rendering taken is the one it makes.
                        host.drainOnLoop()
                        let snapshot = host.snapshotOnLoop()
                        let rendering = unpublished.take()
                        durability.renderingTaken()
                        let sequence = encoder.latestSequence
                        // The JSON of the rendering of `sequence`, kept with the checkpoint.
                        let kept = [rendering?.json, publishedJSON.latest, durability.restoredRendering].lazy.compactMap { $0 }
                            .first { $0.sequence == sequence }
                        continuation.resume(
                            returning: CheckpointCommitter.Capture(snapshot: snapshot, renderingSequence: sequence, rendering: kept?.json) {
                                guard let rendering else { return }
                                published.publish(rendering)
                                publishedJSON.publish(rendering.json)
                            })
                    }
                }
            }
        }
    }

    /// The stream's run and restored rendering, with a store.
    package var resumableStream: ResumableStream? {
        durability.map { ResumableStream(run: $0.streamRun, restored: $0.restoredRendering) }
    }

    /// The latest settled rendering as JSON (sequence 0 and `null` if none could be encoded yet).
    public var latestRendering: RootRenderingJSON {
        publishedJSON.latest ?? RootRenderingJSON(sequence: 0, json: Data("null".utf8))
    }

    /// Each settled rendering as JSON, the latest first, newest only for a slow reader.
    public func renderings() -> AsyncStream<RootRenderingJSON> {
        publishedJSON.subscribe()
    }

    /// Decodes `json` as the event of the sink `token` names in the latest rendering and sends
    /// it there; see `RootEventError` for each way it can fail.
    public func send(event json: Data, to token: String) async throws(RootEventError) {
        // A token of another tree (another session's, or the shared root's) is unknown here.
        guard TreeMark.token(token, belongsTo: tokenMark) else { throw .unknownToken(token) }
        let delivery = try tokens.delivery(for: token).get()
        let accepted: Bool
        do {
            accepted = try JSONEventDelivery.deliver(json, through: delivery)
        } catch {
            throw .undecodableEvent(token: token, reason: DecodingFailureWords.reason(error))
        }
        guard accepted else { throw .refused(token: token) }
        guard let durability else { return }
        // The wait for the commit, as a span of the caller's trace when tracing.
        let span = durability.tracer.map { $0.startSpan(SpanNames.commit, context: ServiceContext.current ?? .topLevel) }
        defer { span?.end() }
        do {
            try await durability.awaitDurable()
        } catch {
            span?.setStatus(SpanStatus(code: .error, message: error.description))
            throw .notDurable(token: token, reason: error.description)
        }
    }

    /// Calls `body` with each settled rendering's printable frame until it returns `false`.
    public func forEachFrame(_ body: (RenderedFrame) async -> Bool) async {
        for await encoded in published.subscribe() {
            guard await body(frames(encoded.rendering, encoded.json)) else { return }
        }
    }

    /// The root host's tree snapshot.
    public func snapshot() async -> TreeSnapshot {
        await host.snapshot()
    }

    /// The root host's live tree.
    public func liveTree() async -> [WorkflowTreeNode] {
        await host.liveTree()
    }

    /// Stops the root's host and ends every rendering stream.
    public func stop() async {
        // The last checkpoint first (everything accepted so far), while the tree still runs.
        durability?.stop()
        await committing?.value
        await host.stop()
        published.finish()
        publishedJSON.finish()
    }

    /// Commits the last checkpoint and ends every rendering stream, leaving the tree to be torn
    /// down when the host is freed (see `ClusterRootSession.stopAtExit()`).
    public func stopAtExit() async {
        durability?.stop()
        await committing?.value
        published.finish()
        publishedJSON.finish()
    }

}

/// Encodes one root's renderings to JSON, counting them, and reports failures once per change
/// of outcome (a rendering that cannot be encoded on every frame must not flood the log).
private final class RenderingEncoder: Sendable {
    private struct State {
        var sequence: UInt64 = 0
        var failing = false
    }

    private let root: String
    private let logger: Logger
    private let tokenMark: String?
    private let state = Mutex(State())

    /// An encoder numbering renderings after `sequence` (a restored coordinator's last one).
    init(root: String, logger: Logger, tokenMark: String?, after sequence: UInt64 = 0) {
        self.root = root
        self.logger = logger
        self.tokenMark = tokenMark
        state.withLock { $0.sequence = sequence }
    }

    /// The sequence number of the latest encoded rendering.
    var latestSequence: UInt64 { state.withLock { $0.sequence } }

    /// The rendering's JSON and the sinks it carries, or `nil` (logged) if it cannot be encoded.
    func encode<Rendering: Encodable>(_ rendering: Rendering) -> (RootRenderingJSON, [String: SinkTokenTable.Delivery])? {
        do {
            let (data, deliveries) = try Self.json(of: rendering, tokenMark: tokenMark)
            let sequence = state.withLock { state in
                if state.failing {
                    state.failing = false
                    logger.notice("the root's renderings encode to JSON again", metadata: ["root": "\(root)"])
                }
                state.sequence += 1
                return state.sequence
            }
            return (RootRenderingJSON(sequence: sequence, json: data), deliveries)
        } catch {
            let first = state.withLock { state in
                defer { state.failing = true }
                return !state.failing
            }
            if first {
                logger.error(
                    "a rendering of the root cannot be encoded to JSON; serving the previous one: \(error)",
                    metadata: ["root": "\(root)"])
            }
            return nil
        }
    }
}

extension RenderingEncoder {
    /// The rendering's JSON (keys sorted, `/` unescaped) and the sinks it carries: written by
    /// `DirectJSONEncoder`, or by `JSONEncoder` when the rendering holds what only it writes
    /// exactly (a floating-point number, a date, …) or its encoding fails (the error is then
    /// `JSONEncoder`'s). The same bytes either way; the direct way costs about half as much, on
    /// every settled rendering of every tree.
    fileprivate static func json<Rendering: Encodable>(
        of rendering: Rendering, tokenMark: String?
    ) throws -> (Data, [String: SinkTokenTable.Delivery]) {
        let exporter = RenderingSinkExporter(treeMark: tokenMark)
        if let bytes = try? DirectJSONEncoder(escapingSlashes: false, userInfo: [.workflowSinkExporter: exporter]).encode(rendering) {
            return (Data(bytes), exporter.deliveries)
        }
        // A fresh exporter: the direct attempt may have stopped halfway.
        let fallback = RenderingSinkExporter(treeMark: tokenMark)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.userInfo[.workflowSinkExporter] = fallback
        return (try encoder.encode(rendering), fallback.deliveries)
    }
}

/// A settled rendering waiting for the checkpoint that makes it durable (the latest only: an
/// older one it replaces was never shown and never needs to be).
private final class PendingPublication<Value: Sendable>: Sendable {
    private let value = Mutex<Value?>(nil)

    func set(_ new: Value) { value.withLock { $0 = new } }

    func take() -> Value? { value.withLock { $0.take() } }
}
