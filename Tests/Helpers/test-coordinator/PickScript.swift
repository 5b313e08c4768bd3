import Foundation
import RemoteTestSupport
import WorkflowCluster
import WorkflowRemote

/// Picks ids in order by sending each to the list pane's sink token, as a client of the gateway
/// would, each once a frame shows the previous pick in the detail pane rendered by a worker (so
/// the frames' picks grow one at a time, in order: what the network-lab tests check for lost and
/// repeated events). Prints every frame itself, so the picks' log lines fall between them.
struct PickScript: RootCompanion {
    var ids: [Int]
    var keepServing: Bool

    /// The part of a `list-detail` frame the script reads.
    private struct Frame: Decodable {
        struct Rendering: Decodable {
            var list: ListPane
            var detail: DetailPane
        }
        struct ListPane: Decodable {
            var ids: [Int]
            var onPick: String?
            var renderedBy: String
        }
        struct DetailPane: Decodable {
            var id: Int?
            var renderedBy: String
        }
        var rendering: Rendering
    }

    var printsFrames: Bool { true }

    /// Waits until every configured worker joined, so the first pick lands on a complete tree.
    func prepare(runtime: RemoteRuntime, context: CoordinatorContext) async throws {
        await runtime.waitForWorkers(count: context.configuration.workers.count)
    }

    func run(session: any ClusterRootSession, context: CoordinatorContext) async throws -> RootCompanionEnd {
        var pending = ids[...]
        var awaited: Int?
        await session.forEachFrame { frame in
            context.console.print(frame)
            guard let screen = try? JSONDecoder().decode(Frame.self, from: Data(frame.json.utf8)).rendering,
                screen.list.renderedBy != unavailableProcess, screen.detail.renderedBy != unavailableProcess,
                awaited == nil || screen.detail.id == awaited, let token = screen.list.onPick
            else { return true }
            guard let next = pending.popFirst() else { return false }
            awaited = next
            context.logger.info("script: picking \(next)")
            do {
                try await session.send(event: Data("\(next)".utf8), to: token)
            } catch {
                context.logger.error("script: the pick of \(next) was refused: \(error)")
                return false
            }
            return true
        }
        // A cancelled script (the coordinator stopping on a signal) is not a failure.
        return keepServing && !Task.isCancelled ? .keepServing : .stopCoordinator
    }
}
