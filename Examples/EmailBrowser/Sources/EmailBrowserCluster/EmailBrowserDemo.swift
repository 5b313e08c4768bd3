import Logging
import WorkflowCluster
import EmailBrowser
import WorkflowRemote

/// The email browser's scripted demo (`--demo-selections 3,1,4`): once every configured worker
/// joined, selects each message in turn through the inbox's sink, waiting for the screen that
/// shows it rendered by the workers, printing every screen; then stops the coordinator (or keeps
/// it serving with `--serve-after-demo`).
public struct EmailBrowserDemo: RootCompanion {
    /// The message ids to select, in order.
    public var selections: [Int]
    /// After the last selection, keep serving instead of stopping the coordinator.
    public var serveAfterDemo: Bool
    /// How long one step may take before the demo fails (only fires when something is broken).
    public var stepTimeout: Duration

    /// Creates the demo.
    public init(selections: [Int], serveAfterDemo: Bool = false, stepTimeout: Duration = .seconds(60)) {
        self.selections = selections
        self.serveAfterDemo = serveAfterDemo
        self.stepTimeout = stepTimeout
    }

    /// Why the demo failed.
    public enum Failure: Error, CustomStringConvertible {
        /// A step did not complete within its timeout.
        case stalled(String)
        /// The coordinator's root is not the email browser.
        case notTheEmailBrowser(String)

        /// A one-line explanation for the log.
        public var description: String {
            switch self {
            case .stalled(let step): "the demo stalled: \(step)"
            case .notTheEmailBrowser(let root): "the demo needs the email-browser root, not \"\(root)\""
            }
        }
    }

    /// The demo prints the screens itself, so its notes appear between them in order.
    public var printsFrames: Bool { true }

    /// Waits (bounded) until every configured worker joined, so the first screen is already the
    /// split one.
    public func prepare(runtime: RemoteRuntime, context: CoordinatorContext) async throws {
        let count = context.configuration.workers.count
        guard count > 0 else { return }
        context.logger.info("demo: waiting for \(count) workers")
        let timeout = stepTimeout
        let joined = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await runtime.waitForWorkers(count: count)
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
        guard joined else { throw Failure.stalled("fewer than \(count) workers joined in time") }
    }

    /// Runs the selections (bounded by the step timeout per selection); stops the coordinator
    /// afterwards unless `serveAfterDemo`.
    public func run(session: any ClusterRootSession, context: CoordinatorContext) async throws -> RootCompanionEnd {
        guard let browser = session as? WorkflowRootSession<EmailBrowserWorkflow> else {
            throw Failure.notTheEmailBrowser(session.name)
        }
        let timeout = stepTimeout * max(1, selections.count + 1)
        let finished = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await select(in: browser, context: context) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
        // A cancelled demo (the coordinator stopping on a signal) is not a failure.
        if Task.isCancelled { return .stopCoordinator }
        guard finished else { throw Failure.stalled("not every selection was rendered by the workers in time") }
        return serveAfterDemo ? .keepServing : .stopCoordinator
    }

    /// Waits for a complete screen, then selects each id in turn, waiting for the screen that
    /// shows it; prints every screen. Returns whether every selection was shown.
    private func select(in browser: WorkflowRootSession<EmailBrowserWorkflow>, context: CoordinatorContext) async -> Bool {
        var pending = selections[...]
        var awaited: Int?
        var previous: RenderedFrame?
        for await screen in browser.host.renderings {
            let frame = EmailBrowserFrames.frame(of: screen)
            if frame != previous || context.console.printMode == .json { context.console.print(frame) }
            previous = frame
            guard EmailBrowserFrames.isComplete(screen), awaited == nil || screen.message.messageID == awaited else { continue }
            guard let next = pending.popFirst() else { return true }
            awaited = next
            context.console.note("demo: selecting message \(next)")
            context.logger.info("demo: selecting message \(next)")
            guard screen.inbox.messages.contains(where: { $0.id == next }) else {
                context.logger.error("demo: message \(next) is not in the inbox")
                return false
            }
            screen.inbox.onMessageSelected.send(next)
        }
        return false
    }
}
