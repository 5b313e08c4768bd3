import Foundation
import Logging
import Synchronization
@_spi(WorkflowRuntime) import Workflow

/// Hosts any root workflow whose rendering is `Encodable` and shows it as JSON.
///
/// Each settled rendering is encoded on the host's loop as soon as it is published, with a
/// `JSONEncoder` whose sink exporter (see `SinkCoding.swift`) writes every sink as its token and
/// records where the token delivers. So the JSON a client reads and the tokens it may send to
/// always belong to the same rendering, and the coordinator needs no knowledge of the root's
/// types. Typed code in the same process can still use `host` directly.
public final class WorkflowRootSession<Root: Workflow & Sendable>: ClusterRootSession
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

    /// Starts `workflow` (from `snapshot` when restoring) on `loop` and encodes its first
    /// rendering before returning.
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
    public init(
        name: String, workflow: Root, snapshot: TreeSnapshot? = nil, loop: (any RuntimeLoop)? = nil,
        observers: [any WorkflowObserver] = [], frames: (@Sendable (Root.Rendering, RootRenderingJSON) -> RenderedFrame)? = nil,
        logger: Logger = Logger(label: "workflow.cluster.root"), retainedTokens: Int = 4096
    ) {
        self.name = name
        self.frames = frames ?? { _, json in RenderedFrame.generic(root: name, rendering: json) }
        let published = LatestValueBroadcast<Encoded>()
        let publishedJSON = LatestValueBroadcast<RootRenderingJSON>()
        let tokens = SinkTokenTable(retainedLimit: retainedTokens)
        self.published = published
        self.publishedJSON = publishedJSON
        self.tokens = tokens
        let encoder = RenderingEncoder(root: name, logger: logger)
        host = WorkflowHost(
            workflow: workflow, observers: observers, snapshot: snapshot, loop: loop,
            listener: HostListener(
                onRendering: { rendering in
                    guard let (json, deliveries) = encoder.encode(rendering) else { return }
                    // Tokens first: once a client can read the JSON, its tokens deliver.
                    tokens.install(deliveries)
                    published.publish(Encoded(rendering: rendering, json: json))
                    publishedJSON.publish(json)
                },
                onOutput: { _ in }))
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
    public func send(event json: Data, to token: String) throws(RootEventError) {
        let delivery = try tokens.delivery(for: token).get()
        let accepted: Bool
        do {
            accepted = try JSONEventDelivery.deliver(json, through: delivery)
        } catch {
            throw .undecodableEvent(token: token, reason: Self.reason(error))
        }
        guard accepted else { throw .refused(token: token) }
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
        await host.stop()
        published.finish()
        publishedJSON.finish()
    }

    /// Words for a decoding failure (which key, what was expected), not the error's dump.
    private static func reason(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "" : " at \(keys.joined(separator: "."))"
        }
        switch error {
        case .typeMismatch(let type, let context): return "expected \(type)\(path(context))"
        case .valueNotFound(let type, let context): return "missing \(type) value\(path(context))"
        case .keyNotFound(let key, let context): return "missing key \"\(key.stringValue)\"\(path(context))"
        case .dataCorrupted(let context): return "\(context.debugDescription)\(path(context))"
        @unknown default: return "\(error)"
        }
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
    private let state = Mutex(State())

    init(root: String, logger: Logger) {
        self.root = root
        self.logger = logger
    }

    /// The rendering's JSON and the sinks it carries, or `nil` (logged) if it cannot be encoded.
    func encode<Rendering: Encodable>(_ rendering: Rendering) -> (RootRenderingJSON, [String: SinkTokenTable.Delivery])? {
        let exporter = RenderingSinkExporter()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.userInfo[.workflowSinkExporter] = exporter
        do {
            let data = try encoder.encode(rendering)
            let sequence = state.withLock { state in
                if state.failing {
                    state.failing = false
                    logger.notice("the root's renderings encode to JSON again", metadata: ["root": "\(root)"])
                }
                state.sequence += 1
                return state.sequence
            }
            return (RootRenderingJSON(sequence: sequence, json: data), exporter.deliveries)
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
